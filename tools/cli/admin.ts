import { ConfigError } from '../../src/config/env.js';
import { openCli, settlementTarget, type CliContext } from './context.js';
import { devBorrowerCreate, devFund, devVoucher } from './dev-commands.js';
import { devPay } from './dev-pay.js';
import { creditOffer } from './payment-required.js';
import { chainDeploy } from './chain-commands.js';
import { createMerchant, jwtIssue, keyIssue, keyList, keyRevoke, keyRotate, merchantLimits, merchantList } from './merchant-commands.js';
import { print, UsageError } from './output.js';
import { asksForHelp, parseFlags, type FlagOptions, type Flags } from './parse-flags.js';
import { stackBackup, stackRestore } from './stack-commands.js';
import { paymentsExport, paymentsReconcile } from './payment-commands.js';
import { webhookAdd, webhookList, webhookRemove, webhookRotate } from './webhook-commands.js';
import { webhookListen } from './webhook-listen.js';
import { agentKeyRevoke, borrowerReinstate, borrowerShow, borrowerSuspend } from './borrower-commands.js';

interface Command {
  usage: string;
  summary: string;
  options: FlagOptions;
  run(ctx: CliContext, f: Flags): Promise<Record<string, unknown> | Record<string, unknown>[]>;
  note?: string;
  /** Commands that only talk to the chain skip the store connection. */
  noStore?: boolean;
  /** The name of the one argument the command takes without an option (e.g. dev pay's url). */
  positional?: string;
  /** True when the command writes its data to stdout itself: the summary then goes to stderr. */
  dataOnStdout?: (f: Flags) => boolean;
}

const s = (f: Flags, k: string) => (typeof f[k] === 'string' ? (f[k] as string) : undefined);

