import assert from 'node:assert/strict';
import { existsSync, statSync, utimesSync } from 'node:fs';
import { bundlePath, freshBundle, tracedBundlePath, tracingInterceptorsModule, workflowCode, workflowsPath } from '../../workers/workflow-code.js';

describe('the workflow bundle npm run build writes', function () {
  it('is what a worker loads while no compiled workflow input is newer; a stale one is ignored', function () {
    if (!existsSync(bundlePath)) this.skip(); // `tsc` alone: the worker bundles at start
    assert.equal(freshBundle(), bundlePath);
    assert.deepEqual(workflowCode(), { workflowBundle: { codePath: bundlePath } });
    assert.deepEqual(workflowCode(true), { workflowBundle: { codePath: tracedBundlePath } });
    const { atime, mtime } = statSync(workflowsPath);
    const later = new Date(statSync(bundlePath).mtimeMs + 60_000);
    try {
      utimesSync(workflowsPath, later, later);
      assert.equal(freshBundle(), undefined);
      assert.deepEqual(workflowCode(), { workflowsPath, bundlerOptions: { ignoreModules: [] } });
      assert.deepEqual(workflowCode(true), { workflowsPath, bundlerOptions: { ignoreModules: [] }, interceptors: { workflowModules: [tracingInterceptorsModule] } });
    } finally {
      utimesSync(workflowsPath, atime, mtime);
    }
  });
});
