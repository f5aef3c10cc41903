import { createDemoMerchant } from './app.js';
import { DemoMerchantConfigError, loadDemoMerchantConfig } from './config.js';

async function main() {
  const config = loadDemoMerchantConfig();
  const merchant = await createDemoMerchant(config);
  process.stdout.write(`demo merchant: ${merchant.url}/premium/<item> (price ${config.price} base units, delivery on ${config.delivery})\n`);
  const stop = () => {
    void merchant.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  const message = err instanceof DemoMerchantConfigError || err instanceof Error ? err.message : String(err);
  process.stderr.write(`demo merchant failed to start: ${message}\n`);
  process.exit(1);
});
