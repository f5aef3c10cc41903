import type { Env } from '../config/env.js';
import type { Store } from '../store/mongo.js';

/** What the webhook services use; the composition root hands them no more. */
export interface WebhookDeps {
  env: Env;
  store: Store;
  nowMs(): number;
}
