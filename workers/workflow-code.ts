import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/**
 * The workflow code a worker loads. `npm run build` bundles it once (webpack, about 3 s of CPU) into
 * dist/workflow-bundle.js; every worker start and restart then loads that file instead of bundling
 * again. A bundle older than any compiled file it may contain (a `tsc` without the bundle step) is
 * ignored, and the worker bundles at start as before.
 */
const here = dirname(fileURLToPath(import.meta.url));
const distRoot = join(here, '..');
export const workflowsPath = join(distRoot, 'workflows', 'index.js');
export const bundlePath = join(distRoot, 'workflow-bundle.js');
/**
 * The same workflows with Temporal's OpenTelemetry workflow interceptors, which must be bundled in:
 * a worker with tracing on loads this one, so a worker without it runs no interceptor at all.
 */
export const tracedBundlePath = join(distRoot, 'workflow-bundle-traced.js');
export const tracingInterceptorsModule = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
/** The compiled folders workflow code imports from (workflows and the pure parts of src). */
const INPUT_DIRS = ['workflows', 'src'];

/** No module is ignored: the bundle fails loudly if workflow code reaches a Node module. */
const ignoreModules: string[] = [];

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtimeMs(path));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

export function freshBundle(path = bundlePath): string | undefined {
  if (!existsSync(path)) return undefined;
  const built = statSync(path).mtimeMs;
  return INPUT_DIRS.every((d) => newestMtimeMs(join(distRoot, d)) <= built) ? path : undefined;
}

export type WorkflowCode =
  | { workflowBundle: { codePath: string } }
  | { workflowsPath: string; bundlerOptions: { ignoreModules: string[] }; interceptors?: { workflowModules: string[] } };

/** The bundle to load, or what to bundle at start; `traced`: with the OpenTelemetry workflow interceptors. */
export function workflowCode(traced = false): WorkflowCode {
  const codePath = freshBundle(traced ? tracedBundlePath : bundlePath);
  if (codePath) return { workflowBundle: { codePath } };
  return { workflowsPath, bundlerOptions: { ignoreModules }, ...(traced ? { interceptors: { workflowModules: [tracingInterceptorsModule] } } : {}) };
}

export async function buildWorkflowBundle(traced = false): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
    ignoreModules,
    ...(traced ? { workflowInterceptorModules: [tracingInterceptorsModule] } : {}),
    logger: new DefaultLogger('WARN'),
  });
}
