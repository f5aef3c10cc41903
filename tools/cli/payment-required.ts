import { decodePaymentRequiredHeader } from '@x402/core/http';
import { z } from 'zod';
import { PaymentRequirementsSchema, type PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { UsageError } from './output.js';

/** An x402 v2 402: the header's JSON (or the body's, when a paywall sends it there). Unknown keys pass. */
const PaymentRequiredSchema = z.looseObject({
  x402Version: z.literal(2),
  resource: z.looseObject({ url: z.string().min(1).max(2048) }).optional(),
  accepts: z.array(z.unknown()).min(1),
  error: z.string().optional(),
});

/** What a merchant's 402 offers in credit: the requirement exactly as advertised, and the resource it is for. */
export interface CreditOffer {
  accepted: PaymentRequirements;
  resource: string | undefined;
  /** The 402's own `error`, e.g. the reason an earlier payment was refused. */
  error: string | undefined;
}

/** Decodes a PAYMENT-REQUIRED header value (base64 JSON) or a 402 body, and picks its `credit` requirement. */
export function creditOffer(header: string | null, body: string, network: string): CreditOffer {
  let raw: unknown;
  try {
    raw = header ? decodePaymentRequiredHeader(header) : JSON.parse(body);
  } catch {
    throw new UsageError(`the 402 carries no readable payment requirements (${header ? 'the PAYMENT-REQUIRED header is not base64 JSON' : 'no PAYMENT-REQUIRED header, and the body is not JSON'})`);
  }
  const parsed = PaymentRequiredSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError('the 402 is not an x402 v2 PaymentRequired (x402Version 2 with accepts[])');
  const offers = parsed.data.accepts.map((a) => PaymentRequirementsSchema.safeParse(a)).flatMap((r) => (r.success ? [r.data] : []));
  const credit = offers.find((a) => a.scheme === 'credit' && a.network === network);
  if (!credit) {
    const seen = offers.map((a) => `${a.scheme} on ${a.network}`).join(', ') || 'none readable';
    throw new UsageError(`the 402 offers no credit payment on ${network} (it offers: ${seen})`);
  }
  return { accepted: credit, resource: parsed.data.resource?.url, error: parsed.data.error };
}
