export { CreditSchemeServer, type CreditSchemeServerOptions } from './credit-scheme-server.js';
export { CreditFacilitatorClient, type CreditFacilitatorClientOptions } from './credit-facilitator-client.js';
export {
  captureIdempotencyKey,
  isFinalStatus,
  requirementsForPayment,
  settleFromFinalReceipt,
  settleSuccess,
  type CaptureOutcome,
  type Receipt,
} from './facilitator-mapping.js';
export type { ClientLogger } from './logger.js';
export { FacilitatorCredentialError, type MerchantIdentity } from './credential-check.js';
