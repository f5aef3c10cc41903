// Imported by Temporal workflow code: keep this file free of Node built-ins and dependencies.
import { PAYMENT_STATUSES, type PaymentStatus } from '@credit-facilitator/wire/payment-status';

// The receipt's shape is the wire's (one definition for the server, its OpenAPI document and the clients).
export type { Receipt } from '@credit-facilitator/wire/receipt';
export { PAYMENT_STATUSES, type PaymentStatus };

export const TERMINAL_STATUSES: readonly PaymentStatus[] = ['CONFIRMED', 'FAILED', 'VOIDED'];

export function isTerminal(status: PaymentStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export interface PaymentState {
  status: PaymentStatus;
  /** Settlement attempts that were sent back to the queue (reverted or dropped batches). */
  attempts: number;
  batchId?: string;
  transaction?: string;
  blockNumber?: string;
  confirmedAt?: string;
  failureReason?: string;
  voidedAt?: string;
  /** Why the last batch was sent back to the queue. */
  lastRequeueReason?: string;
}

export type PaymentEvent =
  | { type: 'submitted'; batchId: string; transaction: string }
  | { type: 'confirmed'; batchId: string; transaction: string; blockNumber: string; confirmedAt: string }
  | { type: 'requeued'; reason: string }
  | { type: 'failed'; reason: string };

export class PaymentTransitionError extends Error {
  override readonly name = 'PaymentTransitionError';
  constructor(
    readonly from: PaymentStatus,
    readonly event: PaymentEvent['type'],
    detail?: string,
  ) {
    super(`illegal payment transition: ${from} on '${event}'${detail ? ` (${detail})` : ''}`);
  }
}

export function initialPaymentState(): PaymentState {
  return { status: 'QUEUED', attempts: 0 };
}

/**
 * QUEUED -submitted-> SUBMITTED -confirmed-> CONFIRMED; SUBMITTED -requeued-> QUEUED;
 * QUEUED|SUBMITTED -failed-> FAILED. A repeat of the event that produced the current state
 * (same batch and transaction, same failure) returns the state unchanged, so redelivered
 * signals are harmless. Anything else throws PaymentTransitionError.
 */
export function nextPaymentState(state: PaymentState, event: PaymentEvent): PaymentState {
  const illegal = (detail?: string): never => {
    throw new PaymentTransitionError(state.status, event.type, detail);
  };
  switch (event.type) {
    case 'submitted':
      if (state.status === 'QUEUED') {
        return { ...state, status: 'SUBMITTED', batchId: event.batchId, transaction: event.transaction };
      }
      if (state.status === 'SUBMITTED' && state.batchId === event.batchId) {
        // Same batch rebroadcast (e.g. gas bump): only the transaction hash moves.
        return state.transaction === event.transaction ? state : { ...state, transaction: event.transaction };
      }
      return illegal(state.status === 'SUBMITTED' ? `already in batch ${state.batchId}` : undefined);

    case 'confirmed':
      if (state.status === 'SUBMITTED') {
        if (state.batchId !== event.batchId) return illegal(`submitted in batch ${state.batchId}`);
        return {
          ...state,
          status: 'CONFIRMED',
          transaction: event.transaction,
          blockNumber: event.blockNumber,
          confirmedAt: event.confirmedAt,
        };
      }
      if (
        state.status === 'CONFIRMED' &&
        state.batchId === event.batchId &&
        state.transaction === event.transaction &&
        state.blockNumber === event.blockNumber &&
        state.confirmedAt === event.confirmedAt
      ) {
        return state;
      }
      return illegal();

    case 'requeued': {
      if (state.status !== 'SUBMITTED') return illegal();
      const { batchId: _b, transaction: _t, ...rest } = state;
      return { ...rest, status: 'QUEUED', attempts: state.attempts + 1, lastRequeueReason: event.reason };
    }

    case 'failed':
      if (state.status === 'QUEUED' || state.status === 'SUBMITTED') {
        return { ...state, status: 'FAILED', failureReason: event.reason };
      }
      if (state.status === 'FAILED' && state.failureReason === event.reason) return state;
      return illegal();
  }
}

/** How a settlement shard's batch ended, as it tells each payment workflow in it (one signal each). */
export type BatchOutcome =
  | { status: 'CONFIRMED'; batchId: string; transaction: string; blockNumber: string; confirmedAt: string }
  | { status: 'FAILED'; batchId: string; failureReason: string; transaction?: string };

/** The one signal a payment workflow waits for: its batch's outcome, or its void. */
export type PaymentOutcome = BatchOutcome | { status: 'VOIDED'; voidedAt: string };

export function settledPaymentState(o: PaymentOutcome, attempts = 1): PaymentState {
  if (o.status === 'VOIDED') return { status: 'VOIDED', attempts: 0, voidedAt: o.voidedAt };
  return o.status === 'CONFIRMED'
    ? { status: 'CONFIRMED', attempts, batchId: o.batchId, transaction: o.transaction, blockNumber: o.blockNumber, confirmedAt: o.confirmedAt }
    : { status: 'FAILED', attempts, batchId: o.batchId, failureReason: o.failureReason, ...(o.transaction ? { transaction: o.transaction } : {}) };
}

/**
 * A batch's recorded state as the state of each payment in it (a batch being retried is QUEUED
 * again; a HALTED one, whose settled content on chain differs from its set, stays SUBMITTED until
 * an operator has looked: see docs/operations.md, "A shard halted").
 */
export interface BatchView {
  _id: string;
  status: 'SUBMITTED' | 'CONFIRMED' | 'FAILED' | 'RETRYING' | 'HALTED' | 'ABANDONED';
  transaction?: string;
  blockNumber?: string;
  confirmedAt?: Date;
  failureReason?: string;
}

export function paymentStateInBatch(b: BatchView): PaymentState {
  switch (b.status) {
    case 'RETRYING':
    case 'ABANDONED':
      return { status: 'QUEUED', attempts: 1 };
    case 'SUBMITTED':
    case 'HALTED':
      return { status: 'SUBMITTED', attempts: 1, batchId: b._id, ...(b.transaction ? { transaction: b.transaction } : {}) };
    case 'CONFIRMED':
      return settledPaymentState({
        status: 'CONFIRMED',
        batchId: b._id,
        transaction: b.transaction ?? '',
        blockNumber: b.blockNumber ?? '',
        confirmedAt: (b.confirmedAt ?? new Date(0)).toISOString(),
      });
    case 'FAILED':
      return settledPaymentState({ status: 'FAILED', batchId: b._id, failureReason: b.failureReason ?? 'settlement failed', ...(b.transaction ? { transaction: b.transaction } : {}) });
  }
}
