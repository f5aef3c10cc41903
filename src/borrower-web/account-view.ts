import type { BorrowerWebDeps } from './deps.js';
import { connectedClients, type ConnectedClientView } from './connected-clients.js';
import { spendDayId, utcDay } from '../domain/agent-policy.js';
import { ApiError } from '../domain/errors.js';
import { findBorrower } from '../store/borrowers.js';
import type { AgentKeyDoc, BorrowerDoc } from '../store/documents.js';
import { spentOn } from '../store/agent-spend.js';
import { findMerchant } from '../store/merchants.js';
import { recentBorrowerPayments } from '../store/payments.js';
import { withBatchOutcomes } from '../store/payment-outcomes.js';
import { listBorrowerAgentKeys, listOperationalAgents } from '../store/operational-agents.js';
import { findSpendIntent } from '../store/spend-intents.js';
import { agentKeyView, creditView } from '../agents/borrower-views.js';
import type { BorrowerSession } from './session.js';

/** How many open holds and recent payments the page lists. */
const MAX_HOLDS = 50;
const RECENT_PAYMENTS = 20;

export interface AccountView {
  borrower_id: string;
  wallet: string;
  handle: string | null;
  stage: string | null;
  suspended: { at: string; reason: string } | null;
  asset: { address: string; name: string; decimals: number; network: string };
  credit: { limit: string; available: string; held: string; debt: string };
  operational_agents: {
    operational_agent_id: string;
    label: string | null;
    /** The OAuth client it registered through (revoking the agent disconnects that client). */
    client_id: string;
    created_at: string;
    revoked_at: string | null;
    agent_keys: {
      key_id: string;
      public_key: string;
      status: AgentKeyDoc['status'];
      revoked_at: string | null;
      per_payment_limit: string | null;
      daily_limit: string | null;
      expires_at: number | null;
      spent_today: string;
    }[];
  }[];
  connected_clients: ConnectedClientView[];
  holds: { spend_intent_id: string; amount: string; merchant: string | null; order_ref: string | null; operational_agent_id: string | null; expires_at: string | null }[];
  recent_payments: { payment_id: string; amount: string; status: string; merchant: string | null; order_ref: string; operational_agent_id: string; captured_at: string }[];
}

/** The signed-in borrower, re-read: the session names them, the store says what they still are. */
export async function sessionBorrower(deps: BorrowerWebDeps, s: BorrowerSession): Promise<BorrowerDoc> {
  const b = await findBorrower(deps.store.c, s.borrowerId);
  if (!b || b.walletAddress?.toLowerCase() !== s.wallet) throw new ApiError('UNAUTHENTICATED', 'This session no longer matches a borrower; sign in again.');
  return b;
}

/** Everything the borrower page shows. Listings may scan the store (a status page, not a payment path). */
export async function accountView(deps: BorrowerWebDeps, s: BorrowerSession): Promise<AccountView> {
  const c = deps.store.c;
  const b = await sessionBorrower(deps, s);
  const today = utcDay(deps.nowMs());
  const merchantNames = new Map<string, Promise<string | null>>();
  const merchantName = (id: string) => {
    if (!merchantNames.has(id)) merchantNames.set(id, findMerchant(c, id).then((m) => m?.name ?? null));
    return merchantNames.get(id) as Promise<string | null>;
  };

  const [agents, keys, payments, clients] = await Promise.all([
    listOperationalAgents(c, b._id),
    listBorrowerAgentKeys(c, b._id),
    recentBorrowerPayments(c, b._id, RECENT_PAYMENTS).then((docs) => withBatchOutcomes(c, docs)),
    connectedClients(deps, b._id),
  ]);
  const spent = new Map(
    await Promise.all(keys.map(async (k) => [k._id, await spentOn(c, spendDayId(k._id, today))] as const)),
  );
  const holdEntries = Object.entries(b.holds ?? {}).slice(0, MAX_HOLDS);
  const holds = await Promise.all(
    holdEntries.map(async ([id, amount]) => {
      const intent = await findSpendIntent(c, id);
      return {
        spend_intent_id: id,
        amount: String(amount),
        merchant: intent ? await merchantName(intent.merchantId) : null,
        order_ref: intent?.orderRef ?? null,
        operational_agent_id: intent?.operationalAgentId ?? null,
        expires_at: intent ? new Date(intent.expiresAt * 1000).toISOString() : null,
      };
    }),
  );

  return {
    borrower_id: b._id,
    wallet: s.wallet,
    handle: b.handle ?? null,
    stage: b.stage ?? null,
    suspended: b.suspended ? { at: b.suspended.at.toISOString(), reason: b.suspended.reason } : null,
    asset: { address: deps.settlement.asset, name: deps.settlement.assetName, decimals: deps.settlement.assetDecimals, network: deps.settlement.network },
    credit: creditView(b),
    operational_agents: agents.map((a) => ({
      operational_agent_id: a._id,
      label: a.label ?? null,
      client_id: a.clientId,
      created_at: a.createdAt.toISOString(),
      revoked_at: a.revokedAt?.toISOString() ?? null,
      agent_keys: keys
        .filter((k) => k.operationalAgentId === a._id)
        .map((k) => ({ ...agentKeyView(k), revoked_at: k.revokedAt?.toISOString() ?? null, spent_today: String(spent.get(k._id) ?? 0) })),
    })),
    connected_clients: clients,
    holds,
    recent_payments: await Promise.all(
      payments.map(async (p) => ({
        payment_id: p._id,
        amount: p.amount,
        status: p.status,
        merchant: await merchantName(p.merchantId),
        order_ref: p.orderRef,
        operational_agent_id: p.operationalAgentId,
        captured_at: p.capturedAt.toISOString(),
      })),
    ),
  };
}
