import assert from 'node:assert/strict';
import type { PreparedVoucher } from '../../bench/vouchers.js';
import { StackSupervisor } from '../../tools/stack/supervisor.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import type { CapturedPayment } from '../helpers/captures.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { awaitSettlements, capturedPayment, loadParties, planLoad, retryUntilDecided } from './load-captures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Generous for a slow, shared machine; on an idle one a part is back in 1-10 s. */
const RESUME_WITHIN_MS = 45_000;

interface Kill {
  part: string;
  atMs: number;
  backMs?: number;
  firstCaptureAfterMs?: number;
}

/**
 * npm start's supervisor (StackSupervisor, wired as tools/stack/start.ts wires it) on a stack of
 * its own: each part is SIGKILLed by its pid, as a crash would end it, while captures flow.
 */
describe('fault: the embedded stack heals itself (each part SIGKILLed while captures flow)', function () {
  this.timeout(900_000);
  let supervisor: StackSupervisor | undefined;
  const said: string[] = [];
  const gaveUp: string[] = [];
  const env = useIsolatedStack({
    env: { CONFIRMATIONS: '1', BATCH_MAX_WAIT_MS: '500', CAPTURE_SWEEP_AFTER_SECONDS: '5', SPEND_INTENT_TTL_SECONDS: '1800' },
    onUnexpectedExit: (name, info) => supervisor?.partExited(name, info),
  });

  before(function () {
    supervisor = new StackSupervisor(env().stack, { log: (m) => said.push(`${Date.now()} ${m}`), giveUp: (r) => gaveUp.push(r) });
  });
  after(() => supervisor?.stop());

  function sigkill(name: string): void {
    const part = env().stack.parts().find((p) => p.name === name);
    assert.ok(part?.running, `${name} runs before it is killed`);
    process.kill(part.pid, 'SIGKILL');
  }

  async function backAfter(kill: Kill): Promise<void> {
    const deadline = Date.now() + RESUME_WITHIN_MS + 60_000;
    for (;;) {
      const line = said.find((l) => l.includes(`${kill.part} is back`) && Number(l.split(' ')[0]) >= kill.atMs);
      if (line) {
        kill.backMs = Number(line.split(' ')[0]) - kill.atMs;
        return;
      }
      assert.equal(gaveUp.length, 0, gaveUp.join('; '));
      assert.ok(Date.now() < deadline, `${kill.part} restarted by the supervisor; it said ${JSON.stringify(said)}`);
      await sleep(200);
    }
  }

  it('restarts the store, Temporal, the worker and the API under load; captures resume within seconds; each accepted payment settles once', async function () {
    const { stack, world: w } = env();
    const parties = await loadParties(w, 3, 'Self-healing merchant');
    const [load] = await planLoad(w, parties, [w.baseUrl], 3, 100);
    const vouchers = [...load!.vouchers];

    const accepted: { payment: CapturedPayment; atMs: number }[] = [];
    let capturing = true;
    const capturer = async () => {
      while (capturing) {
        const v = vouchers.shift();
        if (!v) return;
        const answer = await retryUntilDecided(stack.urls.baseUrl, v);
        assert.equal(answer.status, 200, `a capture retried through the crash is accepted: ${JSON.stringify(answer)}`);
        accepted.push({ payment: capturedPayment(parties.merchants, v, answer.paymentId!), atMs: Date.now() });
        await sleep(300);
      }
    };
    const capturers = [capturer(), capturer(), capturer()];

    const kills: Kill[] = [];
    for (const part of [stack.infra.mongoKind, 'temporal', 'worker', 'api']) {
      await sleep(4_000);
      const kill: Kill = { part, atMs: Date.now() };
      kills.push(kill);
      sigkill(part);
      await backAfter(kill);
      const deadline = kill.atMs + RESUME_WITHIN_MS;
      while (!accepted.some((a) => a.atMs > kill.atMs + (kill.backMs ?? 0))) {
        assert.ok(Date.now() < deadline, `captures resume after ${part} is back`);
        await sleep(100);
      }
      kill.firstCaptureAfterMs = accepted.find((a) => a.atMs > kill.atMs + (kill.backMs ?? 0))!.atMs - kill.atMs;
    }
    capturing = false;
    await Promise.all(capturers);
    process.stdout.write(`\nself-healing: ${JSON.stringify({ accepted: accepted.length, kills }, null, 2)}\n`);

    assert.equal(gaveUp.length, 0);
    for (const k of kills) assert.ok(said.some((l) => l.includes(`${k.part} exited unexpectedly (signal SIGKILL); restarting it in`)), `the supervisor said why it restarted ${k.part}`);
    const payments = accepted.map((a) => a.payment);
    assert.equal(new Set(payments.map((p) => p.paymentId)).size, payments.length, 'one payment per capture');
    const { settledTwice, lost } = await awaitSettlements(w, payments, 300_000);
    assert.deepEqual({ settledTwice, lost }, { settledTwice: 0, lost: 0 });
    await assertLedgerAgrees(w, payments, { timeoutMs: 300_000 });
  });

  it('restarts anvil on its state file; settlement resumes', async function () {
    // The embedded anvil writes its state every 5 s (and at a graceful stop): a SIGKILL loses the
    // blocks since the last write, as a reorg deeper than CONFIRMATIONS would, which no facilitator
    // can take back. So the chain is killed once its last blocks are written (docs/operations.md).
    const { stack, world: w } = env();
    await sleep(6_000);
    const kill: Kill = { part: 'anvil', atMs: Date.now() };
    sigkill('anvil');
    await backAfter(kill);
    const parties = await loadParties(w, 1, 'After the chain restart');
    const [load] = await planLoad(w, parties, [w.baseUrl], 1, 3);
    const payments: CapturedPayment[] = [];
    for (const v of load!.vouchers as PreparedVoucher[]) {
      const answer = await retryUntilDecided(stack.urls.baseUrl, v);
      assert.equal(answer.status, 200, JSON.stringify(answer));
      payments.push(capturedPayment(parties.merchants, v, answer.paymentId!));
    }
    await assertLedgerAgrees(w, payments, { timeoutMs: 180_000 });
    assert.equal(gaveUp.length, 0);
  });
});
