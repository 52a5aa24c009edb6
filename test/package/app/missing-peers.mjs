// Without the optional peers, the parts that need them fail with an error naming the package to install.
import { startSandbox } from 'msgflow/sandbox';
import { bundleMsgflowWorkflows } from 'msgflow/worker';

const errors = [];
for (const attempt of [() => startSandbox({ port: 0, db: ':memory:' }), () => bundleMsgflowWorkflows()]) {
  try {
    await attempt();
    errors.push({ name: 'no error', message: '' });
  } catch (error) {
    errors.push({ name: error.name, message: error.message });
  }
}
console.log(JSON.stringify(errors));
