import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { AppDeps } from '../../src/main/app-deps.js';
import { loadSettlementInfo } from '../../src/main/settlement-info.js';
import { loadOrCreateOAuthKeys } from '../../src/auth/oauth/keys.js';
import { loadEnv } from '../../src/config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { newId } from '@credit-facilitator/wire/ids';
import { toBase64Url } from '@credit-facilitator/wire/base64url';
import { decodePrivateKey, encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { createLogger } from '../../src/observability/logger.js';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { acceptCreditFacility } from '../../src/agents/facility.js';
import { registerAgentKey } from '../../src/agents/agent-keys.js';
import { registerBorrower } from '../../src/agents/borrowers.js';
import { claimHandle } from '../../src/agents/handles.js';
import { preparePayment, type PrepareOptions, type PreparedPayment } from '../../src/agents/prepare-payment.js';
import { submitSignature, typedDataFromJson } from '../../src/agents/signing.js';
import type { BorrowerPrincipal, SigningStep } from '../../src/agents/types.js';
import type { TestMerchant, World } from './world.js';

const depsByWorld = new WeakMap<World, Promise<AppDeps>>();

/** AppDeps for calling the agent services in-process against the stack `w` looks at. */
export function agentDeps(w: World): Promise<AppDeps> {
  let deps = depsByWorld.get(w);
  if (!deps) {
    deps = makeAgentDeps(w);
    depsByWorld.set(w, deps);
  }
  return deps;
}

async function makeAgentDeps(w: World): Promise<AppDeps> {
  const { SETTLER_PRIVATE_KEY: _settlerKey, ...apiEnv } = w.env;
  const env = loadEnv({ ...process.env, ...apiEnv, LOG_LEVEL: 'silent' });
  return {
    env,
    store: w.store,
    temporal: w.temporal,
    verifyJwt: async () => null,
    logger: createLogger('silent'),
    settlement: await loadSettlementInfo(env),
    oauthKeys: await loadOrCreateOAuthKeys(w.store),
    nowMs: () => Date.now(),
  };
}

/** What a borrower token for every scope would carry (scope gating is the MCP layer's job). */
export function principalFor(borrowerId: string): BorrowerPrincipal {
  return { borrowerId, clientId: 'test-agent-host', scopes: [...SCOPES], expiresAt: Math.floor(Date.now() / 1000) + 900 };
}

/** The borrower's wallet signs a step's typed data, as the signing page's EIP-1193 wallet would. */
export async function signStep(wallet: PrivateKeyAccount, step: SigningStep): Promise<`0x${string}`> {
  return wallet.signTypedData(typedDataFromJson(step.typed_data) as Parameters<PrivateKeyAccount['signTypedData']>[0]);
}

export async function signAndSubmit(deps: AppDeps, wallet: PrivateKeyAccount, step: SigningStep) {
  return submitSignature(deps, step.signing_request_id, await signStep(wallet, step));
}

export interface OnboardedBorrower {
  borrowerId: string;
  operationalAgentId: string;
  /** base64url Ed25519 seed, as TestBorrower carries it. */
  agentPrivateKey: string;
  agentKeyId: string;
  wallet: PrivateKeyAccount;
  /** The wallet's private key, for a browser test wallet (test/support/test-wallet.ts). */
  walletPrivateKey: `0x${string}`;
  principal: BorrowerPrincipal;
  handle: string;
}

export interface OnboardOptions {
  perPaymentLimit?: string;
  dailyLimit?: string;
  grantExpiresAt?: number;
  handle?: string;
  /** Stop after this stage (default ACTIVE). */
  until?: 'WALLET_VERIFIED' | 'FACILITY_ACCEPTED' | 'AGENT_KEY_REGISTERED' | 'ACTIVE';
}

/** Walks the real onboarding: sign-in's find-or-create, register, facility, agent key, handle. */
export async function onboardBorrower(w: World, opts: OnboardOptions = {}): Promise<OnboardedBorrower> {
  const deps = await agentDeps(w);
  const walletPrivateKey = generatePrivateKey();
  const wallet = privateKeyToAccount(walletPrivateKey);
  const borrower = await findOrCreateBorrowerByWallet(w.store.c, wallet.address, newId(), new Date());
  const principal = principalFor(borrower._id);
  const reg = await registerBorrower(deps, principal, { idempotency_key: randomUUID(), terminal_label: 'test terminal' });
  const agentKey = generateAgentKeyPair();
  const out: OnboardedBorrower = {
    borrowerId: borrower._id,
    operationalAgentId: reg.operational_agent_id,
    agentPrivateKey: encodeKey(agentKey.privateKey),
    agentKeyId: '',
    wallet,
    walletPrivateKey,
    principal,
    handle: '',
  };
  if (opts.until === 'WALLET_VERIFIED') return out;

  const facility = await acceptCreditFacility(deps, principal, { idempotency_key: randomUUID() });
  const accepted = await signAndSubmit(deps, wallet, facility);
  if (accepted.status !== 'completed') throw new Error(`facility acceptance ended ${JSON.stringify(accepted)}`);
  if (opts.until === 'FACILITY_ACCEPTED') return out;

  const grant = await registerAgentKey(deps, principal, {
    idempotency_key: randomUUID(),
    public_key: encodeKey(agentKey.publicKey),
    per_payment_limit: opts.perPaymentLimit ?? '5000000',
    daily_limit: opts.dailyLimit ?? '20000000',
    expires_at: opts.grantExpiresAt ?? Math.floor(Date.now() / 1000) + 86_400,
  });
  const granted = await signAndSubmit(deps, wallet, grant);
  if (granted.status !== 'completed') throw new Error(`agent grant ended ${JSON.stringify(granted)}`);
  out.agentKeyId = String(granted.result?.key_id);
  if (opts.until === 'AGENT_KEY_REGISTERED') return out;

  const handle = opts.handle ?? `b${newId().replaceAll('-', '').slice(0, 12)}`;
  await claimHandle(deps, principal, { idempotency_key: randomUUID(), handle });
  out.handle = handle;
  return out;
}

/** The merchant's PAYMENT-REQUIRED header for a credit payment. */
export function paymentRequiredHeader(deps: AppDeps, m: TestMerchant, amount: string, orderRef?: string): string {
  return encodePaymentRequiredHeader({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1:9000/premium' },
    accepts: [
      {
        scheme: 'credit',
        network: deps.settlement.network as `${string}:${string}`,
        asset: deps.settlement.asset,
        amount,
        payTo: m.payoutAddress,
        maxTimeoutSeconds: 600,
        extra: { merchantId: m.merchantId, ...(orderRef ? { orderRef } : {}) },
      },
    ],
  });
}

/** Ed25519-signs the tool's signing_input with a base64url seed, as the agent's signer does. */
export function signInput(signingInput: string, agentPrivateKey: string): string {
  return toBase64Url(ed25519.sign(utf8ToBytes(signingInput), decodePrivateKey(agentPrivateKey) as Uint8Array));
}

export interface SignedPayment {
  prepared: PreparedPayment;
  body: { x402Version: 2; paymentPayload: Record<string, unknown> };
  idempotencyKey: string;
}

/** prepare_x402_payment, then the agent's signature: the capture body and its Idempotency-Key. */
export async function prepareAndSign(
  w: World,
  b: Pick<OnboardedBorrower, 'principal' | 'agentPrivateKey'>,
  m: TestMerchant,
  amount: string,
  orderRef: string = `order-${newId().slice(0, 8)}`,
  opts: PrepareOptions = {},
): Promise<SignedPayment> {
  const deps = await agentDeps(w);
  return prepareAndSignRequired(w, b, paymentRequiredHeader(deps, m, amount), orderRef, opts);
}

/** As prepareAndSign, for a merchant's own PAYMENT-REQUIRED header (its order ref unless `orderRef` is given). */
export async function prepareAndSignRequired(
  w: World,
  b: Pick<OnboardedBorrower, 'principal' | 'agentPrivateKey'>,
  paymentRequired: string,
  orderRef?: string,
  opts: PrepareOptions = {},
): Promise<SignedPayment> {
  const deps = await agentDeps(w);
  const prepared = await preparePayment(deps, b.principal, { payment_required: paymentRequired, ...(orderRef !== undefined ? { order_ref: orderRef } : {}) }, opts);
  const paymentPayload = {
    x402Version: 2,
    resource: { url: prepared.voucher.resource },
    accepted: prepared.payment_requirements,
    payload: { voucher: prepared.voucher, signature: signInput(prepared.signing_input, b.agentPrivateKey) },
  };
  return { prepared, body: { x402Version: 2, paymentPayload }, idempotencyKey: prepared.idempotency_key };
}
