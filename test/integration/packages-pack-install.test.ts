import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { mcpUrl } from '../../src/config/env.js';
import { SCOPES } from '@credit-facilitator/wire/onboarding';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { onboardBorrower } from '../helpers/onboarding.js';
import { call, newMerchant, world } from '../helpers/world.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGES = ['wire', 'agent-client', 'x402-credit'] as const;
/** The reference SDKs the round trip runs on, at the versions the repository pins. */
const SDKS = ['@x402/core', '@x402/fetch', '@x402/express', 'express'] as const;

interface PackEntry {
  name: string;
  filename: string;
  files: { path: string }[];
}

/** npm's environment without what `npm test` exported for this repository (workspace, prefix, scripts). */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

/**
 * The packages as a stranger gets them: `npm pack` each into a directory outside the repository,
 * install the tarballs with the reference x402 SDKs into a fresh project there, and run the x402
 * round trip with plain node from that project. It proves the packages stand alone: their own
 * dependencies, their exports, their built files, no path back into this repository.
 */
describe('client packages: packed, installed into a throwaway project, pay an x402 round trip', function () {
  let dir: string;

  after(function () {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an @x402/fetch agent pays an @x402/express merchant through the facilitator to CONFIRMED, importing only the packages', async function () {
    this.timeout(240_000);
    const w = await world();
    const m = await newMerchant(w, 'Packed Shop');
    const b = await onboardBorrower(w);
    const token = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES });

    dir = realpathSync(mkdtempSync(join(tmpdir(), 'cf-packed-')));
    assert.ok(!dir.startsWith(realpathSync(repo)), 'the project lives outside the repository');
    const tarballs: Record<string, string> = {};
    for (const p of PACKAGES) {
      // npm run build already built dist/ (and prepack would only rebuild it).
      const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: join(repo, 'packages', p), env: npmEnv() });
      const [packed] = JSON.parse(stdout) as PackEntry[];
      assert.ok(packed, `npm pack ${p}`);
      const files = packed.files.map((f) => f.path);
      assert.ok(files.includes('README.md') && files.includes('package.json'), `${p}: ${files.join(' ')}`);
      assert.deepEqual(
        files.filter((f) => !/^dist\/.+\.(js|d\.ts|js\.map)$/.test(f) && f !== 'README.md' && f !== 'package.json'),
        [],
        `${p} ships only its build, README and package.json`,
      );
      tarballs[packed.name] = `file:../${packed.filename}`;
    }

    const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const pinned = Object.fromEntries(SDKS.map((s) => [s, root.dependencies[s] ?? root.devDependencies[s]]));
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'packed-round-trip', private: true, type: 'module', dependencies: { ...tarballs, ...pinned } }, null, 2));
    copyFileSync(join(repo, 'test/fixtures/packed-project/round-trip.mjs'), join(project, 'round-trip.mjs'));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], { cwd: project, env: npmEnv(), timeout: 180_000 });

    const { stdout } = await run(process.execPath, ['round-trip.mjs'], {
      cwd: project,
      timeout: 120_000,
      env: {
        PATH: process.env.PATH,
        FACILITATOR_URL: w.baseUrl,
        MCP_URL: mcpUrl(w.cli.env),
        MERCHANT_API_KEY: m.apiKey,
        MERCHANT_ID: m.merchantId,
        MERCHANT_PAY_TO: m.payoutAddress,
        ACCESS_TOKEN: token,
        AGENT_PRIVATE_KEY: b.agentPrivateKey,
        OPERATIONAL_AGENT_ID: b.operationalAgentId,
      },
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      status: number;
      body: unknown;
      handled: number;
      paymentResponse: { success: boolean; transaction: string; payer: string; amount: string; extra?: Record<string, unknown> } | null;
      resolved: string[];
    };
    assert.equal(out.status, 200, JSON.stringify(out.body));
    assert.deepEqual(out.body, { item: 'atlas', content: 'the premium content' });
    assert.equal(out.handled, 1);
    const installed = pathToFileURL(join(project, 'node_modules', '@credit-facilitator')).href;
    for (const url of out.resolved) assert.ok(url.startsWith(`${installed}/`), `${url} resolves from the throwaway project`);

    const settle = out.paymentResponse;
    assert.ok(settle, 'PAYMENT-RESPONSE');
    assert.equal(settle.success, true);
    assert.equal(settle.payer, b.borrowerId);
    assert.equal(settle.amount, '420000');
    assert.match(settle.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal(settle.extra?.status, 'CONFIRMED');
    const receipt = await call(w, 'GET', `/facilitator/payments/${String(settle.extra?.paymentId)}`, { token: m.apiKey });
    assert.equal(receipt.status, 200);
    assert.equal(receipt.json.status, 'CONFIRMED');
    assert.equal(receipt.json.transaction, settle.transaction);
    assert.equal(receipt.json.merchantId, m.merchantId);
  });
});
