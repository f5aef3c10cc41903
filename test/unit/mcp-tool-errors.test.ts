import assert from 'node:assert/strict';
import { MongoNetworkError, MongoServerError } from 'mongodb';
import { z } from 'zod';
import type { AppDeps } from '../../src/main/app-deps.js';
import { CallRecord } from '../../src/mcp/call-record.js';
import { defineTool, runTool } from '../../src/mcp/tools/define.js';
import { createLogger } from '../../src/observability/logger.js';

/** A tool whose service function fails with `err`: what the agent sees is the point. */
const failingTool = (err: unknown) =>
  defineTool({
    name: 'get_borrower_status',
    title: 'test',
    description: 'test',
    inputSchema: z.object({}),
    annotations: {},
    run: () => Promise.reject(err),
    summarize: () => '',
  });

async function errorOf(err: unknown): Promise<{ code: string; message: string }> {
  const record = new CallRecord();
  const rt = { deps: { logger: createLogger('silent') } as unknown as AppDeps, record, requestId: 'req_unit' };
  const principal = { borrowerId: 'b', clientId: 'c', scopes: ['borrower:token'], expiresAt: 0 };
  const r = await runTool(failingTool(err), rt, {}, { authInfo: { token: 't', clientId: 'c', scopes: [], extra: { principal } }, requestId: 1 });
  assert.equal(r.isError, true);
  return (JSON.parse((r.content as { text: string }[])[0]!.text) as { error: { code: string; message: string } }).error;
}

describe('mcp tools: a dependency away is UNAVAILABLE (retry), a bug is INTERNAL', function () {
  it('the store unreachable or failing over answers UNAVAILABLE', async function () {
    assert.equal((await errorOf(new MongoNetworkError('connection reset'))).code, 'UNAVAILABLE');
    assert.equal((await errorOf(new MongoServerError({ message: 'not primary', errmsg: 'not primary', code: 10107 }))).code, 'UNAVAILABLE');
  });

  it('anything else answers INTERNAL with the request id, no detail', async function () {
    const e = await errorOf(new TypeError('secret detail'));
    assert.equal(e.code, 'INTERNAL');
    assert.ok(!e.message.includes('secret detail'));
    assert.ok(e.message.includes('req_unit'));
  });
});
