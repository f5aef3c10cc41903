import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { SigningStep } from '../../src/agents/types.js';
import { mcpUrl, publicOrigin } from '../../src/config/env.js';
import { fromBase64Url } from '@credit-facilitator/wire/base64url';
import { newId } from '@credit-facilitator/wire/ids';
import { scopesForStage, type OnboardingStage } from '@credit-facilitator/wire/onboarding';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { agentDeps, paymentRequiredHeader, signInput, signStep } from '../helpers/onboarding.js';
import { newMerchant, world, type World } from '../helpers/world.js';

/** One agent host session: a stock SDK client holding a token for the borrower's current stage, as the AS would mint it. */
class AgentHost {
  private client: Client | null = null;
  constructor(private readonly w: World, private readonly borrowerId: string) {}

  async refresh(stage: OnboardingStage): Promise<void> {
    await this.client?.close();
    const token = await mintBorrowerToken(this.w, { borrowerId: this.borrowerId, scopes: scopesForStage(stage) });
    this.client = new Client({ name: 'mcp-onboarding-test', version: '1.0.0' });
    await this.client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl(this.w.cli.env)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }

  async call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!this.client) throw new Error('no session');
    const res = await this.client.callTool({ name, arguments: args });
    const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
    assert.notEqual(res.isError, true, `${name}: ${text}`);
    assert.ok(text.length > 0, `${name} has a text summary`);
    return res.structuredContent as Record<string, unknown>;
  }

  /** The raw call, for asserting refusals. */
  async callRaw(name: string, args: Record<string, unknown>) {
    if (!this.client) throw new Error('no session');
    return this.client.callTool({ name, arguments: args });
  }

  close(): Promise<void> {
    return this.client?.close() ?? Promise.resolve();
  }
}

/** The borrower opens signing_url: the page's JSON API takes the wallet's signature. */
async function borrowerSigns(w: World, wallet: PrivateKeyAccount, step: Record<string, unknown>): Promise<void> {
  const s = step as unknown as SigningStep;
  assert.equal(s.status, 'signature_required');
  assert.ok(s.signing_url.startsWith(`${publicOrigin(w.cli.env)}/borrower/sign/`), s.signing_url);
  const res = await fetch(`${publicOrigin(w.cli.env)}/borrower/api/signing-requests/${s.signing_request_id}/signature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ signature: await signStep(wallet, s) }),
  });
  assert.equal(res.status, 200, await res.text());
}

describe('mcp: onboarding and a payment through the tools', function () {
  let w: World;
  before(async function () {
    w = await world();
  });

  it('walks every onboarding tool, refreshing the token as each stage unlocks scopes', async function () {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const borrower = await findOrCreateBorrowerByWallet(w.store.c, wallet.address, newId(), new Date());
    const host = new AgentHost(w, borrower._id);
    try {
      await host.refresh('SIGNED_IN');
      const reg = await host.call('register_borrower', { idempotency_key: randomUUID(), terminal_label: 'mcp test host' });
      assert.equal(reg.stage, 'WALLET_VERIFIED');
      const operationalAgentId = String(reg.operational_agent_id);

      // The SIGNED_IN token cannot accept the facility; a refreshed one can.
      await assert.rejects(host.callRaw('accept_credit_facility', { idempotency_key: randomUUID() }), /insufficient_scope|403/);
      await host.refresh('WALLET_VERIFIED');
      const facilityKey = randomUUID();
      await borrowerSigns(w, wallet, await host.call('accept_credit_facility', { idempotency_key: facilityKey }));
      const facility = await host.call('accept_credit_facility', { idempotency_key: facilityKey, wait_seconds: 10 });
      assert.equal(facility.status, 'completed', JSON.stringify(facility));

      await host.refresh('FACILITY_ACCEPTED');
      const agentKey = generateAgentKeyPair();
      const keyArgs = {
        idempotency_key: randomUUID(),
        operational_agent_id: operationalAgentId,
        public_key: encodeKey(agentKey.publicKey),
        per_payment_limit: '5000000',
        daily_limit: '20000000',
        expires_at: Math.floor(Date.now() / 1000) + 86_400,
      };
      await borrowerSigns(w, wallet, await host.call('register_agent_key', keyArgs));
      const granted = await host.call('register_agent_key', { ...keyArgs, wait_seconds: 10 });
      assert.equal(granted.status, 'completed', JSON.stringify(granted));

      await host.refresh('AGENT_KEY_REGISTERED');
      const handle = `m${randomUUID().replaceAll('-', '').slice(0, 10)}`;
      const claimed = await host.call('claim_handle', { idempotency_key: randomUUID(), handle });
      assert.deepEqual({ handle: claimed.handle, stage: claimed.stage }, { handle, stage: 'ACTIVE' });

      await host.refresh('ACTIVE');
      const status = await host.call('get_borrower_status', {});
      assert.equal(status.stage, 'ACTIVE');
      assert.equal(status.handle, handle);
      assert.deepEqual(status.token_scopes, scopesForStage('ACTIVE'));

      const deps = await agentDeps(w);
      const merchant = await newMerchant(w);
      const orderRef = `order-${randomUUID()}`;
      const header = paymentRequiredHeader(deps, merchant, '1500000', orderRef);
      const prepared = await host.call('prepare_x402_payment', { payment_required: header });
      assert.equal(prepared.reused, false);
      const again = await host.call('prepare_x402_payment', { payment_required: header });
      assert.equal(again.reused, true);
      assert.equal(again.spend_intent_id, prepared.spend_intent_id);
      assert.equal(again.idempotency_key, prepared.idempotency_key);
      // The agent signs signing_input with its own key; the signature checks against the registered public key.
      const sig = signInput(String(prepared.signing_input), encodeKey(agentKey.privateKey));
      assert.ok(ed25519.verify(fromBase64Url(sig) as Uint8Array, utf8ToBytes(String(prepared.signing_input)), agentKey.publicKey));

      const repay = await host.callRaw('execute_repayment', { idempotency_key: randomUUID(), amount: '1' });
      assert.equal(repay.isError, true, 'no debt booked yet');
      assert.equal(repay.structuredContent, undefined);
    } finally {
      await host.close();
    }
  });
});
