import { randomUUID } from 'node:crypto';
import type { SigningRequestDoc } from '../../src/store/documents.js';

/** A bare PENDING repayment signing request, for store-level tests; `expiresInMs` may be negative. */
export function pendingSigningRequest(opts: { borrowerId?: string; expiresInMs?: number; now?: Date } = {}): SigningRequestDoc {
  const now = opts.now ?? new Date();
  return {
    _id: randomUUID(),
    borrowerId: opts.borrowerId ?? randomUUID(),
    kind: 'repayment',
    typedData: {},
    wallet: '0x0000000000000000000000000000000000000001',
    status: 'PENDING',
    action: {},
    expiresAt: new Date(now.getTime() + (opts.expiresInMs ?? 600_000)),
    createdAt: now,
    updatedAt: now,
  };
}
