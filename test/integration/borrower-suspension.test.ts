import assert from 'node:assert/strict';
import { agentKeyRevoke, borrowerReinstate, borrowerShow, borrowerSuspend } from '../../tools/cli/borrower-commands.js';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { devFund } from '../../tools/cli/dev-commands.js';
import { capture, erc20BalanceOf, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, type TestBorrower, type TestMerchant, type World, world } from '../helpers/world.js';

describe('operator controls: suspend and reinstate a borrower, revoke an agent key', function () {
  this.timeout(300_000);
  let w: World;
  let m: TestMerchant;
  let b: TestBorrower;

  before(async function () {
    w = await world();
    [m, b] = await Promise.all([newMerchant(w, 'Suspension merchant', { rateLimits: UNTHROTTLED }), newBorrower(w)]);
  });

  it('a suspended borrower cannot prepare or capture (even a voucher prepared before); what was captured still settles; reinstating restores both', async function () {
    const captured = await newVoucher(w, m, b, '1000');
    const before = await capture(w, m, captured.captureBody, captured.idempotencyKey);
    assert.equal(before.status, 200, JSON.stringify(before.json));
    const preparedBefore = await newVoucher(w, m, b, '1100');

    await assert.rejects(borrowerSuspend(w.cli, { borrower: b.borrowerId }), /--reason/);
    const suspended = await borrowerSuspend(w.cli, { borrower: b.borrowerId, reason: 'chargeback investigation' });
    assert.deepEqual(suspended, { borrowerId: b.borrowerId, suspended: true, changed: true, endedGrants: 0 });
    assert.equal((await borrowerShow(w.cli, { borrower: b.borrowerId })).suspended?.reason, 'chargeback investigation');

    await assert.rejects(newVoucher(w, m, b, '1200'), (err: Error & { code?: string }) => {
      assert.match(JSON.stringify(err), /BORROWER_NOT_ACTIVE|borrower_not_active/);
      return true;
    });
    const refused = await capture(w, m, preparedBefore.captureBody, preparedBefore.idempotencyKey);
    assert.equal(refused.status, 422, JSON.stringify(refused.json));
    assert.equal(refused.json.error.invalidReason, 'borrower_not_active');

    const settled = await pollUntil(w, m, before.json.receipt.paymentId, 'CONFIRMED', 120_000);
    assert.ok(settled.transaction, 'a payment captured before the suspension settles');

    assert.deepEqual(await borrowerReinstate(w.cli, { borrower: b.borrowerId }), { borrowerId: b.borrowerId, suspended: false, changed: true });
    const after = await capture(w, m, preparedBefore.captureBody, preparedBefore.idempotencyKey);
    assert.equal(after.status, 200, `the refused voucher is good again once reinstated: ${JSON.stringify(after.json)}`);
  });

  it('a revoked agent key: a voucher it signed before the revocation is refused with agent_key_revoked', async function () {
    const signed = await newVoucher(w, m, b, '1300');
    const shown = await borrowerShow(w.cli, { borrower: b.borrowerId });
    assert.ok(shown.operationalAgents.some((a) => a.keys.some((k) => k.keyId === b.agentKeyId && k.status === 'active')));
    assert.deepEqual(await agentKeyRevoke(w.cli, { key: b.agentKeyId }), { keyId: b.agentKeyId, status: 'revoked', changed: true });
    const refused = await capture(w, m, signed.captureBody, signed.idempotencyKey);
    assert.equal(refused.status, 422, JSON.stringify(refused.json));
    assert.equal(refused.json.error.invalidReason, 'agent_key_revoked');
    assert.equal((await agentKeyRevoke(w.cli, { key: b.agentKeyId })).changed, false);
  });
});

describe('dev fund: test USDC for trying repayment on the embedded chain', function () {
  it('mints to a wallet and refuses a bad address or amount', async function () {
    const w = await world();
    const wallet = privateKeyToAddress(generatePrivateKey());
    const out = await devFund(w.cli, { wallet, amount: '2500000' });
    assert.equal(out.balance, '2500000');
    const onChain = await w.publicClient.readContract({ address: w.asset, abi: [erc20BalanceOf], functionName: 'balanceOf', args: [wallet] });
    assert.equal(onChain, 2_500_000n);
    await assert.rejects(devFund(w.cli, { wallet: '0x1234', amount: '1' }), /--wallet/);
    await assert.rejects(devFund(w.cli, { wallet, amount: '-1' }), /--amount/);
  });
});
