import { startExpressMerchant } from './app.js';

const required = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required (see README.md "Using the x402 reference SDKs")`);
  return v;
};

const log = (level: string) => (msg: string, fields: Record<string, unknown> = {}) => process.stdout.write(JSON.stringify({ level, msg, ...fields }) + '\n');

async function main() {
  const merchant = await startExpressMerchant({
    facilitatorUrl: process.env.FACILITATOR_URL ?? 'http://127.0.0.1:8402/api/v1',
    apiKey: required('MERCHANT_API_KEY'),
    merchantId: required('MERCHANT_ID'),
    payTo: required('MERCHANT_PAY_TO'),
    price: process.env.PRICE ?? '$0.42',
    port: Number(process.env.PORT ?? '8411'),
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
  });
  process.stdout.write(`express merchant: ${merchant.url}/premium/<item>\n`);
  const stop = () => void merchant.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`express merchant failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
