import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { SettlementInfo } from '../domain/settlement-info.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../store/mongo.js';
import type { CaptureFinisher } from './finish-capture.js';
import type { PaymentStatusCache } from './status-cache.js';

/** What the payment services (capture, verify, status, list, void, refund) use. */
export interface PaymentDeps {
  env: Env;
  store: Store;
  temporal: Client;
  logger: Logger;
  settlement: SettlementInfo;
  nowMs(): number;
  /** Starts captured payments' workflows after the answer; absent, capture awaits the start itself. */
  captureFinisher?: CaptureFinisher;
  /** Facts status polls remember between polls; absent, a module-wide cache is used. */
  statusCache?: PaymentStatusCache;
}
