import assert from 'node:assert/strict';
import type { RatePolicy } from '../../src/domain/rate-limit.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { call, newMerchant, world, type ApiResponse, type TestMerchant, type World } from '../helpers/world.js';

const SLOT_INSERTS = ['x402_store_commands_total', 'command="insert",collection="rate_limit_slots"'] as const;
const slotInserts = async (w: World) => metricSum(await scrapeApiMetrics(w), ...SLOT_INSERTS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Requests that pass authentication and the limiter, then fail cheaply (400): no body to verify, no Idempotency-Key. */
const buckets: { name: 'verify' | 'capture'; send(w: World, m: TestMerchant): Promise<ApiResponse> }[] = [
  { name: 'verify', send: (w, m) => call(w, 'POST', '/facilitator/verify', { token: m.apiKey, body: {} }) },
  { name: 'capture', send: (w, m) => call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body: {} }) },
];

describe('rate limit: slots claimed in blocks', function () {
  this.timeout(60_000);
  // 20 a second, a burst of 40: a steady 10 a second stays well inside it.
  const policy: RatePolicy = { perMinute: 1200, burst: 40 };
  const paceMs = 100;
  let w: World;

  before(async function () {
    w = await world();
  });

  for (const bucket of buckets) {
    it(`${bucket.name}: 20 requests at a steady pace cost far fewer than 20 slot inserts, and the burst is still refused past its size`, async function () {
      const m = await newMerchant(w, `Blocks ${bucket.name}`, { rateLimits: { [bucket.name]: policy } });
      const before = await slotInserts(w);
      const started = Date.now();
      for (let i = 0; i < 20; i++) {
        await sleep(Math.max(0, started + i * paceMs - Date.now()));
        const r = await bucket.send(w, m);
        assert.equal(r.status, 400, `#${i}: ${r.status} ${JSON.stringify(r.json)}`);
        assert.equal(r.headers.get('ratelimit-limit'), String(policy.burst));
        assert.equal(r.headers.get('ratelimit-policy'), `${policy.perMinute};w=60;burst=${policy.burst}`);
        const remaining = Number(r.headers.get('ratelimit-remaining'));
        assert.ok(remaining >= policy.burst - 12 && remaining < policy.burst, `#${i}: RateLimit-Remaining ${remaining}`);
      }
      const inserts = (await slotInserts(w)) - before;
      assert.ok(inserts <= 6, `${inserts} rate_limit_slots inserts for 20 requests`);

      const answers = await Promise.all(Array.from({ length: 3 * policy.burst }, () => bucket.send(w, m)));
      const elapsed = Date.now() - started;
      const limited = answers.filter((r) => r.status === 429);
      for (const r of limited) {
        assert.equal(r.json.error.code, 'RATE_LIMITED');
        assert.equal(r.headers.get('ratelimit-remaining'), '0');
        assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      }
      const allowed = 20 + answers.length - limited.length;
      assert.ok(limited.length > 0, 'the burst past its size was not refused');
      assert.ok(allowed <= policy.burst + Math.ceil(elapsed / (60_000 / policy.perMinute)), `${allowed} allowed in ${elapsed} ms`);
      assert.ok(answers.length - limited.length >= policy.burst - 12, `only ${answers.length - limited.length} of the burst allowed after a steady pace`);
    });
  }
});
