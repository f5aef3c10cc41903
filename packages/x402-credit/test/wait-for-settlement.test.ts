import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreditFacilitatorClient } from '@credit-facilitator/x402-credit/credit-facilitator-client';
import type { Receipt } from '@credit-facilitator/x402-credit/facilitator-mapping';
import { SAMPLE } from '@credit-facilitator/wire/testing';

const receipt = (status: Receipt['status']): Receipt => ({
  paymentId: '99999999-9999-4999-8999-999999999999',
  status,
  merchantId: SAMPLE.merchantId,
  payer: SAMPLE.borrowerId,
  amount: '1500000',
  asset: SAMPLE.asset,
  network: 'eip155:84532',
  orderRef: 'order-42',
  capturedAt: '2026-01-01T00:00:00.000Z',
});

interface Seen {
  at: number;
  prefer: string | undefined;
}

/** A facilitator's status route answering `answer(n)` to its n-th request (from 0). */
async function facilitator(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<{ baseUrl: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ at: Date.now(), prefer: req.headers.prefer as string | undefined });
    answer(seen.length - 1, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, seen, server };
}

const send = (res: ServerResponse, body: Receipt, headers: Record<string, string> = {}) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const apiKey = `sk_live_${'x'.repeat(43)}`;

describe('x402-credit: waitForSettlement', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  it('long-polls (Prefer: wait) against a facilitator that holds the request: one request per status change, no interval', async () => {
    const f = await facilitator((n, req, res) => {
      const wait = /wait=(\d+)/.exec(String(req.headers.prefer))?.[1];
      // Holds each request 200 ms, as if the batch moved then.
      setTimeout(() => send(res, receipt(n === 0 ? 'SUBMITTED' : 'CONFIRMED'), { 'preference-applied': `wait=${wait}` }), 200);
    });
    servers.push(f.server);
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, pollIntervalMs: 10_000, confirmTimeoutMs: 60_000 });
    const started = Date.now();
    const last = await client.waitForSettlement(receipt('QUEUED'));
    assert.equal(last.status, 'CONFIRMED');
    assert.equal(f.seen.length, 2);
    assert.deepEqual(f.seen.map((s) => s.prefer), ['wait=25', 'wait=25']);
    assert.ok(Date.now() - started < 2_000, 'never waited the 10 s interval');
  });

  it('a held answer that timed out with the same status is asked again at once', async () => {
    const f = await facilitator((n, _req, res) => setTimeout(() => send(res, receipt(n < 2 ? 'QUEUED' : 'CONFIRMED'), { 'preference-applied': 'wait=1' }), 300));
    servers.push(f.server);
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, pollIntervalMs: 10_000, longPollSeconds: 1 });
    const started = Date.now();
    assert.equal((await client.waitForSettlement(receipt('QUEUED'))).status, 'CONFIRMED');
    assert.equal(f.seen.length, 3);
    assert.ok(f.seen.every((s) => s.prefer === 'wait=1'));
    assert.ok(Date.now() - started < 3_000);
  });

  it('falls back to interval polling when the facilitator does not apply the preference, honouring a longer Retry-After', async () => {
    const f = await facilitator((n, _req, res) => send(res, receipt(n < 2 ? 'QUEUED' : 'CONFIRMED'), n === 1 ? { 'retry-after': '1' } : {}));
    servers.push(f.server);
    const client = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, pollIntervalMs: 150 });
    assert.equal((await client.waitForSettlement(receipt('QUEUED'))).status, 'CONFIRMED');
    assert.equal(f.seen.length, 3);
    const gaps = f.seen.slice(1).map((s, i) => s.at - f.seen[i]!.at);
    assert.ok(gaps[0]! >= 140 && gaps[0]! < 900, `paced by pollIntervalMs: ${gaps[0]} ms`);
    assert.ok(gaps[1]! >= 950, `paced by Retry-After: ${gaps[1]} ms`);
  });

  it('longPollSeconds 0 polls plainly; the wait never outlasts confirmTimeoutMs', async () => {
    const f = await facilitator((_n, _req, res) => send(res, receipt('QUEUED')));
    servers.push(f.server);
    const plain = new CreditFacilitatorClient({ baseUrl: f.baseUrl, apiKey, pollIntervalMs: 100, confirmTimeoutMs: 450, longPollSeconds: 0 });
    const started = Date.now();
    assert.equal((await plain.waitForSettlement(receipt('QUEUED'))).status, 'QUEUED');
    assert.ok(Date.now() - started < 1_000);
    assert.ok(f.seen.length >= 3 && f.seen.every((s) => s.prefer === undefined), JSON.stringify(f.seen));

    const g = await facilitator((_n, req, res) => {
      const wait = Number(/wait=(\d+)/.exec(String(req.headers.prefer))?.[1] ?? 0);
      setTimeout(() => send(res, receipt('QUEUED'), { 'preference-applied': `wait=${wait}` }), wait * 1000);
    });
    servers.push(g.server);
    const client = new CreditFacilitatorClient({ baseUrl: g.baseUrl, apiKey, pollIntervalMs: 100, confirmTimeoutMs: 2_500 });
    const t0 = Date.now();
    assert.equal((await client.waitForSettlement(receipt('QUEUED'))).status, 'QUEUED');
    assert.ok(Date.now() - t0 < 3_500, `${Date.now() - t0} ms`);
    assert.equal(g.seen[0]!.prefer, 'wait=2', 'asks no longer than the time left');
  });
});
