import assert from 'node:assert/strict';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { acceptedAfterRetries, loadParties, planLoad, runLoad } from './load-captures.js';

/**
 * Issue 42: the backlog bound holds whatever settlement is doing. With the RPC node unreachable
 * the shards sit in submit or confirm, not in gather; every step reports the backlog, and a shard
 * silent for 30 s with a queue counts as over the limit, so captures are shed for the whole outage
 * once the limit is reached, never admitted again because the last report aged out. The limit is
 * six seconds of the offered rate (the 300 at 50 captures/s; FAULTS_OUTAGE_RATE=50 runs
 * that), and the outage outlasts the 30 s a report stays fresh.
 */
const RATE = Number(process.env.FAULTS_OUTAGE_RATE ?? 10);
const MAX_BACKLOG = RATE * 6;
const OUTAGE_AT_MS = 5_000;
const OUTAGE_MS = 45_000;
const WINDOW_SECONDS = 60;
/** From when the backlog has surely passed the limit (its six seconds, a batch window, a board refresh) to the outage's end. */
const SHED_FROM_MS = OUTAGE_AT_MS + 15_000;

describe('fault: an RPC outage under load keeps the settlement backlog bound', function () {
  this.timeout(600_000);
  const env = useIsolatedStack({
    env: { SETTLEMENT_MAX_BACKLOG: String(MAX_BACKLOG), CONFIRMATIONS: '1', BATCH_MAX_WAIT_MS: '1000' },
    rpcProxy: true,
  });

  before(async function () {
    await env().chain.intervalMining(1);
  });

  it(`sheds every capture for the rest of a ${OUTAGE_MS / 1000} s outage once ${MAX_BACKLOG} wait, then settles every accepted one exactly once`, async function () {
    const { stack, world: w, rpcProxy } = env();
    const parties = await loadParties(w, 6, 'Outage-bound merchant');
    const plan = await planLoad(w, parties, [w.baseUrl], RATE, WINDOW_SECONDS);
    const outage = (async () => {
      await new Promise((r) => setTimeout(r, OUTAGE_AT_MS));
      rpcProxy!.setMode('refuse');
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      rpcProxy!.setMode('pass');
    })();
    const { sent } = await runLoad(plan, RATE, WINDOW_SECONDS, 120);
    await outage;

    const during = sent.filter((s) => s.record.scheduledMs >= SHED_FROM_MS && s.record.scheduledMs < OUTAGE_AT_MS + OUTAGE_MS - 1_000);
    const acceptedDuring = during.filter((s) => s.record.outcome === 'accepted').length;
    const shedDuring = during.filter((s) => s.record.outcome === 'shed_unavailable').length;
    const acceptedBeforeEnd = sent.filter((s) => s.record.scheduledMs < OUTAGE_AT_MS + OUTAGE_MS && s.record.outcome === 'accepted').length;
    process.stdout.write(`\noutage backlog bound: ${JSON.stringify({ rate: RATE, maxBacklog: MAX_BACKLOG, offeredLateInOutage: during.length, acceptedLateInOutage: acceptedDuring, shedLateInOutage: shedDuring, acceptedBeforeOutageEnd: acceptedBeforeEnd })}\n`);
    assert.ok(during.length >= RATE * 20, `the load flowed through the outage (${during.length} captures in its late part)`);
    assert.equal(acceptedDuring, 0, `every capture late in the outage is shed (${acceptedDuring} of ${during.length} accepted)`);

    const { accepted } = await acceptedAfterRetries(sent, w.baseUrl, parties.merchants, stack.dataDir);
    await assertLedgerAgrees(w, accepted, { timeoutMs: 240_000 });
  });
});
