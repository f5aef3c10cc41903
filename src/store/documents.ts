import type { AgentGrant } from '../domain/agent-policy.js';
export type { AgentGrant };
import type { RefundAuthorizationFields, RefundStatus } from '../domain/refunds.js';
import type { LedgerLine } from '../domain/payment-ledger.js';
import type { PaymentStatus } from '../domain/payment.js';
import type { PaymentTerms } from '@credit-facilitator/wire/payment-terms';
import type { OnboardingStage } from '@credit-facilitator/wire/onboarding';
import type { RatePolicy } from '../domain/rate-limit.js';
import type { WebhookEvent, WebhookEventType } from '../domain/webhook-events.js';

export interface MerchantDoc {
  _id: string;
  name: string;
  payoutAddress: string;
  status: 'ACTIVE' | 'DISABLED';
  /** Operator-set limits for this merchant; absent buckets use the RATE_LIMIT_* defaults. */
  rateLimits?: MerchantRateLimits;
  createdAt: Date;
}

export interface MerchantRateLimits {
  verify?: RatePolicy;
  capture?: RatePolicy;
}

export interface ApiKeyDoc {
  /** SHA-256 hex of the whole key: the secret itself is never stored. */
  _id: string;
  keyId: string;
  merchantId: string;
  /** First characters of the key, safe to show so operators can tell keys apart. */
  prefix: string;
  permissions: string[];
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt?: Date;
}

