import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AppDeps } from '../../src/main/app-deps.js';
import { walletProofFor, walletProofProblem } from '../../src/borrower-web/wallet-proof.js';
import { loadEnv } from '../../src/config/env.js';

/** The sign-in WalletProof names the origin that asks for it (EIP-4361 `domain` and `uri`). */
describe('sign-in WalletProof is bound to our public origin', function () {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const now = Math.floor(Date.now() / 1000);
  const deps = {
    env: loadEnv({ API_PORT: '8402', CHAIN_ID: '31337', PUBLIC_ORIGIN: 'https://credit.example.com' }),
    settlement: { settlementContract: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512' },
    nowMs: () => now * 1000,
  } as unknown as AppDeps;
  const m = { wallet: wallet.address, clientId: 'agent-host', challenge: randomUUID(), issuedAt: now };

  it('the message the wallet signs names our domain and origin', function () {
    const td = walletProofFor(deps, m);
    const message = td.message as Record<string, unknown>;
    assert.equal(message.domain, 'credit.example.com');
    assert.equal(message.uri, 'https://credit.example.com');
    const fields = (td.types.WalletProof as readonly { name: string }[]).map((f) => f.name);
    assert.ok(fields.includes('domain') && fields.includes('uri'), 'both are signed fields');
  });

  it('a proof the wallet signed for another origin does not sign in here', async function () {
    const td = walletProofFor(deps, m);
    assert.equal(await walletProofProblem(deps, m, await wallet.signTypedData(td)), null, 'our own origin signs in');
    const elsewhere = { ...td, message: { ...td.message, domain: 'credit-example.com', uri: 'https://credit-example.com' } };
    assert.match((await walletProofProblem(deps, m, await wallet.signTypedData(elsewhere))) ?? 'accepted', /^The signature is not a WalletProof/);
  });
});
