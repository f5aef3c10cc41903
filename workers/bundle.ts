import { writeFileSync } from 'node:fs';
import { bundlePath, buildWorkflowBundle } from './workflow-code.js';

/** `npm run build`'s last step: the workflow bundle every worker start loads (workers/workflow-code.ts). */
const started = Date.now();
const { code } = await buildWorkflowBundle();
writeFileSync(bundlePath, code);
process.stdout.write(`workflow bundle: ${(code.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms -> ${bundlePath}\n`);
