import type { BorrowerWebDeps } from './deps.js';
import { lastTokenIssuedAt, listBorrowerGrants, registeredClientName, type BorrowerGrant } from '../store/borrower-grants.js';

export interface ConnectedClientView {
  client_id: string;
  /** The name it registered with (dynamic registration), or null: a metadata-document client's id is its URL. */
  client_name: string | null;
  /** Every scope the borrower's wallet consented to for it. */
  scopes: string[];
  /** The first consent still standing. */
  granted_at: string | null;
  /** When it last got a token (sign-in or refresh), or null if unknown. */
  last_used_at: string | null;
  /** Live grants (one per consent still standing). */
  grants: number;
}

/** The OAuth clients the borrower has granted access and not disconnected, one entry per client, oldest first. */
export async function connectedClients(deps: BorrowerWebDeps, borrowerId: string): Promise<ConnectedClientView[]> {
  const byClient = new Map<string, BorrowerGrant[]>();
  for (const g of await listBorrowerGrants(deps.store.db, borrowerId, deps.nowMs())) {
    byClient.set(g.clientId, [...(byClient.get(g.clientId) ?? []), g]);
  }
  const db = deps.store.db;
  return Promise.all(
    [...byClient].map(async ([clientId, grants]) => {
      const [name, lastUsed] = await Promise.all([registeredClientName(db, clientId), lastTokenIssuedAt(db, grants.map((g) => g.grantId))]);
      const granted = grants[0]?.grantedAt ?? null;
      return {
        client_id: clientId,
        client_name: name,
        scopes: [...new Set(grants.flatMap((g) => g.scopes))],
        granted_at: granted?.toISOString() ?? null,
        last_used_at: lastUsed?.toISOString() ?? null,
        grants: grants.length,
      };
    }),
  );
}
