import type { CaptureFinisher } from '../payments/finish-capture.js';
import type { PaymentStatusCache } from '../payments/status-cache.js';
import type { ReceiptSigner } from '../settlement/signed-receipt.js';
import type { CaptureAdmission } from '../api/capture-admission.js';
import type { MerchantCache } from '../store/merchant-cache.js';
import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { JwtVerifier } from '../auth/merchant-jwt.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../store/mongo.js';
import type { Registry } from 'prom-client';
import type { ApiMetrics } from '../observability/metrics.js';
import type { SettlementInfo } from '../chain/settlement-info.js';
import type { OAuthKeys } from '../store/oauth-keys.js';

export type { SettlementInfo, OAuthKeys };

export interface AppDeps {
  env: Env;
  store: Store;
  temporal: Client;
  verifyJwt: JwtVerifier;
  logger: Logger;
  settlement: SettlementInfo;
  oauthKeys: OAuthKeys;
  /** Signs CONFIRMED receipts (GET /facilitator/payments/{id}/receipt); absent, that route is 503. */
  receiptSigner?: ReceiptSigner;
  /** Prometheus registry and counters; absent when a test builds deps in-process. */
  metrics?: { registry: Registry; api: ApiMetrics };
  /** Starts captured payments' workflows after the answer; absent, capture awaits the start itself. */
  captureFinisher?: CaptureFinisher;
  /** Facts status polls remember between polls; absent, a module-wide cache is used. */
  statusCache?: PaymentStatusCache;
  /** Merchant documents remembered for a second; absent, every request reads its merchant. */
  merchantCache?: MerchantCache;
  /** Sheds captures under overload; absent, every capture is admitted. */
  captureAdmission?: CaptureAdmission;
  nowMs(): number;
}
