import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FacilitatorResponseError } from '@x402/core/server';
import { CreditFacilitatorClient, FacilitatorCredentialError } from '@credit-facilitator/x402-credit';
import { SAMPLE } from '@credit-facilitator/wire/testing';

const apiKey = `sk_live_${'x'.repeat(43)}`;
const SUPPORTED = { kinds: [{ x402Version: 2, scheme: 'credit', network: 'eip155:84532', extra: { asset: SAMPLE.asset } }], extensions: [], signers: {} };
const ME = { merchantId: SAMPLE.merchantId, credential: { type: 'api_key', id: 'k1' }, permissions: ['x402:settle:create', 'x402:settle:read'], limits: {} };
const UNAUTHENTICATED = { error: { code: 'UNAUTHENTICATED', message: 'Send a valid merchant credential.', requestId: 'req_1' } };

type Route = (req: IncomingMessage) => [number, unknown];

async function facilitator(routes: Record<string, Route>): Promise<{ baseUrl: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').replace('/api/v1', '');
    seen.push(`${req.method} ${path}`);
    const [status, body] = routes[`${req.method} ${path}`]?.(req) ?? [404, { error: { code: 'NOT_FOUND', message: 'No such route.', requestId: 'r' } }];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, seen, server };
}

function recordingLogger() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => lines.push({ level, msg, fields });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('x402-credit: CreditFacilitatorClient checks its key at start', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));
  const start = async (routes: Record<string, Route>) => {
    const f = await facilitator({ 'GET /facilitator/supported': () => [200, SUPPORTED], ...routes });
    servers.push(f.server);
    return f;
  };

  it('a refused key fails the first getSupported (x402 middleware initialize) and logs the fix; the next call asks again', async () => {
    const f = await start({ 'GET /facilitator/me': (req) => (req.headers.authorization === `Bearer ${apiKey}` ? [401, UNAUTHENTICATED] : [500, {}]) });
    const { lines, logger } = recordingLogger();
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, logger });
    await assert.rejects(client.getSupported(), (err: unknown) => {
      assert.ok(err instanceof FacilitatorCredentialError && err instanceof FacilitatorResponseError, String(err));
      assert.match(err.message, /refused this merchant API key \(401 UNAUTHENTICATED\)/);
      assert.match(err.message, /key issue --merchant/);
      assert.ok(!err.message.includes(apiKey), 'never echoes the key');
      return true;
    });
    const error = lines.find((l) => l.level === 'error');
    assert.equal(error?.msg, 'merchant API key refused');
    assert.match(String(error?.fields.fix), /Fix: configure the sk_live_ key/);
    assert.equal(error?.fields.component, 'credit-facilitator-client');
    assert.ok(!f.seen.includes('GET /facilitator/supported'), 'supported is not asked with a refused key');
    await assert.rejects(client.getSupported(), FacilitatorCredentialError);
    assert.equal(f.seen.filter((s) => s === 'GET /facilitator/me').length, 2, 'a failed check is asked again');
  });

  it('a good key is checked once and logged with its merchant', async () => {
    const f = await start({ 'GET /facilitator/me': () => [200, ME] });
    const { lines, logger } = recordingLogger();
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, logger, merchantId: SAMPLE.merchantId });
    await client.getSupported();
    await client.getSupported();
    assert.equal(f.seen.filter((s) => s === 'GET /facilitator/me').length, 1);
    assert.deepEqual(lines.map((l) => [l.level, l.msg]), [['info', 'merchant API key accepted']]);
    assert.equal(lines[0]?.fields.merchantId, SAMPLE.merchantId);
  });

  it("refuses another merchant's key, and a key without capture", async () => {
    const other = await start({ 'GET /facilitator/me': () => [200, { ...ME, merchantId: '66666666-6666-4666-8666-666666666666' }] });
    const client = new CreditFacilitatorClient({ baseUrl: other.baseUrl, apiKey, merchantId: SAMPLE.merchantId });
    await assert.rejects(client.checkCredential(), /belongs to merchant 66666666-.*recipient_mismatch/);
    const readOnly = await start({ 'GET /facilitator/me': () => [200, { ...ME, permissions: ['x402:settle:read'] }] });
    await assert.rejects(new CreditFacilitatorClient({ baseUrl: readOnly.baseUrl, apiKey }).checkCredential(), /lacks x402:settle:create/);
  });

  it('a facilitator without /me (older) or unreachable only warns; checkCredentialOnStart: false skips the check', async () => {
    const f = await start({});
    const { lines, logger } = recordingLogger();
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, logger });
    assert.equal((await client.getSupported()).kinds[0]?.scheme, 'credit');
    assert.equal(lines[0]?.level, 'warn');
    const quiet = await start({ 'GET /facilitator/me': () => [401, UNAUTHENTICATED] });
    await new CreditFacilitatorClient({ baseUrl: quiet.baseUrl, apiKey, checkCredentialOnStart: false }).getSupported();
    assert.deepEqual(quiet.seen, ['GET /facilitator/supported']);
  });

  it('a 401 at verify or capture is logged as an error naming the fix (the payer sees only a 502)', async () => {
    const f = await start({ 'POST /facilitator/verify': () => [401, UNAUTHENTICATED], 'POST /facilitator/capture': () => [403, { error: { code: 'FORBIDDEN', message: 'no', requestId: 'r', requiredPermission: 'x402:settle:create' } }] });
    const { lines, logger } = recordingLogger();
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, logger });
    const payload = { x402Version: 2, accepted: {}, payload: {} } as never;
    const requirements = { scheme: 'credit', network: 'eip155:84532', asset: SAMPLE.asset, amount: '1', payTo: SAMPLE.payTo, maxTimeoutSeconds: 60, extra: {} } as never;
    await assert.rejects(client.verify(payload, requirements), FacilitatorResponseError);
    await assert.rejects(client.capture(payload, requirements), FacilitatorResponseError);
    const errors = lines.filter((l) => l.level === 'error');
    assert.deepEqual(errors.map((l) => l.msg), ['merchant API key refused', 'merchant API key lacks a permission']);
    assert.match(String(errors[0]?.fields.fix), /key issue --merchant/);
    assert.match(String(errors[1]?.fields.fix), /lacks x402:settle:create/);
  });

  it('falls back to warn for a logger without error', async () => {
    const f = await start({ 'GET /facilitator/me': () => [401, UNAUTHENTICATED] });
    const warned: string[] = [];
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, logger: { info() {}, warn: (m) => warned.push(m) } });
    await assert.rejects(client.checkCredential(), FacilitatorCredentialError);
    assert.deepEqual(warned, ['merchant API key refused']);
  });
});
