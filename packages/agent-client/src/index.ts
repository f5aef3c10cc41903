export { CreditAgent, newIdempotencyKey, type CreditAgentOptions, type WaitOptions } from './credit-agent.js';
export { CreditAgentOAuthProvider, type CreditAgentOAuthOptions } from './oauth.js';
export { startLoopbackReceiver, AuthorizationDeniedError, type LoopbackReceiver } from './loopback.js';
export { generateWorkloadKey, loadWorkloadKey, saveWorkloadKey, loadOrCreateWorkloadKey, workloadKeyFromPrivate, WorkloadKeyError, type WorkloadKey } from './workload-key.js';
export { checkPreparedPayment, signPreparedPayment, VoucherCheckError, type PreparedPayment, type PaymentIntent, type SignedPayment } from './voucher-signer.js';
export { payFetch, PaymentFlowError, type PaidResponse, type PayOptions, type PayDeps } from './x402-fetch.js';
export { needsRefresh, tokenExpiresAtMs, REFRESH_WINDOW_SECONDS } from './token-expiry.js';
export { CreditToolError } from './tool-types.js';
export { parsePaymentRequiredHeader, parsePaymentResponseHeader, creditOffer } from './x402-messages.js';
