import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { call, capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import { freePort } from '../../tools/stack/processes.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

const ADMIN_CLI = fileURLToPath(new URL('../../tools/cli/admin.js', import.meta.url));

/** `npm run admin -- webhook listen …` as a child, with what it printed so far and how it ended. */
function listen(args: string[], env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, [ADMIN_CLI, 'webhook', 'listen', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out, exited };
}

async function until(what: string, ms: number, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('webhooks in development mode: a loopback receiver from the admin CLI gets signed deliveries', function () {
  this.timeout(300_000);
  // What npm start runs: NODE_ENV=development with DEV_TOOLS=true, and no WEBHOOK_ALLOW_PRIVATE.
  const env = useIsolatedStack({ env: { NODE_ENV: 'development', DEV_TOOLS: 'true', WEBHOOK_ALLOW_PRIVATE: 'false', SETTLEMENT_SHARDS: '1' } });
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;
  let strictApi: ExtraApi | undefined;

  before(async function () {
    w = env().world;
    [m, b] = await Promise.all([newMerchant(w, 'Dev webhook merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
  });
  after(async function () {
    await strictApi?.stop();
  });

  it('registers http://127.0.0.1:<port>/webhooks, and `webhook listen` verifies and prints the payment.confirmed delivery', async function () {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/webhooks`;
    const registered = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url } });
    assert.equal(registered.status, 201, JSON.stringify(registered.json));
    const secret = registered.json.secret as string;

    // Still refused in development mode: private addresses, and http to anything but loopback.
    for (const bad of ['https://10.1.2.3/h', 'http://10.1.2.3/h', 'http://[::ffff:0:127.0.0.1]/h', 'https://[::127.0.0.1]/h', `http://[::ffff:127.0.0.1]:${port}/h`]) {
      const res = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url: bad } });
      assert.equal(res.status, 400, `${bad}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.error.code, 'INVALID_REQUEST');
    }

    const listener = listen(['--secret', secret, '--port', String(port), '--max-events', '1', '--json']);
    try {
      await until('the listener', 30_000, () => listener.out.stderr.includes(`listening on ${url}`));
      // A delivery it cannot verify is answered 401 and not printed.
      const forged = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': 'evt_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` },
        body: JSON.stringify({ type: 'payment.confirmed', timestamp: new Date().toISOString(), data: {} }),
      });
      assert.equal(forged.status, 401);

      const v = await newVoucher(w, m, b, '2100');
      const captured = await capture(w, m, v.captureBody, v.idempotencyKey);
      assert.equal(captured.status, 200, JSON.stringify(captured.json));
      const paymentId = captured.json.receipt.paymentId as string;
      await pollUntil(w, m, paymentId, 'CONFIRMED');

      assert.equal(await Promise.race([listener.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]), 0, listener.out.stderr);
      const lines = listener.out.stdout.trim().split('\n');
      assert.equal(lines.length, 1, listener.out.stdout);
      const event = JSON.parse(lines[0]!) as { webhookId: string; type: string; data: { paymentId: string; status: string; transaction?: string } };
      assert.equal(event.type, 'payment.confirmed');
      assert.equal(event.webhookId, `evt_${paymentId.replace(/-/g, '')}_confirmed`);
      assert.equal(event.data.paymentId, paymentId);
      assert.equal(event.data.status, 'CONFIRMED');
      assert.match(event.data.transaction ?? '', /^0x[0-9a-f]{64}$/);
      assert.deepEqual(JSON.parse(listener.out.stderr.slice(listener.out.stderr.indexOf('{'))), { url, received: 1, rejected: 1 });
      assert.match(listener.out.stderr, /rejected POST \/webhooks: the signature does not verify/);
    } finally {
      listener.child.kill();
      await listener.exited;
    }
  });

  it('`webhook listen` reads WEBHOOK_SECRET (its --help says so), prints the test event, and names the secret a delivery for another endpoint failed against', async function () {
    const help = execFileSync(process.execPath, [ADMIN_CLI, 'webhook', 'listen', '--help'], { encoding: 'utf8' });
    assert.match(help, /WEBHOOK_SECRET/);
    assert.match(help, /another endpoint/);

    const port = await freePort();
    const url = `http://127.0.0.1:${port}/webhooks`;
    const register = async () => {
      const res = await call(w, 'POST', '/facilitator/webhook-endpoints', { token: m.apiKey, body: { url } });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      return { id: res.json.endpoint.id as string, secret: res.json.secret as string };
    };
    const [mine, other] = [await register(), await register()];
    const listener = listen(['--endpoint', mine.id, '--port', String(port), '--max-events', '1', '--json'], { WEBHOOK_SECRET: mine.secret });
    try {
      await until('the listener', 30_000, () => listener.out.stderr.includes(`listening on ${url}`));
      assert.match(listener.out.stderr, new RegExp(`verifying with the secret from WEBHOOK_SECRET \\(sha256 [0-9a-f]{8}…\\) of endpoint ${mine.id}`));

      const foreign = await call(w, 'POST', `/facilitator/webhook-endpoints/${other.id}/test`, { token: m.apiKey });
      assert.equal(foreign.status, 202, JSON.stringify(foreign.json));
      await until('the rejected delivery', 30_000, () => listener.out.stderr.includes(foreign.json.eventId as string));
      const rejection = listener.out.stderr.split('\n').find((l) => l.includes(foreign.json.eventId as string))!;
      assert.match(rejection, new RegExp(`does not verify with the secret from WEBHOOK_SECRET \\(sha256 [0-9a-f]{8}…\\) of endpoint ${mine.id}`));
      assert.match(rejection, /a delivery signed for another endpoint .* looks like this/);
      await call(w, 'DELETE', `/facilitator/webhook-endpoints/${other.id}`, { token: m.apiKey });

      const own = await call(w, 'POST', `/facilitator/webhook-endpoints/${mine.id}/test`, { token: m.apiKey });
      assert.equal(own.status, 202, JSON.stringify(own.json));
      assert.equal(await Promise.race([listener.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]), 0, listener.out.stderr);
      const event = JSON.parse(listener.out.stdout.trim()) as { webhookId: string; type: string; data: { test: boolean; endpointId: string } };
      assert.deepEqual([event.webhookId, event.type, event.data.test, event.data.endpointId], [own.json.eventId, 'webhook.test', true, mine.id]);
    } finally {
      listener.child.kill();
      await listener.exited;
      await call(w, 'DELETE', `/facilitator/webhook-endpoints/${mine.id}`, { token: m.apiKey });
    }
  });

  it('without development mode (DEV_TOOLS=false, or NODE_ENV other than development) loopback stays refused', async function () {
    strictApi = await startExtraApi('api-no-dev', { DEV_TOOLS: 'false' }, { stack: env().stack });
    for (const url of ['http://127.0.0.1:8499/webhooks', 'https://127.0.0.1:8499/webhooks', 'https://localhost/webhooks']) {
      const res = await fetch(`${strictApi.baseUrl}/facilitator/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      const json = (await res.json()) as { error: { code: string; fields: { path: string; message: string }[] } };
      assert.equal(res.status, 400, `${url}: ${JSON.stringify(json)}`);
      assert.equal(json.error.code, 'INVALID_REQUEST');
      assert.match(json.error.fields[0]!.message, /must be https|must resolve to a public address/);
    }
  });
});
