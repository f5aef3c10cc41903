import { Client, Connection } from '@temporalio/client';
import { createPublicClient, http, parseAbiItem, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { randomUUID } from 'node:crypto';
import { loadEnv } from '../../src/config/env.js';
import type { CliContext } from '../../src/cli/context.js';
import { devBorrowerCreate, devVoucher } from '../../src/cli/dev-commands.js';
import { createMerchant } from '../../src/cli/merchant-commands.js';
import { connectStore, type Store } from '../../src/store/mongo.js';
import { getStack } from '../support/stack.js';

export interface World {
  env: Record<string, string>;
  baseUrl: string;
  store: Store;
  cli: CliContext;
  temporal: Client;
  publicClient: ReturnType<typeof createPublicClient>;
  settlement: Hex;
  asset: Hex;
}

let cached: Promise<World> | null = null;

/** The running stack plus clients to look behind the API: the store, Temporal and the chain. */
export function world(): Promise<World> {
  cached ??= (async () => {
    const stack = await getStack();
    const env = stack.env;
    const parsed = loadEnv({ ...process.env, ...env });
    const store = await connectStore(env.MONGODB_URI as string, parsed.MONGODB_DB);
    const temporal = new Client({ connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS as string }), namespace: parsed.TEMPORAL_NAMESPACE });
    return {
      env,
      baseUrl: `http://${parsed.API_HOST}:${parsed.API_PORT}/api/v1`,
      store,
      cli: { env: parsed, store, dataDir: env.DATA_DIR as string },
      temporal,
      publicClient: createPublicClient({ transport: http(env.RPC_URL as string) }),
      settlement: env.SETTLEMENT_CONTRACT_ADDRESS as Hex,
      asset: env.ASSET_ADDRESS as Hex,
    };
  })();
  return cached;
}

export interface TestMerchant {
  merchantId: string;
  apiKey: string;
  keyId: string;
  payoutAddress: Hex;
}

export async function newMerchant(w: World, name = 'Test Merchant'): Promise<TestMerchant> {
  const payout = privateKeyToAddress(generatePrivateKey());
  const m = await createMerchant(w.cli, name, payout);
  return { merchantId: m.merchantId, apiKey: m.apiKey, keyId: m.keyId, payoutAddress: payout };
}

export interface TestBorrower {
  borrowerId: string;
  operationalAgentId: string;
  agentPrivateKey: string;
}

export async function newBorrower(w: World, credit = 1_000_000_000): Promise<TestBorrower> {
  const b = await devBorrowerCreate(w.cli, { credit: String(credit) });
  return { borrowerId: b.borrowerId, operationalAgentId: b.operationalAgentId, agentPrivateKey: b.agentPrivateKey as string };
}

export async function newVoucher(w: World, m: TestMerchant, b: TestBorrower, amount: string, extra: { orderRef?: string; ttl?: string } = {}) {
  return devVoucher(w.cli, {
    merchant: m.merchantId,
    borrower: b.borrowerId,
    agent: b.operationalAgentId,
    agentPrivateKey: b.agentPrivateKey,
    amount,
    ...extra,
  });
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  json: any;
}

export async function call(
  w: World,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; idempotencyKey?: string } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined && method !== 'GET' && method !== 'HEAD') {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${w.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = { unparsable: text };
  }
  return { status: res.status, headers: res.headers, json };
}

export function capture(w: World, m: TestMerchant, body: unknown, idempotencyKey: string = randomUUID()) {
  return call(w, 'POST', '/facilitator/capture', { token: m.apiKey, body, idempotencyKey });
}

export async function pollUntil(w: World, m: TestMerchant, paymentId: string, status: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse | null = null;
  while (Date.now() < deadline) {
    last = await call(w, 'GET', `/facilitator/payments/${paymentId}`, { token: m.apiKey });
    if (last.status === 200 && last.json.status === status) return last.json;
    if (last.status === 200 && (last.json.status === 'FAILED' || last.json.status === 'CONFIRMED') && last.json.status !== status) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`payment ${paymentId} did not reach ${status}: last ${JSON.stringify(last?.json)}`);
}

export const paymentSettledEvent = parseAbiItem(
  'event PaymentSettled(bytes32 indexed paymentId, bytes32 indexed borrowerId, bytes32 indexed merchantId, uint256 amount)',
);

export const erc20BalanceOf = parseAbiItem('function balanceOf(address) view returns (uint256)');
