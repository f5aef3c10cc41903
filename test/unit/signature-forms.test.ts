import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppDeps } from '../../src/main/app-deps.js';
import type { SettlementInfo } from '../../src/domain/settlement-info.js';
import { walletProofFor, walletProofProblem } from '../../src/borrower-web/wallet-proof.js';
import { loadEnv } from '../../src/config/env.js';
import { refundTypedData, signedByFrom } from '../../src/payments/refund-authorization.js';
import { otherSignatureForms } from '../helpers/signature-forms.js';

/**
 * Every wallet signature we verify is taken only in the canonical 65-byte low-s form with v 27/28
 * (what the asset accepts); the other encodings of the same valid signature are refused.
 */
describe('wallet signatures: only the canonical 65-byte low-s form', function () {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const now = Math.floor(Date.now() / 1000);
  const settlement: SettlementInfo = {
    network: 'eip155:31337',
    asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    assetDecimals: 6,
    assetName: 'USD Coin',
    assetVersion: '2',
    settlementContract: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    settler: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  };
  const deps = { env: loadEnv({ API_PORT: '8402', CHAIN_ID: '31337' }), settlement, nowMs: () => now * 1000 } as unknown as AppDeps;

  it('sign-in WalletProof: the high-s twin, the compact form and v 0/1 are refused with the invalid-signature words', async function () {
    const m = { wallet: wallet.address, clientId: 'agent-host', challenge: randomUUID(), issuedAt: now };
    const signature = await wallet.signTypedData(walletProofFor(deps, m));
    assert.equal(await walletProofProblem(deps, m, signature), null, 'the canonical signature signs in');
    for (const [form, other] of Object.entries(otherSignatureForms(signature))) {
      assert.match((await walletProofProblem(deps, m, other)) ?? 'accepted', /^The signature is not a WalletProof/, form);
    }
  });

  it('refund authorization: the payout wallet signature is taken only in canonical form', async function () {
    const a = {
      from: wallet.address,
      to: settlement.settlementContract,
      value: '1000',
      validAfter: '0',
      validBefore: String(now + 3600),
      nonce: `0x${'ab'.repeat(32)}`,
    };
    const td = refundTypedData(settlement, a);
    const { EIP712Domain: _unused, ...types } = td.types;
    const signature = await wallet.signTypedData({
      domain: td.domain,
      types,
      primaryType: td.primaryType,
      message: { ...a, from: a.from as `0x${string}`, to: a.to as `0x${string}`, value: 1000n, validAfter: 0n, validBefore: BigInt(a.validBefore), nonce: a.nonce as `0x${string}` },
    });
    assert.equal(await signedByFrom(settlement, a, signature), true, 'the canonical signature is accepted');
    for (const [form, other] of Object.entries(otherSignatureForms(signature))) {
      assert.equal(await signedByFrom(settlement, a, other), false, form);
    }
  });
});
