import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/paths.js';
import { freePort } from '../../tools/stack/processes.js';
import { EXTERNAL_SETTINGS } from '../../tools/stack/throwaway-source.js';
import { bashSession, type BashSession } from '../support/bash-session.js';
import { useIsolatedStack } from '../support/isolated-stack.js';
import { shellBlocks, substitute } from '../support/readme-blocks.js';

const SECTION = 'Walkthrough: a payment from capture to CONFIRMED';
/** Run right after the walkthrough, in the same shell: it signs a console user in for the walkthrough's merchant. */
const CONSOLE_SECTION = 'Merchant console';
// "Agent round trip" is not run: its blocks are `npm start` and the demo merchant in the foreground
// (long-running, one terminal each), and the demo agent waits for a human to open the links it prints
// and sign in a browser wallet (test/integration/demo-merchant-credit-agent.test.ts drives that path).

/** The reader's shell differs from ours only in the stack's ports and data dir: everything else is the CLI's defaults. */
const READER_SETTINGS = ['DATA_DIR', 'API_PORT', 'MONGODB_PORT', 'ANVIL_PORT', 'TEMPORAL_ADDRESS', 'NODE_ENV', 'DEV_TOOLS'];

type Json = Record<string, any>;

describe(`README "${SECTION}" runs as written against a fresh stack with npm start's settings`, function () {
  this.timeout(600_000);
  const env = useIsolatedStack({ defaults: 'npm-start' });
  let work: string | undefined;
  let session: BashSession | undefined;

  after(async function () {
    await session?.stop();
    if (work && process.env.TEST_KEEP_DATA !== '1') rmSync(work, { recursive: true, force: true });
  });

  it('every ```sh block (and the console section\'s) passes in order in one bash -euo pipefail; the files they write hold CONFIRMED, the void outcome and a SUCCEEDED refund, and the console token it prints signs in', async function () {
    const { stack } = env();
    const hookPort = await freePort();
    // The README's defaults, mapped to this stack's free ports.
    const readme = readFileSync(join(projectRoot(), 'README.md'), 'utf8');
    const blocks = substitute([...shellBlocks(readme, SECTION), ...shellBlocks(readme, CONSOLE_SECTION)], [
      ['http://127.0.0.1:8402', `http://127.0.0.1:${stack.config.API_PORT}`],
      ['http://127.0.0.1:8545', `http://127.0.0.1:${stack.config.ANVIL_PORT}`],
      ['127.0.0.1:8499', `127.0.0.1:${hookPort}`],
      ['--port 8499', `--port ${hookPort}`],
    ]);
    // Inside the project, as the reader is: `npm run` finds package.json and node finds viem above it.
    work = mkdtempSync(join(projectRoot(), '.readme-run-'));
    session = bashSession(blocks, { cwd: work, env: readerEnv(stack.env), timeoutMs: 300_000 });

    const result = await session.run();
    if (!result.ok) {
      const i = result.failedBlock ?? 0;
      assert.fail(`README block ${i + 1} of ${blocks.length} in "${SECTION}" and "${CONSOLE_SECTION}" failed: ${result.failure}\n----- the block (ports mapped) -----\n${blocks[i]}----- its output -----\n${result.outputs[i] ?? ''}`);
    }
    const file = (name: string): Json => JSON.parse(readFileSync(join(work!, name), 'utf8')) as Json;
    const show = (name: string) => `${name}: ${readFileSync(join(work!, name), 'utf8')}`;

    assert.equal(file('verify.json').isValid, true, show('verify.json'));
    const paymentId = file('receipt.json').receipt.paymentId as string;
    const status = file('status.json');
    assert.equal(status.paymentId, paymentId, show('status.json'));
    assert.equal(status.status, 'CONFIRMED', show('status.json'));
    assert.match(status.transaction, /^0x[0-9a-f]{64}$/, show('status.json'));
    assert.match(result.outputs[1]!, /^success block \d+n \d+ logs$/m, 'the chain receipt read with viem');
    assert.equal(file('batch.json').batchId, status.batchId, show('batch.json'));
    await voidOutcome(stack.urls.baseUrl, file('merchant.json').apiKey as string, file('receipt-43.json').receipt.paymentId as string, file('voided.json'));
    const refunded = file('refunded.json');
    assert.equal(refunded.refunds?.[0]?.status, 'SUCCEEDED', show('refunded.json'));
    assert.equal(refunded.amountRefunded, '500000', show('refunded.json'));
    assert.match(readFileSync(join(work, 'settled.csv'), 'utf8'), new RegExp(paymentId), 'settled.csv lists the payment');

    // The listener step 8 left in the background prints both events it was told of (delivery is asynchronous).
    const hookPaymentId = file('receipt-44.json').receipt.paymentId as string;
    const wanted = [`payment.confirmed ${hookPaymentId}`, `payment.refunded ${paymentId}`];
    const deadline = Date.now() + 60_000;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      seen = printedEvents(session.log());
      if (wanted.every((w) => seen.includes(w))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const w of wanted) assert.ok(seen.includes(w), `the webhook listener printed ${w}; it printed: ${seen.join(', ') || 'nothing'}\n${session.log().slice(-3000)}`);

    // The console section's token is a merchant user's of the walkthrough's merchant, with step-up.
    const printedToken = result.outputs[blocks.length - 1]!.trim().split('\n').at(-1)!;
    const me = await fetch(`${stack.urls.baseUrl}/facilitator/me`, { headers: { authorization: `Bearer ${printedToken}` } });
    const meJson = (await me.json()) as Json;
    assert.equal(me.status, 200, `the console token authenticates: ${JSON.stringify(meJson)}`);
    assert.deepEqual([meJson.merchantId, meJson.credential?.type, meJson.credential?.steppedUp], [file('merchant.json').merchantId, 'jwt', true], JSON.stringify(meJson));
  });
});

