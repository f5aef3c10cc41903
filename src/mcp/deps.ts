import type { Registry } from 'prom-client';
import type { AgentDeps } from '../agents/deps.js';
import type { OAuthKeys } from '../store/oauth-keys.js';
import type { ApiMetrics } from '../observability/metrics.js';

/** What the MCP endpoint uses: the agent services' dependencies, the keys its tokens verify against, metrics. */
export interface McpDeps extends AgentDeps {
  oauthKeys: OAuthKeys;
  metrics?: { registry: Registry; api: ApiMetrics };
}