const COMMANDS: Record<string, Command> = {
  'merchant create': {
    usage: 'merchant create --name <name> --payout <0x address>',
    summary: 'Provision a merchant and its first API key (shown once).',
    options: { name: { type: 'string' }, payout: { type: 'string' } },
    run: (ctx, f) => createMerchant(ctx, s(f, 'name'), s(f, 'payout')),
    note: 'Store apiKey now: it is shown once and kept only as a hash.',
  },
  'merchant list': { usage: 'merchant list', summary: 'List merchants.', options: {}, run: (ctx) => merchantList(ctx) },
  'merchant limits': {
    usage: 'merchant limits --merchant <merchantId> [--verify-per-min N --verify-burst N] [--capture-per-min N --capture-burst N] [--reset]',
    summary: "Set a merchant's own rate limits (or --reset to the RATE_LIMIT_* defaults).",
    options: {
      merchant: { type: 'string' },
      'verify-per-min': { type: 'string' },
      'verify-burst': { type: 'string' },
      'capture-per-min': { type: 'string' },
      'capture-burst': { type: 'string' },
      reset: { type: 'boolean' },
    },
    run: (ctx, f) =>
      merchantLimits(ctx, s(f, 'merchant'), {
        ...(s(f, 'verify-per-min') ? { verifyPerMin: s(f, 'verify-per-min') } : {}),
        ...(s(f, 'verify-burst') ? { verifyBurst: s(f, 'verify-burst') } : {}),
        ...(s(f, 'capture-per-min') ? { capturePerMin: s(f, 'capture-per-min') } : {}),
        ...(s(f, 'capture-burst') ? { captureBurst: s(f, 'capture-burst') } : {}),
        reset: f.reset === true,
      }),
  },
  'key issue': {
    usage: 'key issue --merchant <merchantId>',
    summary: 'Issue another API key for a merchant (shown once).',
    options: { merchant: { type: 'string' } },
    run: (ctx, f) => keyIssue(ctx, s(f, 'merchant')),
    note: 'Store apiKey now: it is shown once and kept only as a hash.',
  },
  'key list': { usage: 'key list --merchant <merchantId>', summary: "List a merchant's keys by prefix.", options: { merchant: { type: 'string' } }, run: (ctx, f) => keyList(ctx, s(f, 'merchant')) },
  'key revoke': {
    usage: 'key revoke --merchant <merchantId> --key <keyId>',
    summary: 'Revoke an API key at once.',
    options: { merchant: { type: 'string' }, key: { type: 'string' } },
    run: (ctx, f) => keyRevoke(ctx, s(f, 'merchant'), s(f, 'key')),
  },
  'key rotate': {
    usage: 'key rotate --merchant <merchantId> --key <keyId>',
    summary: 'Issue a new key, then revoke the old one.',
    options: { merchant: { type: 'string' }, key: { type: 'string' } },
    run: (ctx, f) => keyRotate(ctx, s(f, 'merchant'), s(f, 'key')),
    note: 'Store apiKey now: it is shown once and kept only as a hash.',
  },
  'jwt issue': {
    usage: 'jwt issue --merchant <merchantId> [--permissions a,b] [--mfa] [--ttl seconds]',
    summary: 'Dev stack only: sign a merchant user JWT with the local dev issuer.',
    options: { merchant: { type: 'string' }, permissions: { type: 'string' }, mfa: { type: 'boolean' }, ttl: { type: 'string' } },
    run: (ctx, f) => jwtIssue(ctx, { ...(s(f, 'merchant') ? { merchant: s(f, 'merchant') } : {}), ...(s(f, 'permissions') ? { permissions: s(f, 'permissions') } : {}), mfa: f.mfa === true, ...(s(f, 'ttl') ? { ttl: s(f, 'ttl') } : {}) }),
  },
  'chain deploy': {
    usage: 'chain deploy --rpc-url <url> [--deployer-key 0x..] [--chain-id 84532] [--settler 0x..] [--pool <base units>]',
    summary: 'Deploy the test USDC and the settlement contract to an EVM node; prints the settings for .env.',
    options: { 'rpc-url': { type: 'string' }, 'deployer-key': { type: 'string' }, 'chain-id': { type: 'string' }, settler: { type: 'string' }, pool: { type: 'string' } },
    noStore: true,
    run: (_ctx, f) =>
      chainDeploy({
        ...(s(f, 'rpc-url') ? { rpcUrl: s(f, 'rpc-url') } : {}),
        ...(s(f, 'deployer-key') ? { deployerKey: s(f, 'deployer-key') } : {}),
        ...(s(f, 'chain-id') ? { chainId: s(f, 'chain-id') } : {}),
        ...(s(f, 'settler') ? { settler: s(f, 'settler') } : {}),
        ...(s(f, 'pool') ? { pool: s(f, 'pool') } : {}),
      }),
    note: 'Put these lines in .env (or the environment of the API and worker).',
  },
  'payments export': {
    usage: 'payments export --merchant <merchantId> --from <ISO time> [--to <ISO time>] [--format csv|json] [--out <file>]',
    summary: "Write a merchant's payments settled in a period (by block time) as CSV or JSON, with batch, transaction and block. Without --out the data goes to stdout and the summary to stderr.",
    options: { merchant: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } },
    dataOnStdout: (f) => !s(f, 'out'),
    run: (ctx, f) => paymentsExport(ctx, Object.fromEntries((['merchant', 'from', 'to', 'format', 'out'] as const).filter((k) => s(f, k)).map((k) => [k, s(f, k)]))),
  },
  'payments reconcile': {
    usage: 'payments reconcile --merchant <merchantId> --from <ISO time> [--to <ISO time>] [--rpc-url <url>]',
    summary: "Compare a merchant's CONFIRMED payments in the store with the chain's PaymentSettled events for a period; lists every difference (exit code 1 when any).",
    options: { merchant: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, 'rpc-url': { type: 'string' } },
    run: async (ctx, f) => {
      const report = await paymentsReconcile(ctx, {
        ...Object.fromEntries((['merchant', 'from', 'to'] as const).filter((k) => s(f, k)).map((k) => [k, s(f, k)])),
        ...(s(f, 'rpc-url') ? { rpcUrl: s(f, 'rpc-url') } : {}),
      });
      if (report.differences.length > 0) process.exitCode = 1;
      return report;
    },
  },
  'borrower show': {
    usage: 'borrower show --borrower <borrowerId>',
    summary: "A borrower's status, credit, operational agents and their keys.",
    options: { borrower: { type: 'string' } },
    run: (ctx, f) => borrowerShow(ctx, { ...(s(f, 'borrower') ? { borrower: s(f, 'borrower') } : {}) }),
  },
  'borrower suspend': {
    usage: 'borrower suspend --borrower <borrowerId> --reason <text>',
    summary: 'Stop a borrower spending at once: prepare and capture refuse with borrower_not_active; captured payments still settle; every OAuth grant of the borrower ends (agents sign in again with the wallet).',
    options: { borrower: { type: 'string' }, reason: { type: 'string' } },
    run: (ctx, f) => borrowerSuspend(ctx, { ...(s(f, 'borrower') ? { borrower: s(f, 'borrower') } : {}), ...(s(f, 'reason') ? { reason: s(f, 'reason') } : {}) }),
  },
  'borrower reinstate': {
    usage: 'borrower reinstate --borrower <borrowerId>',
    summary: 'Lift a suspension.',
    options: { borrower: { type: 'string' } },
    run: (ctx, f) => borrowerReinstate(ctx, { ...(s(f, 'borrower') ? { borrower: s(f, 'borrower') } : {}) }),
  },
  'agent-key revoke': {
    usage: 'agent-key revoke --key <agentKeyId>',
    summary: 'Revoke one agent key at once: vouchers it signed, even prepared before, are refused with agent_key_revoked.',
    options: { key: { type: 'string' } },
    run: (ctx, f) => agentKeyRevoke(ctx, { ...(s(f, 'key') ? { key: s(f, 'key') } : {}) }),
  },
  'webhook add': {
    usage: 'webhook add --merchant <merchantId> --url <https URL, or http://127.0.0.1:… in development mode> [--events payment.confirmed,payment.voided,…]',
    summary: 'Register a webhook endpoint for a merchant, subscribed to --events (default all: payment.confirmed, payment.failed, payment.voided, payment.refunded); prints its secret once.',
    options: { merchant: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } },
    run: (ctx, f) =>
      webhookAdd(ctx, { ...(s(f, 'merchant') ? { merchant: s(f, 'merchant') } : {}), ...(s(f, 'url') ? { url: s(f, 'url') } : {}), ...(s(f, 'events') ? { events: s(f, 'events') } : {}) }),
    note: 'Give the secret to the merchant now: it is not shown again (rotate to issue a new one).',
  },
  'webhook list': {
    usage: 'webhook list --merchant <merchantId>',
    summary: "List a merchant's webhook endpoints (never their secrets).",
    options: { merchant: { type: 'string' } },
    run: (ctx, f) => webhookList(ctx, { ...(s(f, 'merchant') ? { merchant: s(f, 'merchant') } : {}) }),
  },
  'webhook rotate': {
    usage: 'webhook rotate --merchant <merchantId> --endpoint <we_…>',
    summary: 'Issue a new signing secret (shown once); the old one keeps signing for 24 hours.',
    options: { merchant: { type: 'string' }, endpoint: { type: 'string' } },
    run: (ctx, f) => webhookRotate(ctx, { ...(s(f, 'merchant') ? { merchant: s(f, 'merchant') } : {}), ...(s(f, 'endpoint') ? { endpoint: s(f, 'endpoint') } : {}) }),
  },
  'webhook remove': {
    usage: 'webhook remove --merchant <merchantId> --endpoint <we_…>',
    summary: 'Delete a webhook endpoint; its pending deliveries stop.',
    options: { merchant: { type: 'string' }, endpoint: { type: 'string' } },
    run: (ctx, f) => webhookRemove(ctx, { ...(s(f, 'merchant') ? { merchant: s(f, 'merchant') } : {}), ...(s(f, 'endpoint') ? { endpoint: s(f, 'endpoint') } : {}) }),
  },
  'webhook listen': {
    usage: 'webhook listen [--secret <whsec_…>] [--endpoint <we_…>] [--port 8499] [--max-events N]',
    summary:
      "Development: receive deliveries on http://127.0.0.1:<port>/webhooks (register that URL; a development stack allows loopback endpoints), verify each signature with the endpoint's secret and print each event as a JSON line. " +
      'The secret is --secret, or else the WEBHOOK_SECRET environment variable (keeps it out of the shell history). --endpoint names the endpoint the secret belongs to in messages; ' +
      'a delivery that fails verification is answered 401 and reported with the secret (source and SHA-256 prefix) it was checked against: a delivery signed for another endpoint looks like that. ' +
      'Send one with POST …/webhook-endpoints/{id}/test.',
    options: { secret: { type: 'string' }, endpoint: { type: 'string' }, port: { type: 'string' }, 'max-events': { type: 'string' } },
    noStore: true,
    dataOnStdout: () => true,
    run: (_ctx, f) =>
      webhookListen({
        ...(s(f, 'secret') ? { secret: s(f, 'secret') } : {}),
        ...(s(f, 'endpoint') ? { endpoint: s(f, 'endpoint') } : {}),
        ...(s(f, 'port') ? { port: s(f, 'port') } : {}),
        ...(s(f, 'max-events') ? { maxEvents: s(f, 'max-events') } : {}),
      }),
  },
  'stack backup': {
    usage: 'stack backup --to <new directory> [--rpc-url <anvil url>]',
    summary: "Copy the embedded stack's data (Temporal, the store, the cluster topology's PostgreSQL, the chain state, deployment and dev keys) while it runs.",
    options: { to: { type: 'string' }, 'rpc-url': { type: 'string' } },
    noStore: true,
    run: (_ctx, f) => stackBackup({ ...(s(f, 'to') ? { to: s(f, 'to') } : {}), ...(s(f, 'rpc-url') ? { rpcUrl: s(f, 'rpc-url') } : {}) }),
    note: 'Restore with: npm run admin -- stack restore --from <backup> --to <new data dir>',
  },
  'stack restore': {
    usage: 'stack restore --from <backup directory> --to <new data directory>',
    summary: 'Lay a backup out as a data directory; start the stack on it with DATA_DIR=<dir> npm start (a cluster backup: npm run stack -- --topology cluster).',
    options: { from: { type: 'string' }, to: { type: 'string' } },
    noStore: true,
    run: async (_ctx, f) => stackRestore({ ...(s(f, 'from') ? { from: s(f, 'from') } : {}), ...(s(f, 'to') ? { to: s(f, 'to') } : {}) }),
  },
  'dev borrower': {
    usage: 'dev borrower [--credit <base units>] [--agent-public-key <base64url>]',
    summary: 'Dev only: an ACTIVE borrower with a credit line and an agent key (generated unless given).',
    options: { credit: { type: 'string' }, 'agent-public-key': { type: 'string' } },
    run: (ctx, f) => devBorrowerCreate(ctx, { ...(s(f, 'credit') ? { credit: s(f, 'credit') } : {}), ...(s(f, 'agent-public-key') ? { agentPublicKey: s(f, 'agent-public-key') } : {}) }),
  },
  'dev fund': {
    usage: 'dev fund --wallet <0x address> --amount <base units>',
    summary: 'Dev only (embedded anvil): mint test USDC to a wallet, e.g. a borrower\'s to try execute_repayment.',
    options: { wallet: { type: 'string' }, amount: { type: 'string' } },
    run: (ctx, f) => devFund(ctx, { ...(s(f, 'wallet') ? { wallet: s(f, 'wallet') } : {}), ...(s(f, 'amount') ? { amount: s(f, 'amount') } : {}) }),
  },
  'dev voucher': {
    usage:
      'dev voucher --borrower <id> --agent <operationalAgentId> --agent-private-key <base64url> (--merchant <id> --amount <base units> [--order-ref ref] | --payment-required <PAYMENT-REQUIRED header value>) [--resource url] [--ttl seconds]',
    summary:
      "Dev only: reserve credit and sign a credit voucher as the agent would; prints the capture body (with paymentRequirements, so verify takes it too) and the PAYMENT-SIGNATURE header value. The envelope's accepted is what a stock @x402/express paywall with CreditSchemeServer advertises, or the merchant's own credit requirement from --payment-required, as-is.",
    options: {
      merchant: { type: 'string' }, borrower: { type: 'string' }, agent: { type: 'string' }, 'agent-private-key': { type: 'string' },
      amount: { type: 'string' }, 'order-ref': { type: 'string' }, resource: { type: 'string' }, ttl: { type: 'string' }, 'payment-required': { type: 'string' },
    },
    run: (ctx, f) => {
      const offer = s(f, 'payment-required') ? creditOffer(s(f, 'payment-required') as string, '', settlementTarget(ctx).network) : undefined;
      return devVoucher(ctx, {
        ...Object.fromEntries(
          (['merchant', 'borrower', 'agent', 'amount', 'ttl'] as const).filter((k) => s(f, k)).map((k) => [k, s(f, k)]),
        ),
        ...(s(f, 'agent-private-key') ? { agentPrivateKey: s(f, 'agent-private-key') } : {}),
        ...(s(f, 'order-ref') ? { orderRef: s(f, 'order-ref') } : {}),
        ...(offer ? { accepted: offer.accepted } : {}),
        ...(s(f, 'resource') || offer?.resource ? { resource: s(f, 'resource') ?? offer?.resource } : {}),
      });
    },
  },
  'dev pay': {
    usage: 'dev pay <url> [--wait] [--wait-seconds N] [--borrower <id> --agent <operationalAgentId> --agent-private-key <base64url>] [--api-key sk_live_…]',
    summary:
      "Dev only: a test payment in one command. GETs the URL, reads its 402 (x402 v2 PAYMENT-REQUIRED), reserves credit for the merchant's credit requirement and signs a voucher carrying it as-is (a dev borrower is made unless one is given), sends the request again with PAYMENT-SIGNATURE, and prints the merchant's answer and the payment's status; --wait long-polls until CONFIRMED (exit 1 otherwise). The status is read as the merchant (--api-key, else a dev JWT).",
    options: {
      wait: { type: 'boolean' }, 'wait-seconds': { type: 'string' }, borrower: { type: 'string' }, agent: { type: 'string' },
      'agent-private-key': { type: 'string' }, 'api-key': { type: 'string' },
    },
    positional: 'url',
    run: (ctx, f) => {
      const waitSeconds = s(f, 'wait-seconds') ? Number(s(f, 'wait-seconds')) : f.wait === true ? 120 : 0;
      if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new UsageError('--wait-seconds must be a whole number of seconds');
      return devPay(ctx, {
        ...Object.fromEntries((['url', 'borrower', 'agent'] as const).filter((k) => s(f, k)).map((k) => [k, s(f, k)])),
        ...(s(f, 'agent-private-key') ? { agentPrivateKey: s(f, 'agent-private-key') } : {}),
        ...(s(f, 'api-key') ? { apiKey: s(f, 'api-key') } : {}),
        ...(waitSeconds > 0 ? { waitSeconds } : {}),
      });
    },
  },
};

