/**
 * The workflows of a versioned worker (one in a Temporal Worker Deployment): every workflow of index.ts, each
 * with its versioning behaviour as src/definitions/versioning.ts declares it (and why). An unversioned worker
 * bundles index.ts instead: the server refuses a workflow task completed with a versioning behaviour by a
 * worker outside a deployment. The behaviours change no command, so both bundles replay the same histories.
 */
import { setWorkflowOptions, type Workflow } from '@temporalio/workflow';
import { type MsgflowWorkflowType, WORKFLOW_VERSIONING } from '../src/definitions/versioning.js';
import * as workflows from './index.js';

export * from './index.js';

// A workflow of index.ts without its versioning entry, or an entry without its workflow, fails to compile.
const WORKFLOWS: Record<MsgflowWorkflowType, Workflow> = workflows;
const everyWorkflowDeclared: [Exclude<keyof typeof workflows, MsgflowWorkflowType>] extends [never] ? true : never =
  true;

if (everyWorkflowDeclared)
  for (const type of Object.keys(WORKFLOW_VERSIONING) as MsgflowWorkflowType[])
    setWorkflowOptions({ versioningBehavior: WORKFLOW_VERSIONING[type].behavior }, WORKFLOWS[type]);
