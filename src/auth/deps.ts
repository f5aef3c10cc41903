import type { Env } from '../config/env.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../store/mongo.js';
import type { OAuthKeys } from '../store/oauth-keys.js';

/** What the authorization server uses. */
export interface AuthDeps {
  env: Env;
  store: Store;
  logger: Logger;
  oauthKeys: OAuthKeys;
  nowMs(): number;
}