export interface BorrowerDoc {
  _id: string;
  /** 'ACTIVE' once onboarding reached ACTIVE (the only status that may spend), else 'ONBOARDING'. */
  status: string;
  /** Mirror of the onboarding workflow's stage; the workflow is the source of truth. */
  stage?: OnboardingStage;
  handle?: string;
  /** Lowercase 0x address proven at sign-in; the wallets collection keeps it unique. */
  walletAddress?: string;
  creditLimit: number;
  /** creditLimit minus held and owed credit; only changed under the borrower's lease (borrower-changes.ts). */
  available: number;
  /** Credit held per spend intent until its payment confirms or the hold is released. */
  holds: Record<string, number>;
  /** Settled debt as booked by confirmed payments; the chain's debtOf is the source of truth. */
  debt: number;
  /** Repayments already booked into debt/available, by repayment id (makes booking idempotent). */
  bookedRepayments?: Record<string, number>;
  /** Set by an operator: no new holds (prepare) or captures; payments captured before still settle. */
  suspended?: { at: Date; reason: string } | null;
  /** Its operational agents, so they are fetched by _id (absent on documents older than the list). */
  operationalAgentIds?: string[];
  /** Fencing token of the last lease holder that read it (fencing.ts). */
  fence?: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A borrower as stored (borrower-record.ts reads and writes it): the open holds are one JSON text,
 * `holdsJson`, not a map. Documents written before that carry the map in `holds` until their next write.
 */
export type StoredBorrowerDoc = Omit<BorrowerDoc, 'holds'> & { holdsJson?: string; holds?: Record<string, number> };

export interface AgentKeyDoc {
  _id: string;
  borrowerId: string;
  operationalAgentId: string;
  publicKey: string;
  status: 'active' | 'revoked';
  createdAt: Date;
  revokedAt: Date | null;
  /** The borrower's EIP-712 AgentGrant for this key; absent only for dev-seeded keys. */
  grant?: AgentGrant;
}


/** The verification fields of one agent key, as copied onto its operational agent. */
export type AgentKeyCopy = Pick<AgentKeyDoc, 'publicKey' | 'status' | 'borrowerId' | 'createdAt'> & { keyId: string };

/** What an operational agent keeps of its borrower's standing (the borrower document stays the truth). */
export interface BorrowerStandingCopy {
  /** BorrowerDoc.status ('ACTIVE' when it may spend). */
  status: string;
  /** Whether BorrowerDoc.suspended was set. */
  suspended: boolean;
  /** The borrower document's `fence` when it had this standing: a copy is only ever replaced by a later one. */
  version: number;
}

/** One terminal (agent host install) acting for a borrower; register_borrower creates one per idempotency key. */
export interface OperationalAgentDoc {
  _id: string;
  borrowerId: string;
  clientId: string;
  label?: string;
  /** Its agent keys, revoked ones included, so they are fetched by _id (absent on older documents). */
  agentKeyIds?: string[];
  /**
   * A copy of what a capture checks of each listed key, so it reads the agent and its keys at once
   * (agent-key-copies.ts). Every key writer updates it first; absent on older documents, whose
   * captures read the keys themselves.
   */
  keys?: AgentKeyCopy[];
  /**
   * A copy of its borrower's standing, so a capture that it says may spend does not read the
   * borrower (borrower-standing-copies.ts). Every standing writer updates it before returning;
   * absent on older documents (and until a new agent's first copy lands), whose captures read the borrower.
   */
  borrowerStanding?: BorrowerStandingCopy;
  /** Set when the borrower revoked the whole agent: its keys are revoked and it gets no new ones. */
  revokedAt?: Date;
  createdAt: Date;
}

export type SigningKind = 'facility_acceptance' | 'agent_grant' | 'repayment';

/** A typed-data signature the borrower is asked to make on our signing page. */
export interface SigningRequestDoc {
  /** UUID v4; the signing link carries it, so it must stay unguessable. */
  _id: string;
  borrowerId: string;
  kind: SigningKind;
  /** JSON typed data (bigints as strings), exactly what the wallet signs. */
  typedData: Record<string, unknown>;
  /** Lowercase wallet that must sign. */
  wallet: string;
  status: 'PENDING' | 'SIGNED' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
  /** What to do once signed, e.g. the agent key to register or the repayment amount. */
  action: Record<string, unknown>;
  signature?: string;
  result?: Record<string, unknown>;
  failureReason?: string;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** Unique handle registry: _id is the normalised handle. */
export interface HandleDoc {
  _id: string;
  borrowerId: string;
  claimedAt: Date;
}

/** Idempotency of agent tool writes: per borrower, per key. */
export interface ToolIdempotencyDoc {
  /** `${borrowerId}:${idempotencyKey}` */
  _id: string;
  borrowerId: string;
  tool: string;
  fingerprint: string;
  /** What the first call created (signing request, spend intent, repayment, terminal...). */
  ref?: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date;
}

/** Daily spend of one agent key, for the grant's daily limit; only changed under the day's lease (agent-spend.ts). */
export interface AgentSpendDayDoc {
  /** `${agentKeyId}:${yyyy-mm-dd}` (UTC) */
  _id: string;
  agentKeyId: string;
  spent: number;
  /** Amount charged per spend intent, so a retried charge or refund counts once. */
  charges?: Record<string, number>;
  /** Fencing token of the last lease holder that read it (fencing.ts). */
  fence?: number;
}

export interface RepaymentDoc {
  _id: string;
  borrowerId: string;
  amount: string;
  from: string;
  nonce: string;
  signingRequestId: string;
  status: 'AWAITING_SIGNATURE' | 'SUBMITTED' | 'CONFIRMED' | 'FAILED';
  transaction?: string;
  blockNumber?: string;
  failureReason?: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SpendIntentDoc extends PaymentTerms {
  _id: string;
  resource: string;
  status: 'RESERVED' | 'CONSUMED' | 'RELEASED' | 'EXPIRED';
  /** One per orderRef: the Idempotency-Key the agent sends with PAYMENT-SIGNATURE for the merchant's capture. */
  idempotencyKey: string;
  /** The agent key whose grant limits were charged (daily spend), when prepared through MCP. */
  agentKeyId?: string;
  /** The unsigned voucher returned to the agent, so a retry for the same orderRef returns the same one. */
  voucher?: Record<string, unknown>;
  /**
   * The merchant's accepted PaymentRequirements entry the voucher answers (replayed with the voucher),
   * as JSON text: the merchant writes its `extra`, and keys like "$where" or "a.b" are not storable fields.
   */
  paymentRequirementsJson?: string;
  expiresAt: number;
  consumedByVoucherId?: string;
  paymentId?: string;
  createdAt: Date;
}

export type StoredPaymentStatus = 'CAPTURING' | PaymentStatus;

export interface PaymentDoc {
  _id: string;
  voucherId: string;
  spendIntentId: string;
  merchantId: string;
  borrowerId: string;
  operationalAgentId: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  orderRef: string;
  resource: string;
  idempotencyKey: string;
  status: StoredPaymentStatus;
  capturedAt: Date;
  updatedAt: Date;
  batchId?: string;
  transaction?: string;
  blockNumber?: string;
  confirmedAt?: Date;
  failureReason?: string;
  voidedAt?: Date;
  /**
   * Where a settled payment's outcome is kept: 'batch' for every capture of today's code, which
   * stays CAPTURING once claimed (its batch record, named by its settlement claim, says CONFIRMED
   * or FAILED; store/payment-outcomes.ts). Absent on payments of earlier releases, whose outcome
   * was written here.
   */
  outcomeIn?: 'batch';
}

/**
 * What became of a spend intent, decided once by a unique insert: consumed by one voucher's
 * payment, or expired. FerretDB v1 runs a guarded update as read-then-write, so only an insert
 * can decide a race.
 */
export interface SpendIntentFateDoc {
  _id: string;
  fate: 'CONSUMED' | 'EXPIRED';
  voucherId?: string;
  paymentId?: string;
  at: Date;
}

/** The one batch a payment may ever settle in (_id = paymentId), claimed by a unique insert. */
export interface SettlementClaimDoc {
  _id: string;
  batchId: string;
  at: Date;
}

/**
 * An accepted (or being accepted) capture waiting for settlement, in its shard's queue
 * (settlement_queue_<shard>). Written by capture before the spend intent is consumed, removed when
 * its batch ends; so the queues hold only pending payments and a full scan of one stays O(backlog).
 */
export interface SettlementQueueDoc {
  _id: string;
  spendIntentId: string;
  borrowerId: string;
  merchantId: string;
  payTo: string;
  amount: string;
  /** What the payment workflow is started with if it has to be started by the settler. */
  workflow: {
    asset: string;
    network: string;
    orderRef: string;
    capturedAt: string;
  };
  at: Date;
  /** W3C traceparent of the capture that queued it, when tracing was on: its batch's spans link to it. */
  traceparent?: string;
}

/**
 * The one set of payments a batch settles (_id = batchId), decided once: inserted by the first
 * gather attempt that claims for the batch (an attempt that found nothing inserts it empty), and
 * never changed. A later attempt adopts it, and every later step (submit, confirm, end, notify,
 * the orphan rule) reads only it.
 */
export interface BatchSetDoc {
  _id: string;
  shard: number;
  /** The payments' queue entries in the order they go on chain; empty when the gather found none. */
  entries: SettlementQueueDoc[];
  at: Date;
}

/**
 * ABANDONED: a decided set no shard works on and the chain never settled (its gather was lost with
 * a Temporal restored older than the store): its claims are released, its payments ride in later
 * batches (src/settlement/chain-resync.ts).
 */
export type BatchStatus = 'SUBMITTED' | 'CONFIRMED' | 'FAILED' | 'RETRYING' | 'HALTED' | 'ABANDONED';

/** A shard's batch as its workflow last saw it: what status polls read for every payment in it. */
export interface BatchDoc {
  _id: string;
  shard: number;
  status: BatchStatus;
  payments: number;
  /** Its payments, recorded when it is broadcast, so API processes learn batch membership per batch. */
  paymentIds?: string[];
  transaction?: string;
  blockNumber?: string;
  confirmedAt?: Date;
  failureReason?: string;
  /** HALTED: why the shard stopped at this batch (its settled content on chain differs from its set). */
  haltReason?: string;
  updatedAt: Date;
}

/**
 * What a shard tells API processes: its queue length (`shard-<n>`, written as it gathers; captures
 * are shed on the sum) and its latest batches (`batches-<n>`, written as each is broadcast; polls
 * learn which batch a payment rides in from them).
 */
export interface ShardStatusDoc {
  _id: string;
  shard?: number;
  pending?: number;
  batchIds?: string[];
  /** `batches-<shard>`: a new value at each write, for announceBatch's compare-and-set. */
  rev?: string;
  /** `batches-<shard>`: each listed batch's version (the revision of the board write after its latest record write). */
  versions?: Record<string, string>;
  /** `batches-<shard>`: the revision `versions` was written with; another revision (a writer older than versions) voids them. */
  versionsRev?: string;
  /** `voids-<YYYYMMDDHHmm>` / `refunds-<YYYYMMDDHHmm>`: the payments voided (a refund announced for) in that minute, for polls in every API process. */
  paymentIds?: string[];
  /** `chain-resync`: the last block the chain resync covered (decimal). */
  block?: string;
  at: Date;
}

export interface IdempotencyDoc {
  /** `${merchantId}:${idempotencyKey}` */
  _id: string;
  merchantId: string;
  fingerprint: string;
  paymentId: string;
  /** Refund requests: the refund this key created. */
  refundId?: string;
  createdAt: Date;
  expiresAt: Date;
}

/** A single-use credential already spent (a sign-in challenge) or ended early (a signed-out session). */
export interface SpentTokenDoc {
  /** `<kind>:<the token's own random id>`: the unique _id makes spending atomic. */
  _id: string;
  /** When the token expires on its own; swept after. */
  expiresAt: Date;
}

/** One admitted request's claim on a rate-limit slot (see domain/rate-limit.ts). */
export interface RateLimitSlotDoc {
  /** `${bucket}:${slot}`: the unique _id is what makes a claim atomic. */
  _id: string;
  /** `${merchantId}:${verify|capture}@${perMinute}` */
  bucket: string;
  slot: number;
  /** When the slot has passed; swept after. */
  expiresAt: Date;
}

/** One borrower per wallet: _id is the lowercase address (a unique key FerretDB v1 supports). */
export interface WalletDoc {
  _id: string;
  borrowerId: string;
  createdAt: Date;
}

/** A lease lock (see lease-lock.ts): `_id` is what is locked, e.g. `borrower:<id>`. */
export interface LockDoc {
  _id: string;
  /** Random per acquisition: only its holder releases it. */
  owner: string;
  /** After this the holder is presumed dead and the lock may be taken over. */
  expiresAt: Date;
}

/** A key of the merchants' payment ledger (see src/domain/payment-ledger.ts for the layout). */
export interface LedgerDoc {
  _id: string;
  merchantId: string;
  /** `m|` docs: days with lines (YYYYMMDD). */
  days?: string[];
  /** `d|` docs: minutes of the day with lines (YYYYMMDDHHmm). */
  minutes?: string[];
  /** `i|` docs: the writers with a page in the minute. */
  writers?: string[];
  /** `p|` docs: the lines of payments captured in the minute (one writer's, or all of a page from before writers had their own). */
  lines?: LedgerLine[];
  /** `o|` docs: payment ids with this orderRef. */
  paymentIds?: string[];
}

/** One refund of a payment, as kept inside its PaymentRefundsDoc. */
export interface RefundRecord {
  refundId: string;
  amount: string;
  status: RefundStatus;
  authorization: RefundAuthorizationFields;
  signature: string;
  transaction?: string;
  blockNumber?: string;
  debtReduced?: string;
  failureReason?: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A CONFIRMED payment's refunds, keyed by paymentId (one _id read answers a poll). Changed only
 * under the payment's fenced lease, so two refunds can never together exceed the payment.
 */
export interface PaymentRefundsDoc {
  _id: string;
  merchantId: string;
  borrowerId: string;
  /** The settled payment: amount, batch and settleBatch transaction the refund proves against. */
  amount: string;
  batchId: string;
  transaction: string;
  refunds: RefundRecord[];
  fence?: number;
}

/** A merchant's webhook endpoint. Secrets are kept to sign with (as Stripe does); never logged, shown once. */
export interface WebhookEndpointDoc {
  _id: string;
  merchantId: string;
  url: string;
  /** Newest first; a rotated-out secret keeps signing until `expiresAt`, so receivers can switch. */
  secrets: { secret: string; createdAt: Date; expiresAt?: Date }[];
  createdAt: Date;
  /** The payment events it receives; absent (endpoints made before subscriptions), all of them. */
  events?: WebhookEventType[];
}

export type WebhookDeliveryOutcome = 'pending' | 'delivered' | 'failed';

/**
 * One delivery of one event to one endpoint: one delivery workflow's attempt series for that
 * event (a resend is a new delivery of the same event). Fixed size: the last attempt only, its
 * error cut short; the event is kept so it can be sent again.
 */
export interface WebhookDeliveryDoc {
  _id: string;
  endpointId: string;
  merchantId: string;
  /** Its place in the endpoint's log (WebhookDeliveryLogDoc), 1 for the first delivery. */
  seq: number;
  event: WebhookEvent;
  createdAt: Date;
  attempts: number;
  outcome: WebhookDeliveryOutcome;
  lastAttemptAt?: Date;
  lastStatusCode?: number;
  lastLatencyMs?: number;
  lastError?: string;
  nextRetryAt?: Date;
  /** The delivery this one sends again, for a resend. */
  resendOf?: string;
}

/**
 * An endpoint's delivery log laid out for reads by _id (FerretDB v1 scans on any other filter):
 * `n|<endpointId>` counts the deliveries (`next`), `s|<endpointId>|<seq>` names the delivery at
 * that place (`deliveryId`).
 */
export interface WebhookDeliveryLogDoc {
  _id: string;
  next?: number;
  deliveryId?: string;
}
