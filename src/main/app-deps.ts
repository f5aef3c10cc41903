import type { ApiDeps } from '../api/deps.js';
import type { AuthDeps } from '../auth/deps.js';
import type { BorrowerWebDeps } from '../borrower-web/deps.js';
import type { McpDeps } from '../mcp/deps.js';
import type { MerchantWebDeps } from '../merchant-web/deps.js';

/**
 * Everything the API process composes (src/main/api.ts). Only the composition root sees the whole:
 * each adapter and service takes its own narrow interface, which this one satisfies.
 */
export interface AppDeps extends ApiDeps, McpDeps, BorrowerWebDeps, AuthDeps, MerchantWebDeps {}
