import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { sampleReceipt } from '../helpers/sample-receipt.js';
import { webhookEvent } from '../../src/domain/webhook-events.js';
import type { WebhookEndpointDoc } from '../../src/store/documents.js';
import { deliverWebhookEvent, WebhookRefusedError } from '../../src/webhooks/deliver.js';
import { endpointUrlProblem, PUBLIC_ONLY, webhookDestinationPolicy } from '../../src/webhooks/url-policy.js';
import { newWebhookSecret } from '../../src/webhooks/secrets.js';
import { loadEnv } from '../../src/config/env.js';

const receipt = sampleReceipt;
const event = webhookEvent(receipt, { status: 'CONFIRMED', batchId: 'x', transaction: '0x1', blockNumber: '1', confirmedAt: '2026-11-24T00:00:05.000Z' });
const DEV = { allowPrivate: false, allowLoopback: true };
const clearSecrets = { open: (s: string) => s };

/** A resolver that answers `answers[i]` to its i-th question (the last one from then on), counting them. */
function changingResolver(...answers: string[]) {
  const asked: string[] = [];
  const resolve = ((host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    asked.push(host);
    const address = answers[Math.min(asked.length, answers.length) - 1]!;
    cb(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
  }) as never;
  return { resolve, asked };
}

describe('webhooks: delivery connects to the address it checked', function () {
  let server: Server;
  let port: number;
  const received: { host: string | undefined; body: string; headers: Record<string, string> }[] = [];
  const secret = newWebhookSecret();
  let endpoint: (url: string) => WebhookEndpointDoc;

  before(async function () {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ host: req.headers.host, body: Buffer.concat(chunks).toString('utf8'), headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    endpoint = (url) => ({ _id: 'we_1', merchantId: 'm', url, secrets: [{ secret, createdAt: new Date() }], createdAt: new Date() });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (received.length = 0));

  it('resolves the host once, on the connection itself: a DNS answer that changes after the check cannot redirect the request', async function () {
    const dns = changingResolver('127.0.0.1', '10.0.0.7');
    const status = await deliverWebhookEvent(endpoint(`http://rebind.test:${port}/hooks`), event, { ...DEV, secrets: clearSecrets, resolve: dns.resolve });
    assert.equal(status, 204);
    assert.deepEqual(dns.asked, ['rebind.test'], 'one lookup, the one the socket used');
    assert.equal(received.length, 1);
    assert.equal(received[0]!.host, `rebind.test:${port}`);
    assert.deepEqual(new Webhook(secret).verify(received[0]!.body, received[0]!.headers), JSON.parse(received[0]!.body), 'signed per Standard Webhooks');

    // The next delivery's lookup answers a private address: refused before any connection, not retried.
    await assert.rejects(
      deliverWebhookEvent(endpoint(`http://rebind.test:${port}/hooks`), event, { ...DEV, secrets: clearSecrets, resolve: dns.resolve }),
      (e: unknown) => e instanceof WebhookRefusedError && /rebind\.test resolves to 10\.0\.0\.7/.test(e.message),
    );
    assert.equal(received.length, 1, 'nothing reached the receiver');
  });

  it('outside development mode refuses a loopback answer and an http URL, without connecting', async function () {
    const dns = changingResolver('127.0.0.1');
    await assert.rejects(
      deliverWebhookEvent(endpoint(`https://rebind.test:${port}/hooks`), event, { ...PUBLIC_ONLY, secrets: clearSecrets, resolve: dns.resolve }),
      (e: unknown) => e instanceof WebhookRefusedError && /resolves to 127\.0\.0\.1/.test(e.message),
    );
    await assert.rejects(
      deliverWebhookEvent(endpoint(`http://127.0.0.1:${port}/hooks`), event, { ...PUBLIC_ONLY, secrets: clearSecrets }),
      (e: unknown) => e instanceof WebhookRefusedError && /must be https/.test(e.message),
    );
    assert.equal(received.length, 0);
  });

  it('allows loopback http receivers only on a development stack, never in production or test mode', function () {
    const policy = (env: Record<string, string>) => webhookDestinationPolicy(loadEnv(env));
    assert.deepEqual(policy({}), { allowPrivate: false, allowLoopback: true }, 'npm start: NODE_ENV=development, DEV_TOOLS=true');
    assert.deepEqual(policy({ NODE_ENV: 'production' }), PUBLIC_ONLY);
    assert.deepEqual(policy({ NODE_ENV: 'test' }), PUBLIC_ONLY);
    assert.deepEqual(policy({ DEV_TOOLS: 'false' }), PUBLIC_ONLY);
    assert.equal(endpointUrlProblem('http://127.0.0.1:8499/webhooks', policy({})), null);
    assert.match(endpointUrlProblem('http://127.0.0.1:8499/webhooks', policy({ NODE_ENV: 'production' }))!, /must be https/);
    assert.match(endpointUrlProblem('http:127.0.0.1/webhooks', policy({}))!, /must be https/);
  });
});
