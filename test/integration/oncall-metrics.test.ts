import assert from 'node:assert/strict';
import { capturePayments, newParties } from '../helpers/captures.js';
import { metricSum, scrapeApiMetrics } from '../helpers/metrics.js';
import { until } from '../helpers/until.js';
import { pollUntil, world, type World } from '../helpers/world.js';

/** Issue 44's metrics, by endpoint, and the type each is exported as. */
const API_METRICS: Record<string, string> = {
  x402_store_command_duration_seconds: 'histogram',
};
const WORKER_METRICS: Record<string, string> = {
  x402_store_command_duration_seconds: 'histogram',
  x402_capture_to_confirmed_seconds: 'histogram',
  x402_settlement_oldest_queued_age_seconds: 'gauge',
  x402_settlement_batch_retrying_seconds: 'gauge',
  x402_batch_step_seconds: 'histogram',
  x402_settlement_batch_window_seconds: 'gauge',
  x402_settlement_backlog_limit: 'gauge',
  x402_chain_rpc_requests_total: 'counter',
  x402_chain_rpc_errors_total: 'counter',
  x402_settler_balance_wei: 'gauge',
  x402_settlement_pool_balance_base_units: 'gauge',
  x402_settlement_gas_cost_wei_total: 'counter',
  x402_chain_transactions_pending: 'gauge',
  x402_chain_transactions_replaced_total: 'counter',
  x402_chain_transactions_dropped_total: 'counter',
  x402_settler_nonce_gap: 'gauge',
  x402_chain_head_block_number: 'gauge',
  x402_settlement_confirmation_depth_blocks: 'gauge',
  x402_settlement_confirmations_required_blocks: 'gauge',
  x402_webhook_deliveries_total: 'counter',
  x402_refunds_total: 'counter',
  x402_repayments_total: 'counter',
  x402_temporal_workflow_task_schedule_to_start_seconds: 'histogram',
  x402_temporal_workflow_task_execution_seconds: 'histogram',
  x402_temporal_workflow_task_failures_total: 'counter',
  x402_temporal_activity_schedule_to_start_seconds: 'histogram',
  x402_temporal_activity_execution_seconds: 'histogram',
  x402_temporal_worker_task_slots_available: 'gauge',
};

const scrapeWorker = async (w: World) => (await fetch(`http://127.0.0.1:${w.env.WORKER_METRICS_PORT}/metrics`)).text();

/** Every name in `expected` is exported with its type; returns the names missing or mistyped. */
function missing(text: string, expected: Record<string, string>): string[] {
  return Object.entries(expected)
    .filter(([name, type]) => !text.includes(`# TYPE ${name} ${type}\n`))
    .map(([name, type]) => `${name} (${type})`);
}

describe("on-call metrics (issue 44): every new metric on the API's and the worker's endpoints", function () {
  this.timeout(120_000);

  it('lists each new metric, with rates defined from zero, once a payment is CONFIRMED', async () => {
    const w = await world();
    const [paid] = await capturePayments(w, await newParties(w, 'oncall-metrics'), [700n]);
    await pollUntil(w, paid!.merchant, paid!.paymentId, 'CONFIRMED');

    const api = await scrapeApiMetrics(w);
    assert.deepEqual(missing(api, API_METRICS), [], 'API metrics missing');
    assert.ok(metricSum(api, 'x402_store_command_duration_seconds_count') > 0, 'the API timed its store commands');
    for (const cause of ['in_flight', 'backlog', 'merchant_share']) assert.match(api, new RegExp(`x402_captures_shed_total\\{cause="${cause}"[^}]*\\} \\d`), `shed ${cause} at zero or more`);

    // The Temporal task latencies reach the registry once a second; the rest is there at once.
    const worker = await until('the worker exported its workflow task latency', () => scrapeWorker(w), (t) => metricSum(t, 'x402_temporal_workflow_task_execution_seconds_count') > 0, 15_000);
    assert.deepEqual(missing(worker, WORKER_METRICS), [], 'worker metrics missing');
    assert.ok(metricSum(worker, 'x402_capture_to_confirmed_seconds_count') >= 1, 'capture to CONFIRMED observed');
    assert.ok(metricSum(worker, 'x402_chain_rpc_requests_total') > 0, 'RPC calls counted');
    assert.ok(metricSum(worker, 'x402_settler_balance_wei') > 0, 'settler balance sampled');
    assert.ok(metricSum(worker, 'x402_settlement_pool_balance_base_units') > 0, 'pool balance sampled');
    assert.ok(metricSum(worker, 'x402_chain_head_block_number') > 0, 'chain head sampled');
    assert.ok(metricSum(worker, 'x402_settlement_gas_cost_wei_total') > 0, 'settlement fees counted');
    assert.ok(metricSum(worker, 'x402_batch_step_seconds_count', 'step="confirm",outcome="ok"') >= 1, 'confirm step timed');
    assert.ok(metricSum(worker, 'x402_temporal_activity_execution_seconds_count') > 0, 'activity latency bridged');
    assert.ok(metricSum(worker, 'x402_settlement_batch_window_seconds') > 0, 'batch window exported');
    // Series present at zero before their first event.
    assert.match(worker, /x402_workflow_failures_total\{kind="repayment"[^}]*\} \d/);
    assert.match(worker, /x402_webhook_deliveries_total\{outcome="failed",attempt="1"[^}]*\} \d/);
    assert.match(worker, /x402_chain_rpc_errors_total\{method="eth_sendRawTransaction",kind="timeout"[^}]*\} \d/);
    assert.match(worker, /x402_settlement_oldest_queued_age_seconds\{shard="0"[^}]*\} [\d.]+/);
  });
});
