import { invalidReasonMessage, type InvalidReason } from '@credit-facilitator/wire/invalid-reasons';

export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'X402_AGENT_VOUCHER_REQUIRED'
  | 'IDEMPOTENCY_KEY_REQUIRED'
  | 'IDEMPOTENCY_KEY_INVALID'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'STEP_UP_REQUIRED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'IDEMPOTENCY_KEY_CONFLICT'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'PAYMENT_ALREADY_CLAIMED'
  | 'PAYMENT_NOT_VOIDABLE'
  | 'PAYMENT_NOT_CONFIRMED'
  | 'REFUND_EXCEEDS_PAYMENT'
  | 'REFUND_AUTHORIZATION_INVALID'
  | 'REFUND_AUTHORIZATION_USED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'HEADERS_TOO_LARGE'
  | 'PAYMENT_REJECTED'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_REQUEST: 400,
  X402_AGENT_VOUCHER_REQUIRED: 400,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  IDEMPOTENCY_KEY_INVALID: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  STEP_UP_REQUIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYMENT_ALREADY_CLAIMED: 409,
  PAYMENT_NOT_VOIDABLE: 409,
  PAYMENT_NOT_CONFIRMED: 409,
  REFUND_EXCEEDS_PAYMENT: 409,
  REFUND_AUTHORIZATION_INVALID: 400,
  REFUND_AUTHORIZATION_USED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  PAYMENT_REJECTED: 422,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export interface FieldIssue {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId: string; [k: string]: unknown };
}

const retryAfter = (seconds: number): string => String(Math.max(1, Math.ceil(seconds)));
/** "1 second", "2 seconds": the wait a Retry-After message names. */
export const inSeconds = (s: string | number): string => (String(s) === '1' ? '1 second' : `${s} seconds`);

