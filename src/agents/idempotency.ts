import type { AgentDeps } from './deps.js';
import { fingerprint } from '@credit-facilitator/wire/canonical';
import type { ToolIdempotencyDoc } from '../store/documents.js';
import { claimToolRecord, deleteToolRecordIfStill } from '../store/tool-idempotency.js';
import { ToolError } from '../domain/tool-errors.js';
import type { BorrowerPrincipal } from './types.js';

export type ToolRef = Record<string, unknown>;

export interface ToolClaim<R extends ToolRef> {
  /** What the first call with this key created (or will create): ids chosen before the claim. */
  ref: R;
  /** True when an earlier call holds the key: the caller replays the current state of `ref`. */
  replayed: boolean;
}

/** Arguments that do not change what a call creates, so they stay out of the fingerprint. */
const UNFINGERPRINTED = new Set(['wait_seconds', 'idempotency_key']);

export function toolFingerprint(tool: string, args: Record<string, unknown>): string {
  const kept = Object.fromEntries(Object.entries(args).filter(([k, v]) => !UNFINGERPRINTED.has(k) && v !== undefined));
  return fingerprint({ tool, args: JSON.parse(JSON.stringify(kept)) as unknown });
}

export const toolIdempotencyId = (borrowerId: string, key: string): string => `${borrowerId}:${key}`;

/**
 * Binds (borrower, idempotency key) to one tool call. Insert-first under the unique _id: of
 * concurrent duplicates exactly one inserts, the others read its ref, so all of them converge on
 * the same created thing. Same key with other arguments is IDEMPOTENCY_KEY_CONFLICT. An expired
 * record is replaced, so keys can be reused after the retention window.
 */
export async function claimToolCall<R extends ToolRef>(
  deps: AgentDeps,
  p: BorrowerPrincipal,
  o: { tool: string; key: string; args: Record<string, unknown>; newRef: () => R },
): Promise<ToolClaim<R>> {
  const c = deps.store.c;
  const now = new Date(deps.nowMs());
  const doc: ToolIdempotencyDoc = {
    _id: toolIdempotencyId(p.borrowerId, o.key),
    borrowerId: p.borrowerId,
    tool: o.tool,
    fingerprint: toolFingerprint(o.tool, o.args),
    ref: o.newRef(),
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.env.IDEMPOTENCY_RETENTION_HOURS * 3600_000),
  };
  return claimToolRecord<ToolClaim<R>>(c, {
    attempts: 3,
    doc: () => doc,
    won: () => ({ ref: doc.ref as R, replayed: false }),
    held: async (existing) => {
      if (existing.expiresAt <= now) {
        await deleteToolRecordIfStill(c, doc._id, (d) => d.expiresAt.getTime() === existing.expiresAt.getTime());
        return 'retry';
      }
      if (existing.fingerprint !== doc.fingerprint) {
        throw new ToolError('IDEMPOTENCY_KEY_CONFLICT', 'this idempotency_key was used with other arguments; use a new key for a new request', {
          tool: existing.tool,
        });
      }
      return { answer: { ref: (existing.ref ?? {}) as R, replayed: true } };
    },
    unsettled: () => new ToolError('UNAVAILABLE', 'idempotency key claim did not settle; retry'),
  });
}

/** Frees a key whose first call was refused, so the agent can fix the cause and retry with it. */
export async function releaseToolCall(deps: AgentDeps, p: BorrowerPrincipal, key: string, ref: ToolRef): Promise<void> {
  // Field by field: only the claim that created this ref may be released, never a newer one.
  await deleteToolRecordIfStill(deps.store.c, toolIdempotencyId(p.borrowerId, key), (d) => Object.entries(ref).every(([k, v]) => d.ref?.[k] === v));
}

/**
 * claimToolCall + run: a ToolError from the first call releases the key (nothing was created that
 * the agent could replay); a replay never releases.
 */
export async function idempotentToolCall<R extends ToolRef, T>(
  deps: AgentDeps,
  p: BorrowerPrincipal,
  o: { tool: string; key: string; args: Record<string, unknown>; newRef: () => R },
  run: (claim: ToolClaim<R>) => Promise<T>,
): Promise<T> {
  const claim = await claimToolCall(deps, p, o);
  try {
    return await run(claim);
  } catch (err) {
    if (!claim.replayed && err instanceof ToolError) await releaseToolCall(deps, p, o.key, claim.ref);
    throw err;
  }
}
