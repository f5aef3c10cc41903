import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { getAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { makeChainClients } from '../../src/chain/clients.js';
import { bytes32ToUuid, uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { ANVIL_DEV_PRIVATE_KEY } from '../../tools/stack/deployment.js';
import { freePort, type ExitInfo } from '../../tools/stack/processes.js';
import { rpcCall } from '../../tools/stack/probes.js';
import type { StackHandle } from '../../tools/stack/stack.js';
import { shardOf } from '../../src/store/settlement/queue.js';
import { startExtraWorker, type ExtraWorker } from '../helpers/extra-api.js';
import { assertLedgerAgrees } from '../helpers/ledger.js';
import { paymentSettledEvent, type World } from '../helpers/world.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { acceptedAfterRetries, awaitSettlements, loadParties, planLoad, runLoad } from './load-captures.js';
import { SecondApi } from './load-faults.js';

/**
 * Scale-out on one machine: two API processes take open-loop captures, two worker processes (each
 * with its own settler key, both allowed by the contract) settle four shards, and one worker is
 * SIGKILLed mid-run and never restarted. The survivor must take over every shard: nothing lost,
 * nothing settled twice, and every payment captured after the kill settled by the survivor's key.
 * FAULTS_OUT=<file> writes the figures as JSON.
 */
const SHARDS = 4;
const RATE = 8;
const WINDOW_SECONDS = 40;
/** The kill lands at a random moment in this range of the window, once both keys have settled a batch. */
const KILL_FROM_MS = 12_000;
const KILL_TO_MS = 20_000;
/** Later than this into the window, too little load would follow the kill: the test fails instead. */
const KILL_LATEST_MS = 28_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
const seconds = (ms: number) => Math.round(ms) / 1000;

/** A mined settlement transaction as the watch first saw it. */
interface SettlementTx {
  hash: Hex;
  from: Address;
  blockNumber: bigint;
  seenAtEpochMs: number;
  /** PaymentSettled ids (bytes32, lowercase). */
  payments: string[];
}

/** Follows the chain twice a second and records who sent each transaction that settled payments, and when it was mined. */
class SettlementWatch {
  readonly txs = new Map<Hex, SettlementTx>();
  private next: bigint;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly w: World,
    fromBlock: bigint,
  ) {
    this.next = fromBlock;
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.scan().catch((err: unknown) => process.stderr.write(`settlement watch: ${String(err)}\n`));
        await sleep(500);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.scan();
  }

  async scan(): Promise<void> {
    const client = this.w.publicClient;
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head < this.next) return;
    const seenAtEpochMs = Date.now();
    const logs = await client.getLogs({ address: this.w.settlement, event: paymentSettledEvent, fromBlock: this.next, toBlock: head });
    const byTx = new Map<Hex, string[]>();
    for (const l of logs) byTx.set(l.transactionHash, [...(byTx.get(l.transactionHash) ?? []), String(l.args.paymentId).toLowerCase()]);
    for (const [hash, payments] of byTx) {
      const tx = await client.getTransaction({ hash });
      this.txs.set(hash, { hash, from: getAddress(tx.from), blockNumber: tx.blockNumber ?? head, seenAtEpochMs, payments });
    }
    this.next = head + 1n;
  }

  sentBy(address: Address): SettlementTx[] {
    return [...this.txs.values()].filter((t) => t.from === address);
  }

  /** Payment (bytes32, lowercase) -> the transactions that settled it. */
  byPayment(): Map<string, SettlementTx[]> {
    const out = new Map<string, SettlementTx[]>();
    for (const t of this.txs.values()) for (const p of t.payments) out.set(p, [...(out.get(p) ?? []), t]);
    return out;
  }
}

/** A fresh settler key, funded for gas and allowed by the contract's owner (anvil's dev key, which deployed it). */
async function authoriseNewSettler(stack: StackHandle): Promise<{ key: Hex; address: Address }> {
  const key = generatePrivateKey();
  const address = privateKeyToAddress(key);
  const rpcUrl = stack.urls.rpcUrl;
  await rpcCall(rpcUrl, 'anvil_setBalance', [address, `0x${(10n ** 21n).toString(16)}`]);
  const owner = makeChainClients({ rpcUrl, chainId: stack.config.CHAIN_ID, privateKey: ANVIL_DEV_PRIVATE_KEY });
  const settlement = getAddress(stack.env.SETTLEMENT_CONTRACT_ADDRESS as string);
  const contractOwner = await owner.publicClient.readContract({ address: settlement, abi: creditSettlementAbi, functionName: 'owner' });
  assert.equal(getAddress(contractOwner), owner.account!.address, 'the dev key owns the settlement contract');
  const hash = await owner.walletClient!.writeContract({ address: settlement, abi: creditSettlementAbi, functionName: 'setSettler', args: [address, true] });
  const receipt = await owner.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 });
  assert.equal(receipt.status, 'success', 'setSettler mined');
  assert.equal(await owner.publicClient.readContract({ address: settlement, abi: creditSettlementAbi, functionName: 'isSettler', args: [address] }), true);
  return { key, address };
}

