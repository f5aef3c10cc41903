import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { newId } from '@credit-facilitator/wire/ids';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { acceptCreditFacility } from '../../src/agents/facility.js';
import { registerAgentKey } from '../../src/agents/agent-keys.js';
import { registerBorrower } from '../../src/agents/borrowers.js';
import { claimHandle } from '../../src/agents/handles.js';
import type { BorrowerPrincipal } from '../../src/agents/types.js';
import { agentDeps } from './agent-deps.js';
import { signAndSubmit } from './wallet-signing.js';
import type { World } from './world.js';

/** What a borrower token for every scope would carry (scope gating is the MCP layer's job). */
export function principalFor(borrowerId: string): BorrowerPrincipal {
  return { borrowerId, clientId: 'test-agent-host', scopes: [...SCOPES], expiresAt: Math.floor(Date.now() / 1000) + 900 };
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
