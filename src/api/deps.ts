import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { JwtVerifier } from '../auth/merchant-jwt.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../store/mongo.js';

/** What the facilitator serves about the chain side: from the deployment, never from a request. */
export interface SettlementInfo {
  network: string;
  asset: string;
  assetDecimals: number;
  assetName: string;
  assetVersion: string;
  settlementContract: string;
  settler: string;
}

export interface AppDeps {
  env: Env;
  store: Store;
  temporal: Client;
  verifyJwt: JwtVerifier;
  logger: Logger;
  settlement: SettlementInfo;
  nowMs(): number;
}
