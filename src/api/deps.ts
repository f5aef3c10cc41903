import type { Registry } from 'prom-client';
import type { JwtVerifier } from '../auth/merchant-jwt.js';
import type { ApiMetrics } from '../observability/metrics.js';
import type { PaymentDeps } from '../payments/deps.js';
import type { ReceiptSigner } from '../settlement/signed-receipt.js';
import type { MerchantCache } from '../store/merchant-cache.js';
import type { CaptureAdmission } from './capture-admission.js';
import type { PaymentStatusWaiters } from '../payments/status-waiters.js';

/** What the merchant REST API uses: the payment services' dependencies and its own edge pieces. */
export interface ApiDeps extends PaymentDeps {
  verifyJwt: JwtVerifier;
  /** Signs CONFIRMED receipts (GET /facilitator/payments/{id}/receipt); absent, that route is 503. */
  receiptSigner?: ReceiptSigner;
  /** Prometheus registry and counters; absent when a test builds deps in-process. */
  metrics?: { registry: Registry; api: ApiMetrics };
  /** Merchant documents remembered for a second; absent, every request reads its merchant. */
  merchantCache?: MerchantCache;
  /** Sheds captures under overload; absent, every capture is admitted. */
  captureAdmission?: CaptureAdmission;
  /** Status long polls (`Prefer: wait`) this process holds; absent, the router makes its own. */
  statusWaiters?: PaymentStatusWaiters;
}
