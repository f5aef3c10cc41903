import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startExpressMerchant, type ExpressMerchant } from '../../examples/express-merchant/app.js';
import { devBorrowerCreate, devVoucher } from '../../tools/cli/dev-commands.js';
import { newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

const ADMIN_CLI = fileURLToPath(new URL('../../tools/cli/admin.js', import.meta.url));

/** The operator CLI as `npm run -s admin -- …` runs it, against the test stack's settings; never rejects. */
async function admin(w: World, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [ADMIN_CLI, ...args], { env: { ...process.env, ...w.env }, timeout: 240_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('dev pay: a test payment in one command against the README @x402/express merchant', function () {
  this.timeout(300_000);
  let w: World;
  let m: TestMerchant;
  let shop: ExpressMerchant;

  before(async function () {
    w = await world();
    m = await newMerchant(w, 'Express Shop (dev pay)');
    shop = await startExpressMerchant({ facilitatorUrl: w.baseUrl, apiKey: m.apiKey, merchantId: m.merchantId, payTo: m.payoutAddress, price: '$0.42', port: 0 });
  });

  after(async function () {
    await shop?.close();
  });

  it('pays the stock paywall with a dev borrower made on the fly and long-polls the payment to CONFIRMED', async function () {
    const run = await admin(w, ['dev', 'pay', `${shop.url}/premium/atlas`, '--wait', '--json']);
    assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);
    const out = JSON.parse(run.stdout);
    assert.equal(out.merchantStatus, 200, JSON.stringify(out));
    assert.deepEqual(out.merchantBody, { item: 'atlas', content: 'the premium content' });
    assert.equal(out.paymentResponse.success, true);
    assert.equal(out.merchantId, m.merchantId);
    assert.equal(out.amount, '420000');
    assert.equal(out.borrowerCreated, true);
    assert.equal(out.paymentStatus, 'CONFIRMED');
    assert.match(out.batchId, /\S/);
    assert.match(out.transaction, /^0x[0-9a-f]{64}$/);
  });

  it('pays as a given borrower, and the human output names the payment and its status', async function () {
    const b = await devBorrowerCreate(w.cli, { credit: '10000000' });
    const run = await admin(w, ['dev', 'pay', `${shop.url}/premium/globe`, '--borrower', b.borrowerId, '--agent', b.operationalAgentId, '--agent-private-key', b.agentPrivateKey as string]);
    assert.equal(run.code, 0, `${run.stderr}\n${run.stdout}`);
    assert.match(run.stdout, /^merchantStatus +200$/m);
    assert.match(run.stdout, new RegExp(`^borrowerId +${b.borrowerId}$`, 'm'));
    assert.match(run.stdout, /^paymentStatus +(QUEUED|SUBMITTED|CONFIRMED)$/m);
  });

  it('says what is wrong with a URL that asks for no payment', async function () {
    const run = await admin(w, ['dev', 'pay', `${w.baseUrl}/facilitator/health`]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /answered 200, not 402 Payment Required/);
  });

  it("dev voucher's envelope is what the stock paywall advertises: the paywall takes its PAYMENT-SIGNATURE", async function () {
    const b = await devBorrowerCreate(w.cli, { credit: '10000000' });
    const v = await devVoucher(w.cli, { merchant: m.merchantId, borrower: b.borrowerId, agent: b.operationalAgentId, agentPrivateKey: b.agentPrivateKey as string, amount: '420000' });
    assert.equal(v.paymentPayload.accepted.maxTimeoutSeconds, 300);
    assert.deepEqual(Object.keys(v.paymentPayload.accepted.extra ?? {}).sort(), ['facilitator', 'merchantId', 'orderRef']);
    const res = await fetch(`${shop.url}/premium/dial`, { headers: { 'payment-signature': v.paymentSignatureHeader } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { item: 'dial', content: 'the premium content' });
  });
});
