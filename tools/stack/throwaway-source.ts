import { freePort } from './processes.js';

/** Settings a developer's shell may hold that must never leak into a throwaway stack (tests, bench). */
export const EXTERNAL_SETTINGS = [
  'MONGODB_URI', 'RPC_URL', 'SETTLEMENT_CONTRACT_ADDRESS', 'ASSET_ADDRESS', 'DEPLOY_BLOCK', 'SETTLER_PRIVATE_KEY', 'SETTLER_ADDRESS',
  'MERCHANT_JWT_ISSUER', 'MERCHANT_JWT_JWKS_URL', 'MERCHANT_JWT_PUBLIC_JWK', 'PUBLIC_ORIGIN', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE',
  'TEMPORAL_UI_PORT',
];

/** The shell's environment without external endpoints and keys, for a stack of its own in `dir` on free ports. */
export async function throwawayStackSource(dir: string, base: NodeJS.ProcessEnv = process.env): Promise<NodeJS.ProcessEnv> {
  const source: NodeJS.ProcessEnv = { ...base };
  for (const name of EXTERNAL_SETTINGS) delete source[name];
  return {
    ...source,
    DATA_DIR: dir,
    API_HOST: '127.0.0.1',
    API_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    MONGODB_PORT: String(await freePort()),
    ANVIL_PORT: String(await freePort()),
    WORKER_METRICS_PORT: String(await freePort()),
  };
}
