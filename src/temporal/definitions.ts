import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { PaymentOutcome, PaymentState } from '../domain/payment.js';

/** Names shared by workflows, activities and the API; importing this file pulls in no workflow code. */
/** The single batcher of the code before settlement shards; it only drains payments captured then. */
export const BATCHER_WORKFLOW_ID = 'settlement-batcher';
export const settlementShardWorkflowId = (shard: number): string => `settlement-shard-${shard}`;
export const CAPTURE_SWEEPER_WORKFLOW_ID = 'capture-sweeper';
/** The payment workflow type new captures start; `paymentWorkflow` executions of older releases still finish. */
export const PAYMENT_WORKFLOW_TYPE = 'paymentWorkflowV2';
/** Every payment workflow type, for visibility queries. */
export const PAYMENT_WORKFLOW_TYPES = ['paymentWorkflowV2', 'paymentWorkflow'] as const;

export interface PaymentWorkflowInput {
  paymentId: string;
  merchantId: string;
  borrowerId: string;
  spendIntentId: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  orderRef: string;
  capturedAt: string;
  /**
   * True when the payment is already in its settlement queue (every start by this code). Absent
   * from starts by an API older than settlement shards, which enqueued nothing: the workflow then
   * enqueues itself first, so API and worker can be upgraded in either order.
   */
  queued?: boolean;
}

export interface QueuedPayment {
  paymentId: string;
}

export interface BatchSubmitted {
  batchId: string;
  transaction: string;
}

export interface BatchConfirmed {
  batchId: string;
  transaction: string;
  blockNumber: string;
  confirmedAt: string;
}

export interface BatchRequeued {
  batchId: string;
  reason: string;
}

export interface PaymentFailed {
  batchId?: string;
  reason: string;
}

export interface BatcherState {
  queued: number;
  inFlight: { batchId: string; payments: number; transaction?: string } | null;
  batchesSettled: number;
  paymentsSettled: number;
}

export const paymentStatusQuery = defineQuery<PaymentState>('status');
export const batchSubmittedSignal = defineSignal<[BatchSubmitted]>('batchSubmitted');
export const batchConfirmedSignal = defineSignal<[BatchConfirmed]>('batchConfirmed');
export const batchRequeuedSignal = defineSignal<[BatchRequeued]>('batchRequeued');
export const paymentFailedSignal = defineSignal<[PaymentFailed]>('paymentFailed');

/** The one signal a payment workflow gets from its settlement shard: how its batch ended. */
export const paymentSettledSignal = defineSignal<[PaymentOutcome]>('paymentSettled');

export interface SettlementShardInput {
  shard: number;
  /** Informational: the count in force is read from the worker's settings at each run. */
  shards: number;
  batchesSettled?: number;
  paymentsSettled?: number;
}

export interface ShardState {
  shard: number;
  inFlight: { batchId: string; payments: number; attempt: number; transaction?: string } | null;
  /** The batch the shard stopped at: it settled on chain with content other than its set (absent in runs before halts existed). */
  halted?: { batchId: string; reason: string; transaction: string } | null;
  batchesSettled: number;
  paymentsSettled: number;
}
export const shardStateQuery = defineQuery<ShardState>('state');
/** Has a halted shard check its batch against the chain again, once an operator has looked (docs/operations.md). */
export const resumeShardSignal = defineSignal('resumeShard');

export const enqueuePaymentSignal = defineSignal<[QueuedPayment]>('enqueuePayment');
export const batcherStateQuery = defineQuery<BatcherState>('state');
