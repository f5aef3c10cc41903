import assert from 'node:assert/strict';
import { capturePayments, newParties } from '../helpers/captures.js';
import { alertRules } from '../helpers/dashboard.js';
import { metricSum } from '../helpers/metrics.js';
import { pollUntil, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';

/** The rule's expression, evaluated here on one scrape of the worker (it has one instance, so max() is the sample). */
const STALLED_EXPR = 'max(x402_settlement_oldest_queued_age_seconds) > clamp_min(6 * max(x402_settlement_batch_window_seconds), 60)';

function maxSample(text: string, name: string): number {
  const values = text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).map((l) => Number(l.split(' ').pop()));
  return values.length ? Math.max(...values) : NaN;
}

function stalled(text: string): { age: number; threshold: number; firing: boolean } {
  const age = maxSample(text, 'x402_settlement_oldest_queued_age_seconds');
  const threshold = Math.max(6 * maxSample(text, 'x402_settlement_batch_window_seconds'), 60);
  return { age, threshold, firing: age > threshold };
}

const scrape = async (w: World) => (await fetch(`http://127.0.0.1:${w.env.WORKER_METRICS_PORT}/metrics`)).text();
const rpcFailures = (text: string) => metricSum(text, 'x402_chain_rpc_errors_total') - metricSum(text, 'x402_chain_rpc_errors_total', 'kind="reverted"');

describe('fault: the settlement-stalled alert expression while the RPC is cut', function () {
  this.timeout(300_000);
  const env = useIsolatedStack({ env: { SETTLEMENT_SHARDS: '1', BATCH_MAX_WAIT_MS: '2000', WORKER_METRICS_SAMPLE_MS: '1000' }, rpcProxy: true });

  it('stays false while payments settle, turns true about a minute into the outage, and false again after', async () => {
    assert.equal(alertRules().find((r) => r.alert === 'X402SettlementStalled')?.expr, STALLED_EXPR, 'this test evaluates the rule as written');
    const { world: w, rpcProxy } = env();
    const parties = await newParties(w, 'stalled alert merchant');
    const [before] = await capturePayments(w, parties, [5001n]);
    await pollUntil(w, before!.merchant, before!.paymentId, 'CONFIRMED');
    const healthy = stalled(await scrape(w));
    assert.equal(healthy.firing, false, `healthy: ${JSON.stringify(healthy)}`);

    rpcProxy!.setMode('refuse');
    const cutAt = Date.now();
    const [waiting] = await capturePayments(w, parties, [5002n]);
    const errorsAtCut = rpcFailures(await scrape(w));
    let firstTrueS: number | undefined;
    let last = healthy;
    let text = '';
    while (Date.now() - cutAt < 120_000) {
      text = await scrape(w);
      last = stalled(text);
      if (last.firing) {
        firstTrueS = (Date.now() - cutAt) / 1000;
        break;
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
    const figures = { healthyAge: healthy.age, firstTrueAfterCutS: firstTrueS, ageWhenTrue: last.age, threshold: last.threshold, rpcFailuresDuringCut: rpcFailures(text) - errorsAtCut };
    process.stderr.write(`settlement-stalled alert figures: ${JSON.stringify(figures)}\n`);
    assert.ok(firstTrueS !== undefined, `the expression turned true during the outage: ${JSON.stringify(figures)}`);
    assert.ok(figures.rpcFailuresDuringCut > 0, 'the RPC failures were counted');

    rpcProxy!.setMode('pass');
    await pollUntil(w, waiting!.merchant, waiting!.paymentId, 'CONFIRMED', 120_000);
    const recovered = await (async () => {
      for (let i = 0; i < 20; i++) {
        const s = stalled(await scrape(w));
        if (!s.firing) return s;
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return stalled(await scrape(w));
    })();
    assert.equal(recovered.firing, false, `after the outage: ${JSON.stringify(recovered)}`);
  });
});
