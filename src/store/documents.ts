import type { PaymentStatus } from '../domain/payment.js';
import type { PaymentTerms } from '../domain/payment-terms.js';

export interface MerchantDoc {
  _id: string;
  name: string;
  payoutAddress: string;
  status: 'ACTIVE' | 'DISABLED';
  createdAt: Date;
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
  status: string;
  handle?: string;
  walletAddress?: string;
  creditLimit: number;
  /** creditLimit minus held and owed credit; only ever changed by conditional $inc. */
  available: number;
  /** Credit held per spend intent until its payment confirms or the hold is released. */
  holds: Record<string, number>;
  /** Settled debt as booked by confirmed payments; the chain's debtOf is the source of truth. */
  debt: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentKeyDoc {
  _id: string;
  borrowerId: string;
  operationalAgentId: string;
  publicKey: string;
  status: 'active' | 'revoked';
  createdAt: Date;
  revokedAt: Date | null;
}

export interface SpendIntentDoc extends PaymentTerms {
  _id: string;
  resource: string;
  status: 'RESERVED' | 'CONSUMED' | 'RELEASED' | 'EXPIRED';
  idempotencyKey: string;
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
  /** Set once, by the first batch that includes the payment: it can never ride in a second batch. */
  settlementBatchId?: string;
}

export interface IdempotencyDoc {
  /** `${merchantId}:${idempotencyKey}` */
  _id: string;
  merchantId: string;
  fingerprint: string;
  paymentId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface RateLimitDoc {
  /** `${merchantId}:${bucket}` */
  _id: string;
  /** GCRA theoretical arrival time, epoch milliseconds. */
  tat: number;
}
