import { randomUUID } from 'node:crypto';
import { getAddress, parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { creditSettlementAbi } from '../../src/chain/abi.js';
import { makeChainClients } from '../../src/chain/clients.js';
import type { ChainContext } from '../../src/chain/context.js';
import { NonceManager } from '../../src/chain/nonce-manager.js';
import { settledContentOf } from '../../src/chain/settlement.js';
import { loadEnv } from '../../src/config/env.js';
import { AcceptedCaptures } from '../../src/settlement/accepted-captures.js';
import type { SettlementSettings } from '../../src/settlement/settings.js';
import { createShardSettlement, type ShardDeps, type StepContext } from '../../src/settlement/shard.js';
import type { Collections } from '../../src/store/collections.js';
import type { SettlementQueueDoc } from '../../src/store/documents.js';
import { connectStore, type Store } from '../../src/store/mongo.js';
import { findBatches } from '../../src/store/settlement/batches.js';
import { allowSettlerOnDevChain } from '../../tools/stack/deployment.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { paymentSettledEvent, type World } from './world.js';

/**
 * A settlement shard's steps driven by a test, one call at a time, so that interleavings Temporal
 * only makes under faults (a stale attempt running on beside the live one) are made on purpose.
 * Real parts: the stack's MongoDB-wire store (a database of the harness's own, which no shard
 * workflow of the stack serves) and its anvil, with a settler key of the harness's own that the
 * contract's owner allows, so the stack's worker and its nonces are left alone.
 */
export interface ShardHarness {
  store: Store;
  chain: ChainContext;
  deps: ShardDeps;
  /** Accepted captures whose next filter call can be held (heldFilter). */
  accepted: HeldAccepted;
  close(): Promise<void>;
}

/** AcceptedCaptures whose next filter call, once armed, waits after its read for the test to let it go. */
export class HeldAccepted extends AcceptedCaptures {
  private held: { reached: () => void; release: Promise<void> } | null = null;

  /** Arms the hold; resolves `reached` when a filter call is held, and it goes on when `release` resolves. */
  holdNext(release: Promise<void>): Promise<void> {
    return new Promise((reached) => {
      this.held = { reached, release };
    });
  }

  override async filter(c: Collections, entries: readonly SettlementQueueDoc[]): Promise<SettlementQueueDoc[]> {
    const out = await super.filter(c, entries);
    const held = this.held;
    if (held) {
      this.held = null;
      held.reached();
      await held.release;
    }
    return out;
  }
}

/** A step context whose sleeps the test can hold: each sleep waits for `wake` when one is armed. */
export function heldStep(): StepContext & { logs: { msg: string; fields: Record<string, unknown> }[]; holdSleep(): { reached: Promise<void>; wake: () => void } } {
  let hold: { reached: () => void; wake: Promise<void> } | null = null;
  const logs: { msg: string; fields: Record<string, unknown> }[] = [];
  return {
    logs,
    heartbeat: () => undefined,
    log: (msg, fields) => logs.push({ msg, fields }),
    async sleep(ms) {
      const h = hold;
      if (h) {
        hold = null;
        h.reached();
        await h.wake;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.min(ms, 50)));
    },
    holdSleep() {
      let wake!: () => void;
      let reached!: () => void;
      const reachedP = new Promise<void>((r) => (reached = r));
      hold = { reached, wake: new Promise<void>((r) => (wake = r)) };
      return { reached: reachedP, wake };
    },
  };
}

export const HARNESS_SETTINGS: SettlementSettings = { maxPayments: 100, maxWaitMs: 0, maxAttempts: 3, confirmations: 1, maxPaymentsUnderBacklog: 100, shardPollMs: 20 };

/** Allows a fresh settler key on the stack's contract (signed by the owner, anvil's dev key) and funds it for gas. */
export async function shardHarness(w: World): Promise<ShardHarness> {
  const env = loadEnv({ ...process.env, ...w.env });
  const store = await connectStore(w.env.MONGODB_URI as string, `shard-harness-${randomUUID().slice(0, 8)}`);
  const key = generatePrivateKey();
  await allowSettlerOnDevChain({ rpcUrl: w.env.RPC_URL as string, chainId: env.CHAIN_ID, settlement: w.settlement }, key, 10n ** 20n);
  const clients = makeChainClients({ rpcUrl: w.env.RPC_URL as string, chainId: env.CHAIN_ID, privateKey: key });
  const chain: ChainContext = {
    publicClient: clients.publicClient,
    walletClient: clients.walletClient!,
    account: clients.account!,
    nonces: new NonceManager(clients.publicClient, clients.walletClient!, {}),
    deployment: {
      chainId: env.CHAIN_ID,
      settlement: getAddress(w.settlement),
      asset: getAddress(w.asset),
      assetDecimals: 6,
      assetName: 'USD Coin',
      assetVersion: '2',
      settler: clients.account!.address,
      deployBlock: w.env.DEPLOY_BLOCK ?? '0',
    },
  };
  const accepted = new HeldAccepted();
  const deps: ShardDeps = { store, chain, settings: HARNESS_SETTINGS, shards: 1, temporal: w.temporal, taskQueue: 'shard-harness-unused', accepted };
  return {
    store,
    chain,
    deps,
    accepted,
    async close() {
      await store.db.dropDatabase().catch(() => undefined);
      await store.close();
    },
  };
}

