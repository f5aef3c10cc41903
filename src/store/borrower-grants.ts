import type { Db } from 'mongodb';
import { collectionName } from './oauth-state.js';

/*
 * A borrower's OAuth grants (one per consent the borrower's wallet gave a client) as oidc-provider
 * stores them (oauth-state.ts), read and ended straight in the store: the borrower page and the
 * operator CLI have no provider instance, and ending must not wait for one.
 */

interface GrantDoc {
  _id: string;
  payload: string;
  expiresAt: Date | null;
  accountId?: string | null;
  clientId?: string | null;
}

interface TokenDoc {
  _id: string;
  payload: string;
  grantId: string | null;
}

/** The models whose documents carry the grantId they were issued under (what oidc-provider's own revoke deletes). */
const GRANT_BOUND_MODELS = ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode', 'BackchannelAuthenticationRequest'] as const;

export interface BorrowerGrant {
  grantId: string;
  clientId: string;
  /** Every scope consented under the grant (OIDC and resource scopes), deduplicated. */
  scopes: string[];
  grantedAt: Date | null;
  expiresAt: Date | null;
}

interface GrantPayload {
  accountId?: unknown;
  clientId?: unknown;
  iat?: unknown;
  openid?: { scope?: unknown };
  resources?: Record<string, unknown>;
}

function parsePayload(text: string): GrantPayload {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as GrantPayload) : {};
  } catch {
    return {};
  }
}

function scopesOf(p: GrantPayload): string[] {
  const lists = [p.openid?.scope, ...Object.values(p.resources ?? {})].filter((s): s is string => typeof s === 'string');
  return [...new Set(lists.flatMap((s) => s.split(' ')).filter(Boolean))];
}

const epochSeconds = (v: unknown): Date | null => (typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000) : null);

/**
 * The borrower's live grants, optionally of one client only. Grants stored before the adapter
 * kept accountId and clientId as fields are matched by their payload.
 */
export async function listBorrowerGrants(db: Db, borrowerId: string, nowMs: number, clientId?: string): Promise<BorrowerGrant[]> {
  const docs = await db
    .collection<GrantDoc>(collectionName('Grant'))
    .find({ $or: [{ accountId: borrowerId }, { accountId: { $exists: false } }] })
    .toArray();
  const out: BorrowerGrant[] = [];
  for (const doc of docs) {
    if (doc.expiresAt !== null && doc.expiresAt.getTime() <= nowMs) continue;
    const p = parsePayload(doc.payload);
    if (p.accountId !== borrowerId || typeof p.clientId !== 'string') continue;
    if (clientId !== undefined && p.clientId !== clientId) continue;
    out.push({ grantId: doc._id, clientId: p.clientId, scopes: scopesOf(p), grantedAt: epochSeconds(p.iat), expiresAt: doc.expiresAt });
  }
  return out.sort((a, b) => (a.grantedAt?.getTime() ?? 0) - (b.grantedAt?.getTime() ?? 0));
}

/**
 * Ends grants at once: the grant first (every access token naming it is refused on its next /mcp
 * call, src/store/oauth-grants.ts, and a refresh or code exchange under it is invalid_grant), then
 * what was issued under it. A refresh in flight may still store a token under the ended grant;
 * that token is useless, since its grant is gone.
 */
export async function endGrants(db: Db, grantIds: readonly string[]): Promise<void> {
  if (grantIds.length === 0) return;
  const ids = [...grantIds];
  await db.collection<GrantDoc>(collectionName('Grant')).deleteMany({ _id: { $in: ids } });
  await Promise.all(GRANT_BOUND_MODELS.map((m) => db.collection<TokenDoc>(collectionName(m)).deleteMany({ grantId: { $in: ids } })));
}

/** Ends every live grant of the borrower (or of one of its clients); returns how many it ended. */
export async function endBorrowerGrants(db: Db, borrowerId: string, nowMs: number, clientId?: string): Promise<number> {
  const grants = await listBorrowerGrants(db, borrowerId, nowMs, clientId);
  await endGrants(db, grants.map((g) => g.grantId));
  return grants.length;
}

/**
 * When a client last got a token under these grants (its newest refresh token: refresh tokens
 * rotate on every use, and an agent refreshes its short-lived access token as it works), or null.
 */
export async function lastTokenIssuedAt(db: Db, grantIds: readonly string[]): Promise<Date | null> {
  if (grantIds.length === 0) return null;
  const docs = await db.collection<TokenDoc>(collectionName('RefreshToken')).find({ grantId: { $in: [...grantIds] } }, { projection: { payload: 1 } }).toArray();
  const newest = Math.max(0, ...docs.map((d) => Number(parsePayload(d.payload).iat) || 0));
  return newest > 0 ? new Date(newest * 1000) : null;
}

/** The registered name of a DCR client, or null (metadata-document clients are not stored; their id is their URL). */
export async function registeredClientName(db: Db, clientId: string): Promise<string | null> {
  const doc = await db.collection<{ _id: string; payload: string }>(collectionName('Client')).findOne({ _id: clientId }, { projection: { payload: 1 } });
  if (!doc) return null;
  const name = (parsePayload(doc.payload) as { client_name?: unknown }).client_name;
  return typeof name === 'string' && name !== '' ? name.slice(0, 200) : null;
}
