import { startPaidMcpServer } from './app.js';

const required = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required (see docs/agent-side.md "Paid MCP tools")`);
  return v;
};

const log = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => process.stdout.write(JSON.stringify({ level, msg, ...fields }) + '\n');

async function main() {
  const server = await startPaidMcpServer({
    facilitatorUrl: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:8402/api/v1',
    apiKey: required('MERCHANT_API_KEY'),
    merchantId: required('MERCHANT_ID'),
    payTo: required('MERCHANT_PAY_TO'),
    port: Number(process.env.PORT ?? '8412'),
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
  });
  process.stdout.write(`paid MCP server: ${server.url} (tools forecast, quote, ping)\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`paid MCP server failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
