// Without the optional peers, the parts that need them fail with an error naming the package to install.
import { openMessageStore } from 'msgflow';
import { startSandbox } from 'msgflow/sandbox';
import { bundleMsgflowWorkflows } from 'msgflow/worker';

const attempts = [
  () => startSandbox({ port: 0, db: ':memory:' }),
  () => bundleMsgflowWorkflows(),
  () => openMessageStore({ file: ':memory:' }),
  () => openMessageStore({ url: 'postgres://msgflow@127.0.0.1:1/msgflow' }),
];
const errors = [];
for (const attempt of attempts) {
  try {
    await attempt();
    errors.push({ name: 'no error', message: '' });
  } catch (error) {
    errors.push({ name: error.name, message: error.message });
  }
}
console.log(JSON.stringify(errors));
