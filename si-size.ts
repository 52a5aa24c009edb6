import { bundleMsgflowWorkflows } from './src/worker.js';
const { code } = await bundleMsgflowWorkflows();
console.log('bundle bytes', code.length);
