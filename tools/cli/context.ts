import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEnv, networkId, type Env } from '../../src/config/env.js';
import { dataDir } from '../../src/config/paths.js';
import { connectStore, type Store } from '../../src/store/mongo.js';

export interface CliContext {
  env: Env;
  store: Store;
  dataDir: string;
}

export async function openCli(): Promise<CliContext> {
  const env = loadEnv();
  const store = await connectStore(env.MONGODB_URI ?? `mongodb://127.0.0.1:${env.MONGODB_PORT}/`, env.MONGODB_DB);
  return { env, store, dataDir: dataDir(env.DATA_DIR) };
}

/** The settlement asset and network: from the environment, else from the dev stack's deployment file. */
export function settlementTarget(ctx: CliContext): { asset: string; network: string } {
  if (ctx.env.ASSET_ADDRESS) return { asset: ctx.env.ASSET_ADDRESS.toLowerCase(), network: networkId(ctx.env) };
  const file = join(ctx.dataDir, 'deployment.json');
  if (!existsSync(file)) throw new Error(`no ASSET_ADDRESS and no ${file}: start the stack with npm start first`);
  const d = JSON.parse(readFileSync(file, 'utf8')) as { asset: string; chainId: number };
  return { asset: d.asset.toLowerCase(), network: `eip155:${d.chainId}` };
}
