import { loadSettlementInfo } from '../../src/chain/settlement-info.js';
import { loadEnv } from '../../src/config/env.js';
import { createLogger } from '../../src/observability/logger.js';
import type { ApiDeps } from '../../src/api/deps.js';
import type { BorrowerWebDeps } from '../../src/borrower-web/deps.js';
import type { McpDeps } from '../../src/mcp/deps.js';
import { loadOrCreateOAuthKeys } from '../../src/store/oauth-keys.js';
import type { World } from './world.js';

/**
 * What the adapters and services of the API take, composed here as src/main composes them for the
 * API process (tooling does not import the composition root itself).
 */
export type AgentDeps = ApiDeps & McpDeps & BorrowerWebDeps;

const depsByWorld = new WeakMap<World, Promise<AgentDeps>>();

/** Dependencies for calling the agent services in-process against the stack `w` looks at. */
export function agentDeps(w: World): Promise<AgentDeps> {
  let deps = depsByWorld.get(w);
  if (!deps) {
    deps = makeAgentDeps(w);
    depsByWorld.set(w, deps);
  }
  return deps;
}

async function makeAgentDeps(w: World): Promise<AgentDeps> {
  const { SETTLER_PRIVATE_KEY: _settlerKey, ...apiEnv } = w.env;
  const env = loadEnv({ ...process.env, ...apiEnv, LOG_LEVEL: 'silent' });
  return {
    env,
    store: w.store,
    temporal: w.temporal,
    verifyJwt: async () => null,
    logger: createLogger('silent'),
    settlement: await loadSettlementInfo(env),
    oauthKeys: await loadOrCreateOAuthKeys(w.store),
    nowMs: () => Date.now(),
  };
}