/** Every non-2xx answer. `message` and `extra` go on the wire, so never put internals in them. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode;
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { status?: number; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    // An answer, not a fault: its stack is never shown or logged, and capturing one (async frames
    // included) was 2.5 % of the API's CPU while it shed captures under overload.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    if (opts.extra) this.extra = opts.extra;
    if (opts.headers) this.headers = opts.headers;
  }

  /** The wire body: `{"error":{"code","message","requestId",...extra}}`. */
  toBody(requestId: string): ErrorBody {
    return { error: { ...this.extra, code: this.code, message: this.message, requestId } };
  }

  static invalidRequest(fields: FieldIssue[], message = 'The request body is invalid; see fields.'): ApiError {
    return new ApiError('INVALID_REQUEST', message, { extra: { fields } });
  }

  /** A query string the route refuses; each field's path is the parameter's name. */
  static invalidQuery(fields: FieldIssue[]): ApiError {
    return new ApiError('INVALID_REQUEST', 'The query is invalid; see fields.', { extra: { fields } });
  }

  static voucherRequired(): ApiError {
    return new ApiError(
      'X402_AGENT_VOUCHER_REQUIRED',
      'Protocol V1 PaymentIntent envelopes are not accepted. Send an x402 v2 credit envelope with a signed agent voucher.',
    );
  }

  static idempotencyKeyRequired(): ApiError {
    return new ApiError('IDEMPOTENCY_KEY_REQUIRED', 'Send an Idempotency-Key header holding a UUID v4 (or, on capture, an x402 payment-identifier extension in the payment payload).');
  }

  static idempotencyKeyInvalid(): ApiError {
    return new ApiError('IDEMPOTENCY_KEY_INVALID', 'The Idempotency-Key header must be a UUID v4; a payment-identifier id is 16 to 128 of [A-Za-z0-9_-].');
  }

  static unauthenticated(message = 'Send a valid merchant credential as Authorization: Bearer <credential>.', wwwAuthenticate = 'Bearer'): ApiError {
    return new ApiError('UNAUTHENTICATED', message, { headers: { 'WWW-Authenticate': wwwAuthenticate } });
  }

  static forbidden(requiredPermission?: string): ApiError {
    return requiredPermission
      ? new ApiError('FORBIDDEN', `This credential lacks the permission ${requiredPermission}.`, {
          extra: { requiredPermission },
        })
      : new ApiError('FORBIDDEN', 'This credential may not perform this action.');
  }

  static stepUpRequired(message = 'Capture with a user token needs a recent multi-factor sign-in (within 10 minutes). Sign in again with MFA, or use an API key.'): ApiError {
    return new ApiError('STEP_UP_REQUIRED', message);
  }

  static notFound(what = 'resource'): ApiError {
    return new ApiError('NOT_FOUND', `No such ${what}.`);
  }

  /** `allow` is the route's methods, for the Allow header RFC 9110 requires on a 405. */
  static methodNotAllowed(allow?: string): ApiError {
    return new ApiError(
      'METHOD_NOT_ALLOWED',
      allow ? `This route does not accept that method; it accepts ${allow}.` : 'This route does not accept that method.',
      allow ? { extra: { allowedMethods: allow.split(/,\s*/) }, headers: { Allow: allow } } : {},
    );
  }

  /**
   * A key already used for another request. `request` names what this route does with a key
   * (a void has no body: the same key on another payment, or on a capture or refund, is the reuse).
   */
  static idempotencyKeyConflict(request: 'body' | 'void' | 'refund' = 'body'): ApiError {
    const what = {
      body: 'was already used with a different body',
      void: 'was already used for another request (a void of another payment, a capture or a refund)',
      refund: 'was already used for another request (a refund with another body, a capture or a void)',
    }[request];
    return new ApiError('IDEMPOTENCY_KEY_CONFLICT', `This Idempotency-Key ${what}. Use a new key for a new request.`);
  }

  static idempotencyKeyInUse(retryAfterSeconds = 1): ApiError {
    return new ApiError('IDEMPOTENCY_KEY_IN_USE', 'Another request with this Idempotency-Key is being processed right now. Retry after a moment.', {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }

  static paymentAlreadyClaimed(batchId?: string): ApiError {
    return new ApiError(
      'PAYMENT_ALREADY_CLAIMED',
      'A settlement batch has already claimed this payment, so it can no longer be voided. Wait until it is CONFIRMED, then refund it.',
      batchId ? { extra: { batchId } } : {},
    );
  }

  static paymentNotVoidable(status: string): ApiError {
    return new ApiError('PAYMENT_NOT_VOIDABLE', `A payment in status ${status} cannot be voided.`, { extra: { paymentStatus: status } });
  }

  static paymentNotConfirmed(status: string, what = 'A signed receipt exists'): ApiError {
    return new ApiError('PAYMENT_NOT_CONFIRMED', `${what} only once the payment is CONFIRMED; it is ${status}.`, { extra: { paymentStatus: status } });
  }

  static refundExceedsPayment(refundable: bigint): ApiError {
    return new ApiError(
      'REFUND_EXCEEDS_PAYMENT',
      `Refunds of a payment never exceed it: ${refundable} base units are left to refund (pending refunds count until they fail).`,
      { extra: { refundable: refundable.toString() } },
    );
  }

  static refundAuthorizationInvalid(fields: FieldIssue[]): ApiError {
    return new ApiError('REFUND_AUTHORIZATION_INVALID', 'The refund authorization cannot be redeemed for this payment; see fields.', { extra: { fields } });
  }

  static refundAuthorizationUsed(refundId: string): ApiError {
    return new ApiError('REFUND_AUTHORIZATION_USED', 'This signed authorization already belongs to another refund of this payment; sign a new one (new nonce).', {
      extra: { refundId },
    });
  }

  static payloadTooLarge(limitBytes?: number): ApiError {
    return new ApiError(
      'PAYLOAD_TOO_LARGE',
      limitBytes ? `The body exceeds ${limitBytes} bytes.` : 'The body is too large.',
      limitBytes ? { extra: { limitBytes } } : {},
    );
  }

  static unsupportedMediaType(): ApiError {
    return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.');
  }

  /** Headers over the HTTP server's limit; answered before routing (src/http/client-errors.ts). */
  static headersTooLarge(): ApiError {
    return new ApiError('HEADERS_TOO_LARGE', 'The request headers are too large.');
  }

  /** `paymentId`: for voucher_already_used, the merchant's payment that holds the voucher (the one to poll). */
  static paymentRejected(reason: InvalidReason, payer?: string, paymentId?: string): ApiError {
    const message = paymentId ? `${invalidReasonMessage(reason)} The original payment is ${paymentId}.` : invalidReasonMessage(reason);
    return new ApiError('PAYMENT_REJECTED', message, {
      extra: { invalidReason: reason, ...(payer === undefined ? {} : { payer }), ...(paymentId ? { paymentId } : {}) },
    });
  }

  /** `headers` adds e.g. the RateLimit-* fields the limiter computed. */
  static rateLimited(retryAfterSeconds: number, headers: Record<string, string> = {}): ApiError {
    const s = retryAfter(retryAfterSeconds);
    return new ApiError('RATE_LIMITED', `Too many requests. Retry after ${inSeconds(s)}.`, {
      headers: { ...headers, 'Retry-After': s },
    });
  }

  static unavailable(retryAfterSeconds = 5): ApiError {
    const s = retryAfter(retryAfterSeconds);
    return new ApiError('UNAVAILABLE', `The service is temporarily unavailable. Retry after ${inSeconds(s)}.`, {
      headers: { 'Retry-After': s },
    });
  }

  /** A capture shed because its merchant's captures already hold their share of this process's capture slots. */
  static merchantCapturesBusy(limit: number, retryAfterSeconds = 1): ApiError {
    const s = retryAfter(retryAfterSeconds);
    return new ApiError(
      'UNAVAILABLE',
      `This merchant already has ${limit} captures in progress here, its share of the capacity; other merchants' captures go on. Retry after ${inSeconds(s)}.`,
      { extra: { merchantInFlightLimit: limit }, headers: { 'Retry-After': s } },
    );
  }

  static internal(): ApiError {
    return new ApiError('INTERNAL', 'An internal error occurred. Retry later; quote the requestId if it persists.');
  }
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
