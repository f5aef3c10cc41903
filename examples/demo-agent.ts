import { spawn } from 'node:child_process';
import { z } from 'zod';
import { CreditAgent, newIdempotencyKey } from '@credit-facilitator/agent-client/credit-agent';
import { loadOrCreateWorkloadKey } from '@credit-facilitator/agent-client/workload-key';

/** A runnable agent host: signs the borrower in, walks onboarding, then buys from the demo merchant. */
const EnvSchema = z.object({
  MCP_URL: z.url().default('http://127.0.0.1:8402/mcp'),
  DEMO_MERCHANT_URL: z.url().default('http://127.0.0.1:8410/premium/report'),
  AGENT_KEY_FILE: z.string().default('./data/agent/workload-key.json'),
  AGENT_OAUTH_FILE: z.string().default('./data/agent/oauth.json'),
  /** Fixed so a registration kept in AGENT_OAUTH_FILE stays valid across runs. */
  AGENT_REDIRECT_PORT: z.coerce.number().int().min(1).max(65535).default(8411),
  AGENT_HANDLE: z.string().regex(/^[a-z][a-z0-9_-]{2,31}$/).default(`agent-${Math.random().toString(36).slice(2, 8)}`),
  AGENT_PER_PAYMENT_LIMIT: z.string().regex(/^[1-9][0-9]*$/).default('5000000'),
  AGENT_DAILY_LIMIT: z.string().regex(/^[1-9][0-9]*$/).default('50000000'),
  AGENT_KEY_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  AGENT_MAX_AMOUNT: z.string().regex(/^[1-9][0-9]*$/).optional(),
  /** Repay this many base units after the purchase (optional). */
  AGENT_REPAY_AMOUNT: z.string().regex(/^[1-9][0-9]*$/).optional(),
});

const say = (line: string) => process.stdout.write(line + '\n');

function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Printing the link is enough.
  }
}

const showLink = (what: string) => (url: string) => {
  say(`\n${what}: open this link and sign in your wallet:\n  ${url}\n`);
  openInBrowser(url);
};

async function main() {
  const env = EnvSchema.parse(process.env);
  const { key, created } = await loadOrCreateWorkloadKey(env.AGENT_KEY_FILE);
  say(`${created ? 'created' : 'loaded'} workload key ${env.AGENT_KEY_FILE} (public ${key.publicKeyBase64Url})`);

  const agent = await CreditAgent.create({
    mcpUrl: env.MCP_URL,
    workloadKey: key,
    openAuthorizationUrl: (u) => showLink('Sign in')(u.toString()),
    oauthStoragePath: env.AGENT_OAUTH_FILE,
    redirectPort: env.AGENT_REDIRECT_PORT,
    clientName: 'credit-demo-agent',
  });
  try {
    await agent.connect();
    for (;;) {
      const status = await agent.getBorrowerStatus();
      const terminals = status.operational_agents;
      if (!agent.operationalAgentId && terminals.length === 1) agent.operationalAgentId = terminals[0]!.operational_agent_id;
      say(`stage ${status.stage}${status.credit ? `, credit available ${status.credit.available} of ${status.credit.limit}` : ''}`);
      if (status.stage === 'SIGNED_IN') {
        const r = await agent.registerBorrower({ idempotency_key: newIdempotencyKey(), terminal_label: 'demo agent' });
        agent.operationalAgentId = r.operational_agent_id;
      } else if (status.stage === 'WALLET_VERIFIED') {
        const step = await agent.completeSigningStep('accept_credit_facility', { idempotency_key: newIdempotencyKey() }, showLink('Accept the credit facility'));
        if (step.status !== 'completed') throw new Error(`accepting the facility ended ${step.status}: ${step.failure_reason ?? ''}`);
      } else if (status.stage === 'FACILITY_ACCEPTED') {
        const step = await agent.completeSigningStep(
          'register_agent_key',
          {
            idempotency_key: newIdempotencyKey(),
            per_payment_limit: env.AGENT_PER_PAYMENT_LIMIT,
            daily_limit: env.AGENT_DAILY_LIMIT,
            expires_at: Math.floor(Date.now() / 1000) + env.AGENT_KEY_TTL_DAYS * 86_400,
          },
          showLink('Grant this agent key'),
        );
        if (step.status !== 'completed') throw new Error(`registering the agent key ended ${step.status}: ${step.failure_reason ?? ''}`);
      } else if (status.stage === 'AGENT_KEY_REGISTERED') {
        const r = await agent.claimHandle({ idempotency_key: newIdempotencyKey(), handle: env.AGENT_HANDLE });
        say(`claimed handle ${r.handle}`);
      } else {
        break;
      }
    }

    say(`buying ${env.DEMO_MERCHANT_URL}`);
    const paid = await agent.payFetch(env.DEMO_MERCHANT_URL, {}, env.AGENT_MAX_AMOUNT ? { maxAmount: env.AGENT_MAX_AMOUNT } : {});
    say(`merchant answered ${paid.response.status}: ${await paid.response.text()}`);
    if (paid.paymentResponse) say(`PAYMENT-RESPONSE ${JSON.stringify(paid.paymentResponse)}`);

    if (env.AGENT_REPAY_AMOUNT) {
      const step = await agent.completeSigningStep('execute_repayment', { idempotency_key: newIdempotencyKey(), amount: env.AGENT_REPAY_AMOUNT }, showLink('Approve the repayment'));
      say(`repayment ${step.status}: ${JSON.stringify(step.result ?? step.failure_reason ?? {})}`);
    }
  } finally {
    await agent.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo agent failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
