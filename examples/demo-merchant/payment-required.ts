import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { SettlementTarget } from './facilitator-client.js';

export interface Offer {
  /** Absolute URL of the resource, without query: the voucher's `resource` must equal it. */
  resourceUrl: string;
  description: string;
  mimeType: string;
  orderRef: string;
}

export interface PricingTerms {
  merchantId: string;
  payTo: string;
  price: string;
  maxTimeoutSeconds: number;
  facilitatorUrl: string;
  target: SettlementTarget;
}

/** The one `accepts` entry for an order. Deterministic for an orderRef, so retried captures send an identical body. */
export function creditRequirements(t: PricingTerms, orderRef: string): PaymentRequirements {
  return {
    scheme: 'credit',
    network: t.target.network,
    asset: t.target.asset,
    amount: t.price,
    payTo: t.payTo,
    maxTimeoutSeconds: t.maxTimeoutSeconds,
    extra: { merchantId: t.merchantId, orderRef, facilitator: t.facilitatorUrl },
  };
}

export function paymentRequired(t: PricingTerms, offer: Offer, error: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: { url: offer.resourceUrl, description: offer.description, mimeType: offer.mimeType },
    accepts: [creditRequirements(t, offer.orderRef)],
  };
}
