import type { Collection, Db, Document } from 'mongodb';
import type {
  AgentKeyDoc,
  ApiKeyDoc,
  StoredBorrowerDoc,
  IdempotencyDoc,
  MerchantDoc,
  PaymentDoc,
  RateLimitSlotDoc,
  SpentTokenDoc,
  SpendIntentDoc,
  OperationalAgentDoc,
  SigningRequestDoc,
  HandleDoc,
  ToolIdempotencyDoc,
  AgentSpendDayDoc,
  RepaymentDoc,
  WalletDoc,
  SpendIntentFateDoc,
  SettlementClaimDoc,
  BatchSetDoc,
  SettlementQueueDoc,
  BatchDoc,
  ShardStatusDoc,
  LockDoc,
  LedgerDoc,
  WebhookEndpointDoc,
  WebhookDeliveryDoc,
  WebhookDeliveryLogDoc,
  PaymentRefundsDoc,
} from './documents.js';

export interface Collections {
  merchants: Collection<MerchantDoc>;
  apiKeys: Collection<ApiKeyDoc>;
  borrowers: Collection<StoredBorrowerDoc>;
  agentKeys: Collection<AgentKeyDoc>;
  spendIntents: Collection<SpendIntentDoc>;
  payments: Collection<PaymentDoc>;
  idempotency: Collection<IdempotencyDoc>;
  rateLimitSlots: Collection<RateLimitSlotDoc>;
  /** Spent sign-in challenges and signed-out sessions of the borrower page, until they expire. */
  spentTokens: Collection<SpentTokenDoc>;
  operationalAgents: Collection<OperationalAgentDoc>;
  signingRequests: Collection<SigningRequestDoc>;
  handles: Collection<HandleDoc>;
  toolIdempotency: Collection<ToolIdempotencyDoc>;
  agentSpendDays: Collection<AgentSpendDayDoc>;
  repayments: Collection<RepaymentDoc>;
  wallets: Collection<WalletDoc>;
  spendIntentFates: Collection<SpendIntentFateDoc>;
  settlementClaims: Collection<SettlementClaimDoc>;
  /** Each batch's decided set of payments (BatchSetDoc). */
  batchSets: Collection<BatchSetDoc>;
  locks: Collection<LockDoc>;
  batches: Collection<BatchDoc>;
  shardStatus: Collection<ShardStatusDoc>;
  /** The merchants' payment ledger, keyed for reads by _id (src/domain/payment-ledger.ts). */
  ledger: Collection<LedgerDoc>;
  webhookEndpoints: Collection<WebhookEndpointDoc>;
  /** One document per delivery of an event to an endpoint, read by _id. */
  webhookDeliveries: Collection<WebhookDeliveryDoc>;
  /** Each endpoint's deliveries in order (WebhookDeliveryLogDoc). */
  webhookDeliveryLog: Collection<WebhookDeliveryLogDoc>;
  /** Refunds of CONFIRMED payments, one document per payment. */
  refunds: Collection<PaymentRefundsDoc>;
  /** The settlement queue of one shard (see SettlementQueueDoc). */
  settlementQueue(shard: number): Collection<SettlementQueueDoc>;
}

export const SETTLEMENT_QUEUE_PREFIX = 'settlement_queue_';

/**
 * The product's collections. Given a function, each collection follows the Db it returns at the
 * time of each call, so a store whose client was replaced (store-watchdog.ts) keeps working for
 * everyone holding `c`.
 */
export function collections(source: Db | (() => Db)): Collections {
  const db = typeof source === 'function' ? following(source) : source;
  return {
    merchants: db.collection<MerchantDoc>('merchants'),
    apiKeys: db.collection<ApiKeyDoc>('api_keys'),
    borrowers: db.collection<StoredBorrowerDoc>('borrowers'),
    agentKeys: db.collection<AgentKeyDoc>('agent_keys'),
    spendIntents: db.collection<SpendIntentDoc>('spend_intents'),
    payments: db.collection<PaymentDoc>('payments'),
    idempotency: db.collection<IdempotencyDoc>('idempotency_keys'),
    rateLimitSlots: db.collection<RateLimitSlotDoc>('rate_limit_slots'),
    spentTokens: db.collection<SpentTokenDoc>('spent_tokens'),
    operationalAgents: db.collection<OperationalAgentDoc>('operational_agents'),
    signingRequests: db.collection<SigningRequestDoc>('signing_requests'),
    handles: db.collection<HandleDoc>('handles'),
    toolIdempotency: db.collection<ToolIdempotencyDoc>('tool_idempotency'),
    agentSpendDays: db.collection<AgentSpendDayDoc>('agent_spend_days'),
    repayments: db.collection<RepaymentDoc>('repayments'),
    wallets: db.collection<WalletDoc>('wallets'),
    spendIntentFates: db.collection<SpendIntentFateDoc>('spend_intent_fates'),
    settlementClaims: db.collection<SettlementClaimDoc>('settlement_claims'),
    batchSets: db.collection<BatchSetDoc>('settlement_batch_sets'),
    locks: db.collection<LockDoc>('locks'),
    batches: db.collection<BatchDoc>('settlement_batches'),
    shardStatus: db.collection<ShardStatusDoc>('settlement_shards'),
    ledger: db.collection<LedgerDoc>('payment_ledger'),
    webhookEndpoints: db.collection<WebhookEndpointDoc>('webhook_endpoints'),
    webhookDeliveries: db.collection<WebhookDeliveryDoc>('webhook_deliveries'),
    webhookDeliveryLog: db.collection<WebhookDeliveryLogDoc>('webhook_delivery_log'),
    refunds: db.collection<PaymentRefundsDoc>('payment_refunds'),
    settlementQueue: (shard: number) => db.collection<SettlementQueueDoc>(`${SETTLEMENT_QUEUE_PREFIX}${shard}`),
  };
}

/** A stand-in Db whose collection(name) forwards every call to the current Db's collection of that name. */
function following(current: () => Db): Db {
  return {
    collection<T extends Document>(name: string) {
      let from: Db | undefined;
      let target: Collection<T> | undefined;
      const resolve = () => {
        const now = current();
        if (now !== from) {
          from = now;
          target = now.collection<T>(name);
        }
        return target!;
      };
      return new Proxy({} as Collection<T>, {
        get(_, prop) {
          const t = resolve();
          const v = Reflect.get(t, prop, t) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        },
      });
    },
  } as Db;
}

/** FerretDB v1 supports plain and unique indexes but not TTL: expiry is checked on read and swept. */
export async function ensureIndexes(c: Collections): Promise<void> {
  await Promise.all([
    c.apiKeys.createIndex({ merchantId: 1 }),
    c.agentKeys.createIndex({ operationalAgentId: 1 }),
    c.spendIntents.createIndex({ borrowerId: 1, orderRef: 1 }),
    c.payments.createIndex({ voucherId: 1 }, { unique: true }),
    c.payments.createIndex({ merchantId: 1, capturedAt: -1 }),
    c.payments.createIndex({ status: 1, updatedAt: 1 }),
    c.idempotency.createIndex({ expiresAt: 1 }),
    c.rateLimitSlots.createIndex({ expiresAt: 1 }),
    c.spentTokens.createIndex({ expiresAt: 1 }),
    c.operationalAgents.createIndex({ borrowerId: 1 }),
    c.signingRequests.createIndex({ borrowerId: 1, createdAt: -1 }),
    c.spendIntents.createIndex({ status: 1, expiresAt: 1 }),
    c.repayments.createIndex({ borrowerId: 1 }),
  ]);
}