/**
 * Step 7's void races the batchers for one claim (README): either the void won and the payment is
 * VOIDED, or a batch was first, the answer is 409 PAYMENT_ALREADY_CLAIMED, and the payment settles.
 */
async function voidOutcome(baseUrl: string, apiKey: string, paymentId: string, answer: Json): Promise<void> {
  const shown = `voided.json: ${JSON.stringify(answer)}`;
  if (answer.receipt) {
    assert.deepEqual([answer.receipt.paymentId, answer.receipt.status], [paymentId, 'VOIDED'], shown);
    return;
  }
  assert.equal(answer.error?.code, 'PAYMENT_ALREADY_CLAIMED', shown);
  let status = '';
  for (let polls = 0; polls < 10 && status !== 'CONFIRMED' && status !== 'FAILED'; polls++) {
    const res = await fetch(`${baseUrl}/facilitator/payments/${paymentId}`, { headers: { authorization: `Bearer ${apiKey}`, prefer: 'wait=30' } });
    const json = (await res.json()) as Json;
    status = json.status as string;
    if (status === 'CONFIRMED') assert.equal(json.batchId, answer.error.batchId, `${shown}\nthe payment: ${JSON.stringify(json)}`);
  }
  assert.equal(status, 'CONFIRMED', `${shown}: the claimed payment settles`);
}

/** This process's environment as a fresh terminal's (no npm run context, no external endpoints), with the stack's ports and data dir. */
function readerEnv(stackEnv: Record<string, string>): NodeJS.ProcessEnv {
  const own = Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'INIT_CWD' && !EXTERNAL_SETTINGS.includes(k));
  const external = process.env.TEST_MONGODB_URI ? ['MONGODB_URI', 'MONGODB_DB'] : [];
  return { ...Object.fromEntries(own), ...Object.fromEntries([...READER_SETTINGS, ...external].map((k) => [k, stackEnv[k]])) };
}

/** "<type> <paymentId>" of each verified event `webhook listen` printed (one JSON line each). */
function printedEvents(log: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.startsWith('{"webhookId"'))
    .map((l) => JSON.parse(l) as Json)
    .map((e) => `${e.type} ${e.data?.paymentId}`);
}
