import type { PaymentRequired, PaymentRequirements, SupportedResponse } from '@x402/core/types';

/** What the demo merchant needs from GET /facilitator/supported: where and in what it is paid. */
export interface SettlementTarget {
  network: `${string}:${string}`;
  asset: string;
}

/** The facilitator's credit kind, or an error that says what is missing. */
export function settlementTarget(supported: SupportedResponse): SettlementTarget {
  const kind = supported.kinds.find((k) => k.x402Version === 2 && k.scheme === 'credit');
  const asset = kind?.extra?.asset;
  if (!kind || typeof asset !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(asset)) {
    throw new Error('GET /facilitator/supported: no credit kind with a network and asset');
  }
  return { network: kind.network, asset: asset.toLowerCase() };
}

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
