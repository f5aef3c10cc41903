import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { AgentDeps } from './agent-deps.js';
import type { ProvisionedMerchant } from './merchants.js';

/** The merchant's PAYMENT-REQUIRED header for a credit payment. */
export function paymentRequiredHeader(deps: AgentDeps, m: ProvisionedMerchant, amount: string, orderRef?: string): string {
  return encodePaymentRequiredHeader({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1:9000/premium' },
    accepts: [
      {
        scheme: 'credit',
        network: deps.settlement.network as `${string}:${string}`,
        asset: deps.settlement.asset,
        amount,
        payTo: m.payoutAddress,
        maxTimeoutSeconds: 600,
        extra: { merchantId: m.merchantId, ...(orderRef ? { orderRef } : {}) },
      },
    ],
  });
}
