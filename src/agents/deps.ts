import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { SettlementInfo } from '../domain/settlement-info.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../store/mongo.js';

/** What the agent services (onboarding, keys, facility, prepare, repayment, signing) use. */
export interface AgentDeps {
  env: Env;
  store: Store;
  temporal: Client;
  logger: Logger;
  settlement: SettlementInfo;
  nowMs(): number;
}
