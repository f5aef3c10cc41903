import { writeFileSync } from 'node:fs';
import { bundlePath, buildWorkflowBundle, tracedBundlePath } from './workflow-code.js';

/** `npm run build`'s last step: the workflow bundles every worker start loads (workers/workflow-code.ts), untraced and traced. */
for (const [traced, path] of [[false, bundlePath], [true, tracedBundlePath]] as const) {
  const started = Date.now();
  const { code } = await buildWorkflowBundle(traced);
  writeFileSync(path, code);
  process.stdout.write(`workflow bundle${traced ? ' (traced)' : ''}: ${(code.length / 1024).toFixed(0)} KiB in ${Date.now() - started} ms -> ${path}\n`);
}
