import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import type { AppDeps } from '../../src/main/app-deps.js';
import { ToolError } from '../../src/domain/tool-errors.js';
import { executeRepayment } from '../../src/agents/repayment.js';
import { getSigningRequestView } from '../../src/agents/signing.js';
import { testUsdcAbi, creditSettlementAbi } from '../../src/chain/abi.js';
import { makeChainClients } from '../../src/chain/clients.js';
import { uuidToBytes32 } from '@credit-facilitator/wire/ids';
import { agentDeps, onboardBorrower, prepareAndSign, signAndSubmit } from '../helpers/onboarding.js';
import { until } from '../helpers/until.js';
import { capture, newMerchant, pollUntil, world, type World } from '../helpers/world.js';

describe('agents: execute_repayment through the repayment workflow', function () {
  let w: World;
  let deps: AppDeps;

  before(async function () {
    this.timeout(300_000);
    w = await world();
    deps = await agentDeps(w);
  });

  const debtOnChain = (borrowerId: string) =>
    w.publicClient.readContract({ address: w.settlement, abi: creditSettlementAbi, functionName: 'debtOf', args: [uuidToBytes32(borrowerId)] });

  it('a confirmed capture books debt; a signed repayment lowers it on chain and restores available credit', async function () {
    this.timeout(180_000);
    const m = await newMerchant(w, 'Repay Merchant');
    const b = await onboardBorrower(w);
    const limit = Number(deps.env.DEFAULT_CREDIT_LIMIT);

    const signed = await prepareAndSign(w, b, m, '3000000');
    const res = await capture(w, m, signed.body, signed.idempotencyKey);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    await pollUntil(w, m, res.json.receipt.paymentId, 'CONFIRMED');
    await until('debt booked', () => w.store.c.borrowers.findOne({ _id: b.borrowerId }), (d) => d?.debt === 3_000_000);
    assert.equal(await debtOnChain(b.borrowerId), 3_000_000n);

    await assert.rejects(executeRepayment(deps, b.principal, { idempotency_key: randomUUID(), amount: '3000001' }), (e: unknown) => e instanceof ToolError && e.code === 'INVALID_INPUT');

    // The borrower needs the asset to repay with: the deployer (anvil account 0) owns TestUSDC.
    const owner = makeChainClients({ rpcUrl: w.env.RPC_URL as string, chainId: 84532, privateKey: w.env.SETTLER_PRIVATE_KEY as Hex });
    const mint = await owner.walletClient!.writeContract({ address: w.asset, abi: testUsdcAbi, functionName: 'mint', args: [b.wallet.address, 5_000_000n] });
    await owner.publicClient.waitForTransactionReceipt({ hash: mint });

    const key = randomUUID();
    const step = await executeRepayment(deps, b.principal, { idempotency_key: key, amount: '2000000' });
    assert.equal(step.status, 'signature_required');
    assert.equal((step.typed_data as { primaryType: string }).primaryType, 'ReceiveWithAuthorization');
    const view = await getSigningRequestView(deps, step.signing_request_id);
    assert.equal(view?.kind, 'repayment');
    assert.match(view?.summary ?? '', /^Repay 2 /);

    const submitted = await signAndSubmit(deps, b.wallet, step);
    assert.ok(['processing', 'completed'].includes(submitted.status), JSON.stringify(submitted));
    const done = await until(
      'repayment completed',
      () => executeRepayment(deps, b.principal, { idempotency_key: key, amount: '2000000', wait_seconds: 5 }),
      (s) => s.status !== 'processing',
    );
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result?.status, 'CONFIRMED');
    assert.equal(done.result?.debt, '1000000');
    assert.equal(done.result?.available, String(limit - 1_000_000));
    assert.match(String(done.result?.transaction), /^0x[0-9a-f]{64}$/);

    assert.equal(await debtOnChain(b.borrowerId), 1_000_000n);
    assert.equal(await w.publicClient.readContract({ address: w.asset, abi: testUsdcAbi, functionName: 'balanceOf', args: [b.wallet.address] }), 3_000_000n);
    const doc = await w.store.c.borrowers.findOne({ _id: b.borrowerId });
    assert.equal(doc?.debt, 1_000_000);
    assert.equal(doc?.available, limit - 1_000_000);
    const rep = await w.store.c.repayments.findOne({ _id: String(done.result?.repayment_id) });
    assert.equal(rep?.status, 'CONFIRMED');

    // Posting the same signature again replays the outcome and books nothing twice.
    const handle = w.temporal.workflow.getHandle(`repayment-${String(done.result?.repayment_id)}`);
    assert.equal((await handle.result()).status, 'CONFIRMED');
    const replay = await signAndSubmit(deps, b.wallet, step);
    assert.equal(replay.status, 'completed');
    assert.equal((await w.store.c.borrowers.findOne({ _id: b.borrowerId }))?.debt, 1_000_000);
    assert.equal(await debtOnChain(b.borrowerId), 1_000_000n);
  });
});
