import assert from 'node:assert/strict';
import { ApiError, ERROR_STATUS, isApiError } from '../../src/domain/errors.js';
import { INVALID_REASONS, invalidReasonMessage, isInvalidReason } from '@credit-facilitator/wire/invalid-reasons';

describe('domain/errors and invalid reasons', () => {
  it('has exactly the DECISIONS invalidReason words, each with a message', () => {
    assert.deepEqual(
      [...INVALID_REASONS].sort(),
      [
        'agent_key_revoked', 'amount_mismatch', 'borrower_not_active', 'insufficient_credit', 'invalid_asset',
        'invalid_network', 'invalid_payload', 'invalid_payment_requirements', 'invalid_signature',
        'invalid_x402_version', 'policy_denied', 'recipient_mismatch', 'unknown_agent_key',
        'unknown_spend_intent', 'unsupported_scheme', 'voucher_already_used', 'voucher_expired',
        'voucher_not_yet_valid',
      ],
    );
    for (const r of INVALID_REASONS) assert.ok(invalidReasonMessage(r).length > 20, r);
    assert.equal(isInvalidReason('voucher_expired'), true);
    assert.equal(isInvalidReason('nope'), false);
  });

  it('captures no stack for an ApiError (an answer, not a fault) and leaves other errors theirs', () => {
    const limit = Error.stackTraceLimit;
    const e = ApiError.unavailable(1);
    assert.doesNotMatch(e.stack ?? '', /\n\s+at /);
    assert.equal(e.message.length > 0, true);
    assert.equal(Error.stackTraceLimit, limit);
    assert.match(new Error('x').stack ?? '', /\n\s+at /);
  });

  it('maps each code to its status', () => {
    const cases: [ApiError, number, string][] = [
      [ApiError.invalidRequest([{ path: 'x402Version', message: 'bad' }]), 400, 'INVALID_REQUEST'],
      [ApiError.voucherRequired(), 400, 'X402_AGENT_VOUCHER_REQUIRED'],
      [ApiError.idempotencyKeyRequired(), 400, 'IDEMPOTENCY_KEY_REQUIRED'],
      [ApiError.idempotencyKeyInvalid(), 400, 'IDEMPOTENCY_KEY_INVALID'],
      [ApiError.unauthenticated(), 401, 'UNAUTHENTICATED'],
      [ApiError.forbidden('x402:settle:create'), 403, 'FORBIDDEN'],
      [ApiError.stepUpRequired(), 403, 'STEP_UP_REQUIRED'],
      [ApiError.notFound('payment'), 404, 'NOT_FOUND'],
      [ApiError.methodNotAllowed(), 405, 'METHOD_NOT_ALLOWED'],
      [ApiError.idempotencyKeyConflict(), 409, 'IDEMPOTENCY_KEY_CONFLICT'],
      [ApiError.idempotencyKeyInUse(), 409, 'IDEMPOTENCY_KEY_IN_USE'],
      [ApiError.paymentAlreadyClaimed('b'), 409, 'PAYMENT_ALREADY_CLAIMED'],
      [ApiError.paymentNotVoidable('SUBMITTED'), 409, 'PAYMENT_NOT_VOIDABLE'],
      [ApiError.paymentNotConfirmed('QUEUED'), 409, 'PAYMENT_NOT_CONFIRMED'],
      [ApiError.refundExceedsPayment(5n), 409, 'REFUND_EXCEEDS_PAYMENT'],
      [ApiError.refundAuthorizationInvalid([{ path: 'signature', message: 'bad' }]), 400, 'REFUND_AUTHORIZATION_INVALID'],
      [ApiError.refundAuthorizationUsed('r'), 409, 'REFUND_AUTHORIZATION_USED'],
      [ApiError.payloadTooLarge(65536), 413, 'PAYLOAD_TOO_LARGE'],
      [ApiError.unsupportedMediaType(), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [ApiError.headersTooLarge(), 431, 'HEADERS_TOO_LARGE'],
      [ApiError.paymentRejected('voucher_expired'), 422, 'PAYMENT_REJECTED'],
      [ApiError.rateLimited(1.2), 429, 'RATE_LIMITED'],
      [ApiError.unavailable(), 503, 'UNAVAILABLE'],
      [ApiError.internal(), 500, 'INTERNAL'],
    ];
    assert.equal(cases.length, Object.keys(ERROR_STATUS).length);
    for (const [e, status, code] of cases) {
      assert.equal(e.status, status, code);
      assert.equal(e.code, code);
      assert.ok(isApiError(e) && e instanceof Error);
      assert.ok(e.message.length > 0);
    }
  });

  it('carries the extra fields and headers the wire needs', () => {
    assert.deepEqual(ApiError.invalidRequest([{ path: 'a', message: 'b' }]).toBody('req-1'), {
      error: { code: 'INVALID_REQUEST', message: 'The request body is invalid; see fields.', requestId: 'req-1', fields: [{ path: 'a', message: 'b' }] },
    });
    const rejected = ApiError.paymentRejected('voucher_expired', 'borrower-1').toBody('r');
    assert.equal(rejected.error.invalidReason, 'voucher_expired');
    assert.equal(rejected.error.payer, 'borrower-1');
    assert.deepEqual(ApiError.unauthenticated().headers, { 'WWW-Authenticate': 'Bearer' });
    assert.deepEqual(ApiError.rateLimited(1.2, { 'RateLimit-Remaining': '0' }).headers, { 'RateLimit-Remaining': '0', 'Retry-After': '2' });
    assert.equal(ApiError.unavailable(0).headers?.['Retry-After'], '1');
    // extra can never overwrite the envelope fields
    const sneaky = new ApiError('NOT_FOUND', 'm', { extra: { code: 'X', requestId: 'y' } }).toBody('real');
    assert.equal(sneaky.error.code, 'NOT_FOUND');
    assert.equal(sneaky.error.requestId, 'real');
  });

  it('pluralizes the Retry-After wait, names the Allow methods, the original payment and a key reused for a void', () => {
    assert.match(ApiError.rateLimited(0.4).message, /Retry after 1 second\.$/);
    assert.match(ApiError.rateLimited(2).message, /Retry after 2 seconds\.$/);
    assert.match(ApiError.unavailable(1).message, /Retry after 1 second\.$/);
    assert.match(ApiError.merchantCapturesBusy(3, 1).message, /Retry after 1 second\.$/);
    const m = ApiError.methodNotAllowed('HEAD, GET');
    assert.deepEqual(m.headers, { Allow: 'HEAD, GET' });
    assert.deepEqual(m.extra, { allowedMethods: ['HEAD', 'GET'] });
    const used = ApiError.paymentRejected('voucher_already_used', undefined, 'p-1').toBody('r');
    assert.equal(used.error.paymentId, 'p-1');
    assert.match(used.error.message, /Poll the original payment.*p-1/);
    assert.match(ApiError.idempotencyKeyConflict().message, /different body/);
    assert.doesNotMatch(ApiError.idempotencyKeyConflict('void').message, /body/);
    assert.equal(ApiError.invalidQuery([]).message, 'The query is invalid; see fields.');
  });
});
