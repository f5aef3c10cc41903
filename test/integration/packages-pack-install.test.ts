import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { mcpUrl } from '../../src/config/env.js';
import { freePort } from '../../tools/stack/processes.js';
import { completeSignIn, openBrowser, signOnPage, type BrowserHandle, type WalletPage } from '../support/browser.js';
import { runNodeScript, type ScriptRun } from '../support/node-script.js';
import { installAsReadmeSays, packAll, REPO } from '../support/packed-packages.js';
import { readmeExamples, type ReadmeExamples } from '../support/readme-examples.js';
import { settledEventsFor } from '../helpers/ledger.js';
import { call, newMerchant, world, type TestMerchant, type World } from '../helpers/world.js';

/**
 * The packages as a stranger gets them: each packed, then installed alone into an empty project
 * outside the repository with exactly its README's install line, and the README's own example
 * code (read out of the markdown) run with plain node against the test stack: the x402-credit
 * merchant paywall, the agent-client agent paying it (signing in and signing in headless Chromium,
 * as the borrower would), the same agent run again from its saved state, its @x402/fetch variant,
 * and the x402-credit payment check.
 */
describe('client packages: each installed alone from its tarball, its README examples run as written', function () {
  this.timeout(600_000);
  let dir: string;
  let w: World;
  let m: TestMerchant;
  let tarballs: Record<string, string>;
  let merchant: ScriptRun | undefined;
  let merchantUrl: string;
  let browser: BrowserHandle;
  let wp: WalletPage;
  let agentEnv: Record<string, string>;
  const merchantProject = () => join(dir, 'merchant');
  const agentProject = () => join(dir, 'agent');
  const examples = (p: string): ReadmeExamples => readmeExamples(join(REPO, 'packages', p, 'README.md'));

  before(async function () {
    w = await world();
    m = await newMerchant(w, 'Packed Shop');
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'cf-packed-')));
    assert.ok(!dir.startsWith(realpathSync(REPO)), 'the projects live outside the repository');
    tarballs = await packAll(dir);
  });

  after(async function () {
    merchant?.stop();
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function writeExamples(project: string, ex: ReadmeExamples): void {
    for (const [name, code] of Object.entries(ex.files)) writeFileSync(join(project, name), code);
  }

  it('x402-credit installs alone, without the agent client or the MCP SDK, and its merchant example answers 402', async function () {
    const ex = examples('x402-credit');
    assert.deepEqual(Object.keys(ex.files).sort(), ['mcp-server.mjs', 'merchant.mjs', 'payment.mjs']);
    await installAsReadmeSays(merchantProject(), ex.installs, tarballs);
    for (const absent of ['@credit-facilitator/agent-client', '@modelcontextprotocol/sdk']) {
      assert.ok(!existsSync(join(merchantProject(), 'node_modules', absent)), `a merchant does not install ${absent}`);
    }
    writeExamples(merchantProject(), ex);

    const port = await freePort();
    merchantUrl = `http://127.0.0.1:${port}`;
    merchant = runNodeScript(merchantProject(), 'merchant.mjs', {
      FACILITATOR_URL: w.baseUrl, MERCHANT_API_KEY: m.apiKey, MERCHANT_ID: m.merchantId, PAY_TO: m.payoutAddress, PORT: String(port),
    });
    await merchant.line(/^merchant on /);
    const creditLine = new RegExp(`^credit on eip155:84532, settled in ${w.asset}$`, 'i');
    assert.ok(merchant.lines.some((l) => creditLine.test(l)), `the merchant names the network and the asset it read from /supported: ${JSON.stringify(merchant.lines)}`);
    assert.ok(merchant.lines.some((l) => l.startsWith('merchant API key accepted')), 'the key check at start says the key is good (logger: console)');
    const res = await fetch(`${merchantUrl}/premium/atlas`);
    assert.equal(res.status, 402);
    const offer = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString()) as { accepts: { scheme: string; amount: string; payTo: string }[] };
    assert.equal(offer.accepts[0]?.scheme, 'credit');
    assert.equal(offer.accepts[0]?.amount, '420000');
  });

  it('agent-client installs alone; its example signs in, onboards to ACTIVE (handle claimed) and pays the merchant example', async function () {
    assert.ok(merchant, 'the merchant example runs');
    const ex = examples('agent-client');
    assert.deepEqual(Object.keys(ex.files).sort(), ['agent-fetch.mjs', 'agent-mcp.mjs', 'agent.mjs']);
    await installAsReadmeSays(agentProject(), ex.installs, tarballs);
    assert.ok(!existsSync(join(agentProject(), 'node_modules', '@credit-facilitator/x402-credit')), 'an agent does not install the merchant package');
    writeExamples(agentProject(), ex);

    browser = await openBrowser();
    wp = await browser.newWalletPage(generatePrivateKey());
    const env = { MCP_URL: mcpUrl(w.cli.env), MERCHANT_URL: merchantUrl, REDIRECT_PORT: String(await freePort()) };
    agentEnv = env;
    const first = await runAgent('agent.mjs', env);
    assert.equal(first.signIns, 1, 'the first run signs in once');
    assert.equal(first.signatures, 2, 'the borrower signs the facility and the key grant');
    const paid = first.last.split(' ');
    assert.equal(paid[0], '200', first.last);
    assert.deepEqual(JSON.parse(paid[1]!), { item: 'atlas' });
    assert.match(paid[3] ?? '', /^0x[0-9a-f]{64}$/);

    // The merchant waits for CONFIRMED before it answers; the x402-credit payment check agrees.
    const check = runNodeScript(merchantProject(), 'payment.mjs', { FACILITATOR_URL: w.baseUrl, MERCHANT_API_KEY: m.apiKey }, [paid[2]!]);
    assert.equal(await check.exited, 0, check.stderr());
    assert.deepEqual(check.lines, [`CONFIRMED 420000 ${paid[3]}`]);

    // A second run keeps the sign-in, the terminal and the stage: no sign-in, no signing, no new terminal.
    const again = await runAgent('agent.mjs', env);
    assert.deepEqual([again.signIns, again.signatures], [0, 0], again.lines.join('\n'));
    assert.match(again.last, /^200 /);
    const receipt = await call(w, 'GET', `/facilitator/payments/${again.last.split(' ')[2]}`, { token: m.apiKey });
    assert.equal(receipt.status, 200);

    // The @x402/fetch variant, from the same saved state.
    const viaFetch = await runAgent('agent-fetch.mjs', env);
    assert.equal(viaFetch.signIns, 0);
    assert.equal(viaFetch.last, '200 {"item":"atlas"} true');
  });

  it('paid MCP tools: the x402-credit MCP server example and the agent-client example paying it with the v2 client (extension binding) and the v1 client (tool-result binding), to CONFIRMED on chain; docs/agent-side.md shows the same code', async function () {
    assert.ok(agentEnv, 'the agent example ran (its borrower is ACTIVE, its ./agent files saved)');
    const docs = readmeExamples(join(REPO, 'docs', 'agent-side.md')).files;
    assert.equal(docs['mcp-server.mjs'], examples('x402-credit').files['mcp-server.mjs'], 'docs/agent-side.md shows the README merchant example');
    assert.equal(docs['agent-mcp.mjs'], examples('agent-client').files['agent-mcp.mjs'], 'docs/agent-side.md shows the README agent example');

    const port = await freePort();
    const server = runNodeScript(merchantProject(), 'mcp-server.mjs', { FACILITATOR_URL: w.baseUrl, MERCHANT_API_KEY: m.apiKey, MERCHANT_ID: m.merchantId, PAY_TO: m.payoutAddress, PORT: String(port) });
    try {
      await server.line(/^paid MCP server on /);
      const run = await runAgent('agent-mcp.mjs', { ...agentEnv, TOOLS_URL: `http://127.0.0.1:${port}/mcp` });
      assert.deepEqual([run.signIns, run.signatures], [0, 0], run.lines.join('\n'));
      const paid = run.lines.slice(-2).map((l) => l.split(' '));
      assert.deepEqual(paid.map((p) => [p[0], p[1], p.slice(3).join(' ')]), [['extension', 'CONFIRMED', 'sunny in Oslo'], ['tool-result', 'CONFIRMED', 'sunny in Bergen']], run.lines.join('\n'));
      const ids = paid.map((p) => p[2]!);
      for (const id of ids) {
        const check = runNodeScript(merchantProject(), 'payment.mjs', { FACILITATOR_URL: w.baseUrl, MERCHANT_API_KEY: m.apiKey }, [id]);
        assert.equal(await check.exited, 0, check.stderr());
        assert.match(check.lines.at(-1) ?? '', /^CONFIRMED 250000 0x[0-9a-f]{64}$/);
      }
      assert.equal((await settledEventsFor(w, ids)).length, 2, 'each paid call has its PaymentSettled event on chain');
    } finally {
      server.stop();
    }
  });

  /** Runs an agent example to its end, completing in Chromium each sign-in and signature it asks for. */
  async function runAgent(file: string, env: Record<string, string>) {
    let signIns = 0;
    let signatures = 0;
    const steps: Promise<unknown>[] = [];
    const run = runNodeScript(agentProject(), file, env, [], (line) => {
      const signIn = /^sign in: (\S+)$/.exec(line);
      if (signIn) {
        signIns += 1;
        const url = new URL(signIn[1]!);
        steps.push(completeSignIn(wp.page, url.href, url.searchParams.get('redirect_uri')!));
      }
      const sign = /^sign in your wallet: (\S+)$/.exec(line);
      if (sign) {
        signatures += 1;
        steps.push(signOnPage(wp.page, sign[1]!));
      }
    });
    const code = await run.exited;
    await Promise.all(steps);
    assert.equal(code, 0, `${file}: ${run.lines.join('\n')}\n${run.stderr()}`);
    return { signIns, signatures, lines: run.lines, last: run.lines.at(-1) ?? '' };
  }
});