export const newShard = (h: ShardHarness) => createShardSettlement(h.deps);

/** Puts accepted payments in shard 0's queue (their spend intents CONSUMED by them), each paying a fresh address. */
export async function queueAccepted(h: ShardHarness, count: number, amount = 1_000n): Promise<SettlementQueueDoc[]> {
  const at = new Date();
  const entries: SettlementQueueDoc[] = Array.from({ length: count }, (_, i) => ({
    _id: randomUUID(),
    spendIntentId: randomUUID(),
    borrowerId: randomUUID(),
    merchantId: randomUUID(),
    payTo: privateKeyToAddress(generatePrivateKey()).toLowerCase(),
    amount: (amount + BigInt(i)).toString(),
    workflow: { asset: h.chain.deployment.asset, network: 'eip155:84532', orderRef: `o-${i}`, capturedAt: at.toISOString() },
    at: new Date(at.getTime() + i),
  }));
  await h.store.c.settlementQueue(0).insertMany(entries);
  // The payments as capture stores them (the chain resync builds a batch's entries from them).
  await h.store.c.payments.insertMany(
    entries.map((e) => ({
      _id: e._id, voucherId: randomUUID(), spendIntentId: e.spendIntentId, merchantId: e.merchantId, borrowerId: e.borrowerId, operationalAgentId: randomUUID(),
      payTo: e.payTo, amount: e.amount, asset: e.workflow.asset, network: e.workflow.network, orderRef: e.workflow.orderRef, resource: 'https://merchant.example/r',
      idempotencyKey: randomUUID(), status: 'CAPTURING' as const, capturedAt: e.at, updatedAt: e.at, outcomeIn: 'batch' as const,
    })),
  );
  await h.store.c.spendIntentFates.insertMany(entries.map((e) => ({ _id: e.spendIntentId, fate: 'CONSUMED' as const, paymentId: e._id, at })));
  return entries;
}

/**
 * The ledger check of a harness run, against the chain: each payment has exactly one
 * PaymentSettled event on chain; every CONFIRMED batch record lists exactly the payments its
 * transaction settled, and the contract's stored root for the batch is its set's.
 */
export async function assertChainAgrees(h: ShardHarness, w: World, paymentIds: readonly string[]): Promise<void> {
  const wanted = new Map(paymentIds.map((id) => [uuidToBytes32(id).toLowerCase(), id]));
  const logs = await w.publicClient.getLogs({ address: w.settlement, event: paymentSettledEvent, fromBlock: BigInt(w.env.DEPLOY_BLOCK ?? '0'), toBlock: 'latest' });
  const paidTimes = new Map<string, number>();
  for (const l of logs) {
    const id = wanted.get(String(l.args.paymentId).toLowerCase());
    if (id) paidTimes.set(id, (paidTimes.get(id) ?? 0) + 1);
  }
  const wrong = paymentIds.filter((id) => paidTimes.get(id) !== 1).map((id) => `${id}: paid ${paidTimes.get(id) ?? 0} times`);
  if (wrong.length > 0) throw new Error(`not paid exactly once on chain: ${wrong.join('; ')}`);

  const batches = (await h.store.c.batches.find({}).toArray()).filter((b) => b.status === 'CONFIRMED');
  for (const b of await findBatches(h.store.c, batches.map((x) => x._id))) {
    const receipt = await w.publicClient.getTransactionReceipt({ hash: b.transaction as Hex });
    const onChain = parseEventLogs({ abi: creditSettlementAbi, eventName: 'PaymentSettled', logs: receipt.logs }).map((l) => l.args.paymentId.toLowerCase());
    const recorded = (b.paymentIds ?? []).map((id) => uuidToBytes32(id).toLowerCase());
    if (JSON.stringify([...onChain].sort()) !== JSON.stringify([...recorded].sort())) {
      throw new Error(`batch ${b._id}: its record lists ${recorded.length} payments, its transaction settled ${onChain.length} (${b.transaction})`);
    }
    const set = await h.store.c.batchSets.findOne({ _id: b._id });
    if (set) {
      const content = await settledContentOf(h.chain, b._id, set.entries.map((e) => ({ paymentId: e._id, borrowerId: e.borrowerId, merchantId: e.merchantId, payTo: e.payTo as Hex, amount: BigInt(e.amount) })));
      if (!content.matches) throw new Error(`batch ${b._id}: the chain's root ${content.onChain} is not its set's ${content.expected}`);
    }
  }
}