function help(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.summary}`);
  return `Operator CLI for the credit facilitator.\n\nUsage: npm run admin -- <command> [options] [--json]\n\nCommands:\n${lines.join('\n')}\n\nAn option's value is the next argument even when it begins with '-'; --option=value works too.\nReads MONGODB_URI (or the dev stack's default) and DATA_DIR from the environment.\n`;
}

async function main(argv: string[]): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const cmd = COMMANDS[name];
  const wantsHelp = cmd ? asksForHelp(argv.slice(2), cmd.options) : argv.includes('--help') || argv.includes('-h');
  if (!cmd || wantsHelp) {
    if (cmd) process.stdout.write(`Usage: npm run admin -- ${cmd.usage} [--json]\n\n${cmd.summary}\n`);
    else process.stdout.write(help());
    return cmd || wantsHelp || argv.length === 0 ? 0 : 2;
  }
  const flags: Flags = parseFlags(argv.slice(2), { ...cmd.options, json: { type: 'boolean' } }, cmd.usage, cmd.positional);
  const show = (result: Record<string, unknown> | Record<string, unknown>[]) =>
    print(flags.json === true, result, flags.json === true ? undefined : cmd.note, cmd.dataOnStdout?.(flags) ? process.stderr : process.stdout);
  if (cmd.noStore) {
    show(await cmd.run(undefined as unknown as CliContext, flags));
    return 0;
  }
  const ctx = await openCli();
  try {
    show(await cmd.run(ctx, flags));
  } finally {
    await ctx.store.close();
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known = err instanceof UsageError || err instanceof ConfigError;
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!known) process.stderr.write('Is the stack running (npm start)? Run with --help for usage.\n');
    process.exit(known ? 2 : 1);
  },
);
