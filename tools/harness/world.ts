import { Client, Connection } from '@temporalio/client';
import { createPublicClient, http, type Hex } from 'viem';
import { loadEnv } from '../../src/config/env.js';
import { connectStore, type Store } from '../../src/store/mongo.js';
import type { CliContext } from '../cli/context.js';

/** A running stack (the test suite's or the bench's own) plus clients to look behind its API: the store, Temporal and the chain. */
export interface World {
  env: Record<string, string>;
  baseUrl: string;
  store: Store;
  cli: CliContext;
  temporal: Client;
  publicClient: ReturnType<typeof createPublicClient>;
  settlement: Hex;
  asset: Hex;
}

/** Clients for a stack whose children run with `env`. */
export async function connectWorld(env: Record<string, string>): Promise<World> {
  const parsed = loadEnv({ ...process.env, ...env });
  const store = await connectStore(env.MONGODB_URI as string, parsed.MONGODB_DB);
  const temporal = new Client({ connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS as string }), namespace: parsed.TEMPORAL_NAMESPACE });
  return {
    env,
    baseUrl: `http://${parsed.API_HOST}:${parsed.API_PORT}/api/v1`,
    store,
    cli: { env: parsed, store, dataDir: env.DATA_DIR as string },
    temporal,
    publicClient: createPublicClient({ transport: http(env.RPC_URL as string) }),
    settlement: env.SETTLEMENT_CONTRACT_ADDRESS as Hex,
    asset: env.ASSET_ADDRESS as Hex,
  };
}

/** Closes the clients connectWorld opened. */
export async function closeWorld(w: World): Promise<void> {
  await Promise.allSettled([w.store.close(), w.temporal.connection.close()]);
}
