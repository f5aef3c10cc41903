import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { asksForHelp, parseFlags, type FlagOptions } from '../../tools/cli/parse-flags.js';
import { UsageError } from '../../tools/cli/output.js';
import { devVoucher } from '../../tools/cli/dev-commands.js';
import type { CliContext } from '../../tools/cli/context.js';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';

const ADMIN = fileURLToPath(new URL('../../tools/cli/admin.js', import.meta.url));

/** A real agent private key (base64url) that begins with '-', as one in 64 does. */
function keyStartingWith(prefix: string): string {
  for (;;) {
    const key = encodeKey(generateAgentKeyPair().privateKey);
    if (key.startsWith(prefix)) return key;
  }
}

const VOUCHER_OPTIONS: FlagOptions = {
  merchant: { type: 'string' }, 'agent-private-key': { type: 'string' }, amount: { type: 'string' }, json: { type: 'boolean' },
};

describe('admin CLI flags', () => {
  it('takes a value that begins with "-" (a base64url key) as the value of the option before it', () => {
    for (const key of [keyStartingWith('-'), `-${keyStartingWith('-').slice(1, 3)}`, '--looks-like-an-option']) {
      const flags = parseFlags(['--merchant', 'm', '--agent-private-key', key, '--amount', '5', '--json'], VOUCHER_OPTIONS, 'dev voucher');
      assert.deepEqual({ ...flags }, { merchant: 'm', 'agent-private-key': key, amount: '5', json: true });
    }
  });

  it('accepts --option=value, including a value that begins with "-"', () => {
    const key = keyStartingWith('-');
    const flags = parseFlags([`--agent-private-key=${key}`, '--amount=5'], VOUCHER_OPTIONS, 'dev voucher');
    assert.deepEqual({ ...flags }, { 'agent-private-key': key, amount: '5' });
  });

  it('still refuses unknown options, a missing value and a value given to a boolean, as usage errors', () => {
    for (const args of [['--nope', 'x'], ['--amount'], ['--json=yes'], ['stray']]) {
      assert.throws(() => parseFlags(args, VOUCHER_OPTIONS, 'dev voucher'), (e: unknown) => e instanceof UsageError && /Usage: npm run admin -- dev voucher/.test(e.message), args.join(' '));
    }
  });

  it('sees --help and -h as options, never as the value of one', () => {
    assert.equal(asksForHelp(['--amount', '5', '--help'], VOUCHER_OPTIONS), true);
    assert.equal(asksForHelp(['-h'], VOUCHER_OPTIONS), true);
    assert.equal(asksForHelp(['--agent-private-key', '-h'], VOUCHER_OPTIONS), false);
    assert.equal(asksForHelp(['--agent-private-key', '--help', '--amount', '5'], VOUCHER_OPTIONS), false);
  });

  it('the admin CLI itself passes a dash-led value on to the command (which judges it)', async () => {
    const key = keyStartingWith('-');
    const run = promisify(execFile)(process.execPath, [ADMIN, 'chain', 'deploy', '--rpc-url', 'http://127.0.0.1:9', '--deployer-key', key], { env: { ...process.env, RPC_URL: '' } });
    const failed = await run.then(
      () => assert.fail('a base64url key is no deployer key'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(failed.code, 2);
    assert.doesNotMatch(failed.stderr, /ambiguous/);
    assert.match(failed.stderr, /--deployer-key \(or DEPLOYER_PRIVATE_KEY\) must be a 0x-prefixed 32-byte hex private key/);
  });
});

describe('dev voucher: amounts and lifetimes', () => {
  // Refused before the store is read: the context has none.
  const ctx = { env: { DEV_TOOLS: true } } as unknown as CliContext;
  const base = { merchant: 'm', borrower: 'b', agent: 'a', agentPrivateKey: 'k' };

  it('refuses an --amount that is not a positive whole number of base units, naming the flag and the value', async () => {
    for (const amount of ['abc', '0', '-5', '1.5', '1e6', ' 5']) {
      await assert.rejects(devVoucher(ctx, { ...base, amount }), (err: unknown) => err instanceof UsageError && /--amount must be a positive whole number of base units/.test(err.message) && err.message.includes(JSON.stringify(amount)), amount);
    }
  });

  it('refuses a --ttl that is not a positive whole number of seconds', async () => {
    for (const ttl of ['soon', '0', '-1', '2.5']) {
      await assert.rejects(devVoucher(ctx, { ...base, amount: '5', ttl }), (err: unknown) => err instanceof UsageError && /--ttl must be a positive whole number of seconds/.test(err.message), ttl);
    }
  });
});
