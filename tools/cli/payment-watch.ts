import { baseUrl } from '../../src/config/env.js';
import { findPayment } from '../../src/store/payments.js';
import type { CliContext } from './context.js';
import { jwtIssue } from './merchant-commands.js';

const FINAL = new Set(['CONFIRMED', 'FAILED', 'VOIDED']);

/** A payment's status as its merchant sees it (the API's receipt), or the store's copy when the API cannot be asked. */
export interface WatchedPayment {
  status: string;
  receipt?: Record<string, unknown>;
  source: 'api' | 'store';
  note?: string;
}

/**
 * The merchant credential the CLI polls with: the key given, else a short dev JWT for the merchant
 * (read permission only) signed with the dev stack's issuer key in DATA_DIR.
 */
async function credential(ctx: CliContext, merchantId: string, apiKey: string | undefined): Promise<string | null> {
  if (apiKey) return apiKey;
  try {
    return (await jwtIssue(ctx, { merchant: merchantId, permissions: 'x402:settle:read', ttl: '900' })).token;
  } catch {
    return null;
  }
}

/**
 * GET /facilitator/payments/{id} as the merchant; with `waitSeconds`, long polls (`Prefer: wait=30`)
 * until the payment is final or the time is up.
 */
export async function watchPayment(ctx: CliContext, merchantId: string, paymentId: string, opts: { apiKey?: string; waitSeconds?: number } = {}): Promise<WatchedPayment> {
  const token = await credential(ctx, merchantId, opts.apiKey);
  if (!token) return fromStore(ctx, paymentId, 'no merchant credential to ask the API with (pass --api-key): the store\'s copy, which may trail');
  const deadline = Date.now() + (opts.waitSeconds ?? 0) * 1000;
  const url = `${baseUrl(ctx.env)}/facilitator/payments/${encodeURIComponent(paymentId)}`;
  for (;;) {
    const wait = Math.min(30, Math.floor((deadline - Date.now()) / 1000));
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, ...(wait > 0 ? { prefer: `wait=${wait}` } : {}) },
      signal: AbortSignal.timeout((Math.max(wait, 0) + 15) * 1000),
    });
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (res.status !== 200 || !body || typeof body.status !== 'string') {
      return fromStore(ctx, paymentId, `the API answered ${res.status} to the status poll: the store's copy, which may trail`);
    }
    if (FINAL.has(body.status) || wait <= 0) return { status: body.status, receipt: body, source: 'api' };
    if (!res.headers.get('preference-applied')) await new Promise((r) => setTimeout(r, 500));
  }
}

async function fromStore(ctx: CliContext, paymentId: string, note: string): Promise<WatchedPayment> {
  const doc = await findPayment(ctx.store.c, paymentId);
  return { status: doc?.status ?? 'UNKNOWN', source: 'store', note };
}
