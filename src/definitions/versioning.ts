/**
 * Worker versioning: how each workflow type moves between builds of the worker, and the names a worker
 * deployment's runs are found by. Safe to import from workflow code (no I/O, no Node modules).
 *
 * A PINNED run stays on the build that started it until it ends: its code may change freely between builds,
 * at the cost of keeping the old build's workers until its last run ends. An AUTO_UPGRADE run moves to the
 * current build at its next workflow task and replays its history there: every change to its code must replay
 * the histories of the builds before it (`patched()`, as workflows/campaign-patches.ts does).
 */
import type { VersioningBehavior } from '@temporalio/common';

/** Every workflow type the worker registers, with its versioning behaviour and the reason for it. */
export const WORKFLOW_VERSIONING = {
  sendSms: {
    behavior: 'PINNED',
    why: 'ends within its wait window (hours at most) once the provider reports a final state',
  },
  awaitMessage: {
    behavior: 'PINNED',
    why: "ends within its wait window for a message's final state",
  },
  otpVerification: {
    behavior: 'PINNED',
    why: 'ends when its code expires (minutes)',
  },
  voiceCall: {
    behavior: 'PINNED',
    why: 'ends with the call (minutes)',
  },
  followVoiceCall: {
    behavior: 'PINNED',
    why: 'ends with the call it follows (minutes)',
  },
  smsCampaign: {
    behavior: 'AUTO_UPGRADE',
    why:
      "lives for days (a send window held to recipients' local hours, pauses) and continues as new: pinned, it " +
      'would hold its first build for its whole life. Changes stay replay-safe under patched() gates',
  },
  checkContacts: {
    behavior: 'AUTO_UPGRADE',
    why:
      'lives as long as its list takes at the provider rate (hours for a large list, shared with campaigns) and ' +
      'continues as new, like a campaign; its small code changes stay replay-safe under patched() gates',
  },
} as const satisfies Record<string, { behavior: VersioningBehavior; why: string }>;

export type MsgflowWorkflowType = keyof typeof WORKFLOW_VERSIONING;

export const MSGFLOW_WORKFLOW_TYPES = Object.keys(WORKFLOW_VERSIONING) as MsgflowWorkflowType[];

/**
 * When a worker makes its own build current: `always` on start (`msgflow dev`, tests), `if-none` only when the
 * deployment has no current version yet (a first install), `never` (every promotion is the operator's).
 */
export const MAKE_CURRENT_MODES = ['always', 'if-none', 'never'] as const;
export type MakeCurrentMode = (typeof MAKE_CURRENT_MODES)[number];

/** The worker deployment msgflow's workers join unless MSGFLOW_DEPLOYMENT_NAME names another. */
export const DEFAULT_DEPLOYMENT_NAME = 'msgflow';

/**
 * The value of Temporal's `TemporalWorkerDeploymentVersion` search attribute for runs on a build
 * (`<deployment>:<build id>`), which the visibility store counts them by.
 */
export function deploymentVersionSearchValue(deploymentName: string, buildId: string): string {
  return `${deploymentName}:${buildId}`;
}
