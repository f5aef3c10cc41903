import { z } from 'zod';
import type { InvalidReason } from './invalid-reasons.js';
import { parseVoucher, SIGNATURE_LENGTH, type Voucher } from './voucher.js';

type Obj = Record<string, unknown>;

function isObject(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function carriesIntent(x: unknown): boolean {
  return isObject(x) && (isObject(x.paymentIntent) || isObject(x.intent) || x.type === 'PaymentIntent');
}

/** The old Protocol V1 PaymentIntent envelope, anywhere we might find it. Checked before the version. */
export function isV1PaymentIntent(body: unknown): boolean {
  if (!isObject(body)) return false;
  const pp = body.paymentPayload;
  return carriesIntent(body) || carriesIntent(pp) || (isObject(pp) && carriesIntent(pp.payload));
}

const JsonObject = z.record(z.string(), z.unknown());

/** Top level of verify and capture bodies; a failure is INVALID_REQUEST with fieldIssues(). */
export const RequestShapeSchema = z.looseObject({
  x402Version: z.number().int(),
  paymentPayload: JsonObject,
  paymentRequirements: JsonObject.optional(),
});
export type RequestShape = z.infer<typeof RequestShapeSchema>;

/** Verify requires the merchant's requirements echo. */
export const VerifyRequestShapeSchema = RequestShapeSchema.extend({ paymentRequirements: JsonObject });

/** Each issue with its field's path; an unknown key is named itself, `(body)` is the body as a whole. */
export function fieldIssues(err: z.ZodError): { path: string; message: string }[] {
  const at = (path: PropertyKey[]) => (path.length ? path.map(String).join('.') : '(body)');
  return err.issues.flatMap((i) =>
    i.code === 'unrecognized_keys' ? i.keys.map((k) => ({ path: at([...i.path, k]), message: 'is not a field of this request' })) : [{ path: at(i.path), message: i.message }],
  );
}

/** x402 v2 PaymentRequirements; unknown keys pass through. */
export const PaymentRequirementsSchema = z.looseObject({
  scheme: z.string().min(1).max(64),
  network: z.string().min(1).max(128),
  asset: z.string().min(1).max(256),
  amount: z.string().regex(/^[0-9]{1,78}$/, 'must be a decimal string of base units'),
  payTo: z.string().min(1).max(256),
  maxTimeoutSeconds: z.number().int().nonnegative(),
  extra: JsonObject.optional(),
});
export type PaymentRequirements = z.infer<typeof PaymentRequirementsSchema>;

export type RequirementsParse =
  | { ok: true; requirements: PaymentRequirements }
  | { ok: false; reason: 'invalid_payment_requirements'; detail?: string };

export function parsePaymentRequirements(raw: unknown): RequirementsParse {
  const r = PaymentRequirementsSchema.safeParse(raw);
  if (r.success) return { ok: true, requirements: r.data };
  const i = fieldIssues(r.error)[0];
  return { ok: false, reason: 'invalid_payment_requirements', detail: i && `${i.path}: ${i.message}` };
}

export type CreditPayloadParse =
  | { ok: true; voucher: Voucher; signature: string; accepted?: PaymentRequirements }
  | { ok: false; reason: InvalidReason; detail?: string };

const SIGNATURE_RE = new RegExp(`^[A-Za-z0-9_-]{${SIGNATURE_LENGTH}}$`);
const PAYLOAD_KEYS = new Set(['voucher', 'signature']);

/** The credit envelope inside an x402 v2 PaymentPayload. Never throws. */
export function parseCreditPayload(x402Version: number, paymentPayload: Record<string, unknown>): CreditPayloadParse {
  if (x402Version !== 2) return { ok: false, reason: 'invalid_x402_version' };
  if (!isObject(paymentPayload)) return { ok: false, reason: 'invalid_payload', detail: 'paymentPayload must be an object' };
  if (paymentPayload.x402Version !== undefined && paymentPayload.x402Version !== 2) {
    return { ok: false, reason: 'invalid_x402_version', detail: 'paymentPayload.x402Version must be 2' };
  }

  const accepted = paymentPayload.accepted;
  const schemes = [isObject(accepted) ? accepted.scheme : undefined, paymentPayload.scheme].filter(
    (s) => s !== undefined,
  );
  if (schemes.length === 0) {
    return { ok: false, reason: 'invalid_payload', detail: 'paymentPayload.accepted.scheme is required' };
  }
  if (schemes.some((s) => s !== 'credit')) return { ok: false, reason: 'unsupported_scheme' };

  const payload = paymentPayload.payload;
  if (!isObject(payload)) {
    return { ok: false, reason: 'invalid_payload', detail: 'paymentPayload.payload must be {voucher, signature}' };
  }
  const extra = Object.keys(payload).find((k) => !PAYLOAD_KEYS.has(k));
  if (extra !== undefined) {
    return { ok: false, reason: 'invalid_payload', detail: `paymentPayload.payload: unexpected key "${extra}"` };
  }
  const v = parseVoucher(payload.voucher);
  if (!v.ok) return { ok: false, reason: 'invalid_payload', detail: `paymentPayload.payload.${v.detail}` };
  const signature = payload.signature;
  if (typeof signature !== 'string' || !SIGNATURE_RE.test(signature)) {
    return {
      ok: false,
      reason: 'invalid_payload',
      detail: `paymentPayload.payload.signature must be ${SIGNATURE_LENGTH} base64url characters (Ed25519, no padding)`,
    };
  }

  if (accepted === undefined) return { ok: true, voucher: v.voucher, signature };
  const req = parsePaymentRequirements(accepted);
  if (!req.ok) return { ...req, detail: req.detail && `paymentPayload.accepted.${req.detail}` };
  return { ok: true, voucher: v.voucher, signature, accepted: req.requirements };
}