describe(`fault: scale-out, two APIs and two workers with their own settler keys over ${SHARDS} shards, one worker SIGKILLed for good`, function () {
  this.timeout(600_000);
  let secondApi: SecondApi | undefined;
  let secondWorker: ExtraWorker | undefined;
  let secondSettler: Address;
  let secondWorkerExit: ExitInfo | undefined;

  // Registered before the stack's own hooks, so it runs before the stack stops.
  after(async function () {
    this.timeout(60_000);
    await Promise.all([secondWorker?.stop(), secondApi?.stop()]);
  });

  const env = useIsolatedStack({
    env: { CONFIRMATIONS: '1', BATCH_MAX_WAIT_MS: '500', SETTLEMENT_SHARDS: String(SHARDS), CAPTURE_SWEEP_AFTER_SECONDS: '5', SPEND_INTENT_TTL_SECONDS: '1800' },
  });

  before(async function () {
    this.timeout(180_000);
    const { stack, chain } = env();
    await chain.intervalMining(1);
    secondApi = new SecondApi(stack, await freePort());
    const settler = await authoriseNewSettler(stack);
    secondSettler = settler.address;
    assert.notEqual(secondSettler, getAddress(stack.chain.settlerAddress), 'the second worker has a key of its own');
    [secondWorker] = await Promise.all([startExtraWorker('worker-2', settler.key, { stack }), secondApi.start()]);
    secondWorker.proc.onUnexpectedExit((info) => (secondWorkerExit = info));
  });

  it('the surviving worker takes over every shard: nothing lost or settled twice, and what came after the kill is settled by its key', async function () {
    const { stack, world: w } = env();
    const firstSettler = getAddress(stack.chain.settlerAddress);
    const parties = await loadParties(w, 6, 'Scale-out merchant');
    const apis = [w.baseUrl, secondApi!.baseUrl];
    const load = await planLoad(w, parties, apis, RATE, WINDOW_SECONDS);

    const watch = new SettlementWatch(w, BigInt(stack.env.DEPLOY_BLOCK ?? '0'));
    watch.start();
    const loadStart = Date.now();
    const killer = (async () => {
      await sleep(loadStart + between(KILL_FROM_MS, KILL_TO_MS) - Date.now());
      // Both workers must have settled on chain before the kill, or the test proves nothing about two of them.
      while (watch.sentBy(firstSettler).length === 0 || watch.sentBy(secondSettler).length === 0) {
        if (Date.now() - loadStart > KILL_LATEST_MS) {
          throw new Error(
            `within ${KILL_LATEST_MS / 1000} s of load, both settler keys had not each mined a settleBatch: ` +
              `${firstSettler} (worker 1) ${watch.sentBy(firstSettler).length}, ${secondSettler} (worker 2) ${watch.sentBy(secondSettler).length}`,
          );
        }
        await sleep(200);
      }
      const killAt = Date.now();
      const exit = await stack.killWorker('SIGKILL');
      return { killAt, exit };
    })();
    killer.catch(() => undefined); // awaited after the load; a failure must not be an unhandled rejection meanwhile

    const { loads, sent } = await runLoad(load, RATE, WINDOW_SECONDS, 150);
    const { killAt, exit } = await killer;
    assert.equal(exit.signal, 'SIGKILL', 'the first worker died of the SIGKILL');
    const windowStart = Math.min(...loads.map((l) => l.startEpochMs));

    const { accepted, firstAnswers, resolvedByRetry } = await acceptedAfterRetries(sent, apis[0]!, parties.merchants, stack.dataDir);

    // Count before asserting, so a failure still reports the figures.
    const { settledTwice, lost } = await awaitSettlements(w, accepted, 150_000);
    await watch.stop();

    const settledBy = watch.byPayment();
    const txOf = (paymentId: string) => settledBy.get(uuidToBytes32(paymentId).toLowerCase())?.[0];
    const txs = [...watch.txs.values()];
    const settlers = [
      { address: firstSettler, worker: 'worker 1 (SIGKILLed, not restarted)' },
      { address: secondSettler, worker: 'worker 2' },
    ].map((s) => {
      const mine = txs.filter((t) => t.from === s.address);
      const before = mine.filter((t) => t.seenAtEpochMs < killAt);
      const after = mine.filter((t) => t.seenAtEpochMs >= killAt);
      const count = (ts: SettlementTx[]) => ts.reduce((n, t) => n + t.payments.length, 0);
      return { ...s, batchesBeforeKill: before.length, paymentsBeforeKill: count(before), batchesAfterKill: after.length, paymentsAfterKill: count(after) };
    });
    const strangers = txs.filter((t) => t.from !== firstSettler && t.from !== secondSettler);

    // Captured after the kill: only the second worker was alive to batch them.
    const afterKill = sent.filter((s) => s.record.outcome === 'accepted' && s.startEpochMs + (s.record.sentMs as number) >= killAt);
    const afterKillBySecond = afterKill.filter((s) => txOf(s.record.paymentId!)?.from === secondSettler);

    const secondAfterKill = txs.filter((t) => t.from === secondSettler && t.seenAtEpochMs >= killAt).sort((a, b) => a.seenAtEpochMs - b.seenAtEpochMs);
    const shardTakeoverMs = Array.from({ length: SHARDS }, (_, shard) => {
      const first = secondAfterKill.find((t) => t.payments.some((p) => shardOf(bytes32ToUuid(p as Hex), SHARDS) === shard));
      return first ? first.seenAtEpochMs - killAt : Number.POSITIVE_INFINITY;
    });
    // Caught up: every payment accepted before the kill is settled.
    const acceptedBeforeKill = sent.filter((s) => s.record.outcome === 'accepted' && (s.record.acceptedAtEpochMs as number) < killAt);
    const catchUpMs = Math.max(0, ...acceptedBeforeKill.map((s) => (txOf(s.record.paymentId!)?.seenAtEpochMs ?? Number.POSITIVE_INFINITY) - killAt));
    const confirmSeconds = sent.flatMap((s) => (s.record.confirmSeconds === undefined ? [] : [s.record.confirmSeconds]));
    const minedSeconds = sent.flatMap((s) => {
      const t = s.record.outcome === 'accepted' ? txOf(s.record.paymentId!) : undefined;
      return t ? [(t.seenAtEpochMs - (s.record.acceptedAtEpochMs as number)) / 1000] : [];
    });

    const figures = {
      rate: RATE,
      windowSeconds: WINDOW_SECONDS,
      apis: apis.length,
      workers: 2,
      shards: SHARDS,
      offered: sent.length,
      firstAnswers,
      resolvedByRetry,
      accepted: accepted.length,
      lost,
      settledTwice,
      killAtSecondsIntoWindow: seconds(killAt - windowStart),
      settlers,
      otherSenders: strangers.length,
      capturedAfterKill: afterKill.length,
      capturedAfterKillSettledBySecondWorker: afterKillBySecond.length,
      killToFirstSettlementBySecondWorkerSeconds: secondAfterKill.length > 0 ? seconds(secondAfterKill[0]!.seenAtEpochMs - killAt) : null,
      shardTakeoverSeconds: shardTakeoverMs.map((ms) => (Number.isFinite(ms) ? seconds(ms) : null)),
      catchUpAfterKillSeconds: Number.isFinite(catchUpMs) ? seconds(catchUpMs) : null,
      captureToConfirmedSecondsMax: confirmSeconds.length > 0 ? Math.max(...confirmSeconds) : null,
      confirmedSeenByPolls: confirmSeconds.length,
      captureToMinedSecondsMax: minedSeconds.length > 0 ? Math.round(Math.max(...minedSeconds) * 1000) / 1000 : null,
    };
    process.stdout.write(`\nscale-out: ${JSON.stringify(figures, null, 2)}\n`);
    if (process.env.FAULTS_OUT) writeFileSync(process.env.FAULTS_OUT, JSON.stringify(figures, null, 2));

    assert.equal(secondWorkerExit, undefined, `the second worker kept running: ${JSON.stringify(secondWorkerExit)}`);
    assert.ok(secondWorker!.proc.running, 'the second worker kept running');
    assert.equal(settledTwice, 0, 'settled twice');
    assert.equal(lost, 0, 'lost');
    assert.equal(strangers.length, 0, 'every settlement was sent by one of the two settler keys');
    assert.ok(settlers.every((s) => s.batchesBeforeKill > 0), `both workers settled before the kill: ${JSON.stringify(settlers)}`);
    assert.ok(afterKill.length > 0, 'captures were accepted after the kill');
    assert.equal(afterKillBySecond.length, afterKill.length, 'every payment captured after the kill was settled by the second worker');
    assert.ok(shardTakeoverMs.every(Number.isFinite), `every shard settled a batch through the second worker after the kill: ${JSON.stringify(figures.shardTakeoverSeconds)}`);
    await assertLedgerAgrees(w, accepted, { timeoutMs: 300_000 });
  });
});
