import assert from 'node:assert/strict';
import { FacilitatorResponseError } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { isUuidV4 } from '@credit-facilitator/wire/ids';
import { CreditFacilitatorClient } from '@credit-facilitator/x402-credit/credit-facilitator-client';
import {
  captureIdempotencyKey,
  captureOutcomeFrom,
  isFinalStatus,
  receiptFrom,
  requirementsForPayment,
  settleFromFinalReceipt,
  supportedFrom,
  UnusableAnswer,
  verifyResponseFrom,
  type Receipt,
} from '@credit-facilitator/x402-credit/facilitator-mapping';
import { sampleVoucher, SAMPLE } from '@credit-facilitator/wire/testing';

const requirements = (orderRef = 'order-fresh'): PaymentRequirements => ({
  scheme: 'credit',
  network: 'eip155:84532',
  asset: SAMPLE.asset,
  amount: '1500000',
  payTo: SAMPLE.payTo,
  maxTimeoutSeconds: 300,
  extra: { merchantId: SAMPLE.merchantId, orderRef, facilitator: 'http://127.0.0.1:8402/api/v1' },
});

const payloadFor = (voucher: Record<string, unknown> = sampleVoucher(), signature = 'A'.repeat(86)): PaymentPayload => ({
  x402Version: 2,
  resource: { url: 'https://merchant.example/report/42' },
  accepted: requirements('order-42'),
  payload: { voucher, signature },
});

const receipt = (patch: Partial<Receipt> = {}): Receipt => ({
  paymentId: '99999999-9999-4999-8999-999999999999',
  status: 'QUEUED',
  merchantId: SAMPLE.merchantId,
  payer: SAMPLE.borrowerId,
  amount: '1500000',
  asset: SAMPLE.asset,
  network: 'eip155:84532',
  orderRef: 'order-42',
  capturedAt: '2026-01-01T00:00:00.000Z',
  ...patch,
});

describe('x402-interop: facilitator mapping', () => {
  describe('captureIdempotencyKey', () => {
    it('is a UUID v4, the same for the same voucher whatever the key order or signature, different for another voucher', () => {
      const k = captureIdempotencyKey(payloadFor());
      assert.ok(isUuidV4(k), k);
      const reordered = Object.fromEntries(Object.entries(sampleVoucher()).reverse());
      assert.equal(captureIdempotencyKey(payloadFor(reordered)), k);
      assert.equal(captureIdempotencyKey(payloadFor(sampleVoucher(), 'B'.repeat(86))), k);
      assert.notEqual(captureIdempotencyKey(payloadFor(sampleVoucher({ voucherId: '11111111-1111-4111-8111-111111111112' }))), k);
      assert.notEqual(captureIdempotencyKey(payloadFor(sampleVoucher({ amount: '1500001' }))), k);
    });

    it('still derives a key from a payload without a voucher (the facilitator then rejects the payload)', () => {
      assert.ok(isUuidV4(captureIdempotencyKey({ payload: { junk: true } })));
    });
  });

  describe('requirementsForPayment', () => {
    it('pins extra.orderRef to the voucher\'s order and leaves everything else as the middleware built it', () => {
      const r = requirementsForPayment(requirements('order-fresh'), payloadFor());
      assert.deepEqual(r, { ...requirements(), extra: { ...requirements().extra, orderRef: 'order-42' } });
    });

    it('falls back to the accepted entry\'s order, and changes nothing when neither names one', () => {
      const noVoucher = { ...payloadFor(), payload: {} };
      assert.equal(requirementsForPayment(requirements(), noVoucher).extra.orderRef, 'order-42');
      const bare = { ...noVoucher, accepted: { ...requirements(), extra: {} } };
      assert.deepEqual(requirementsForPayment(requirements(), bare), requirements());
    });
  });

  describe('verifyResponseFrom', () => {
    it('passes a verify result through', () => {
      assert.deepEqual(verifyResponseFrom(200, { isValid: true, payer: SAMPLE.borrowerId }), { isValid: true, payer: SAMPLE.borrowerId });
      assert.deepEqual(verifyResponseFrom(200, { isValid: false, invalidReason: 'voucher_expired', invalidMessage: 'expired' }), {
        isValid: false,
        invalidReason: 'voucher_expired',
        invalidMessage: 'expired',
      });
    });

    it('turns a refused request into an invalid payment with our reason', () => {
      const r = verifyResponseFrom(400, { error: { code: 'X402_AGENT_VOUCHER_REQUIRED', message: 'v1 intent', requestId: 'r' } });
      assert.deepEqual(r, { isValid: false, invalidReason: 'x402_agent_voucher_required', invalidMessage: 'v1 intent' });
      assert.equal(verifyResponseFrom(422, { error: { code: 'PAYMENT_REJECTED', invalidReason: 'invalid_signature', requestId: 'r' } }).invalidReason, 'invalid_signature');
    });

    it('calls authentication failures, outages and malformed answers unusable', () => {
      assert.throws(() => verifyResponseFrom(401, { error: { code: 'UNAUTHENTICATED', requestId: 'r' } }), UnusableAnswer);
      assert.throws(() => verifyResponseFrom(503, null), UnusableAnswer);
      assert.throws(() => verifyResponseFrom(200, { valid: true }), UnusableAnswer);
    });
  });

  describe('captureOutcomeFrom', () => {
    it('reads a receipt and whether it was replayed', () => {
      assert.deepEqual(captureOutcomeFrom(200, { receipt: receipt(), replayed: true }, null), { kind: 'captured', receipt: receipt(), replayed: true });
    });

    it('maps rejections to their invalidReason, or the error code', () => {
      const rejected = captureOutcomeFrom(422, { error: { code: 'PAYMENT_REJECTED', message: 'used', invalidReason: 'voucher_already_used', requestId: 'r' } }, null);
      assert.deepEqual(rejected, { kind: 'rejected', reason: 'voucher_already_used', message: 'used' });
      const conflict = captureOutcomeFrom(409, { error: { code: 'IDEMPOTENCY_KEY_CONFLICT', message: 'other body', requestId: 'r' } }, null);
      assert.equal(conflict.kind === 'rejected' && conflict.reason, 'idempotency_key_conflict');
    });

    it('reports rate limiting and outages as busy with a retry delay', () => {
      assert.deepEqual(captureOutcomeFrom(429, { error: { code: 'RATE_LIMITED', requestId: 'r' } }, '7'), { kind: 'busy', retryAfterSeconds: 7 });
      assert.deepEqual(captureOutcomeFrom(503, null, null), { kind: 'busy', retryAfterSeconds: 1 });
    });

    it('calls a wrong key, a server error or a 200 without a receipt unusable', () => {
      assert.throws(() => captureOutcomeFrom(401, { error: { code: 'UNAUTHENTICATED', requestId: 'r' } }, null), UnusableAnswer);
      assert.throws(() => captureOutcomeFrom(500, { error: { code: 'INTERNAL', requestId: 'r' } }, null), UnusableAnswer);
      assert.throws(() => captureOutcomeFrom(200, { receipt: { paymentId: 'x' } }, null), UnusableAnswer);
    });
  });

  describe('receiptFrom', () => {
    it('reads every status the facilitator answers, VOIDED and refunds included (the wire receipt)', () => {
      const voided = receipt({ status: 'VOIDED', voidedAt: '2026-01-01T00:01:00.000Z' });
      assert.deepEqual(receiptFrom(200, voided), voided);
      const refunded = receipt({
        status: 'CONFIRMED',
        amountRefunded: '500000',
        refunds: [{ refundId: 'r1', amount: '500000', status: 'SUCCEEDED', createdAt: '2026-01-02T00:00:00.000Z' }],
      });
      assert.deepEqual(receiptFrom(200, { ...refunded, addedLater: true }), refunded, 'fields it does not know are dropped, not refused');
    });

    it('is null for an answer that is not a receipt', () => {
      assert.equal(receiptFrom(404, { error: { code: 'NOT_FOUND' } }), null);
      assert.equal(receiptFrom(200, { ...receipt(), status: 'LOST' }), null);
      assert.equal(receiptFrom(200, { paymentId: 'x' }), null);
    });
  });

  describe('settleFromFinalReceipt', () => {
    it('VOIDED is final: a failure that says the merchant voided it, not a timeout', () => {
      assert.equal(isFinalStatus('VOIDED'), true);
      assert.equal(isFinalStatus('SUBMITTED'), false);
      const s = settleFromFinalReceipt(receipt({ status: 'VOIDED' }), 10);
      assert.equal(s.success, false);
      assert.equal(s.errorReason, 'payment_voided');
      assert.equal(s.extra?.status, 'VOIDED');
    });

    it('CONFIRMED is a success carrying the transaction, payer, amount and payment id', () => {
      const tx = `0x${'1'.repeat(64)}`;
      const s = settleFromFinalReceipt(receipt({ status: 'CONFIRMED', transaction: tx, batchId: 'b1', blockNumber: '12' }), 900);
      assert.deepEqual(s, {
        success: true,
        transaction: tx,
        network: 'eip155:84532',
        payer: SAMPLE.borrowerId,
        amount: '1500000',
        extra: { paymentId: receipt().paymentId, status: 'CONFIRMED', orderRef: 'order-42', batchId: 'b1', blockNumber: '12' },
      });
    });

    it('FAILED is a settlement failure with the facilitator\'s reason', () => {
      const s = settleFromFinalReceipt(receipt({ status: 'FAILED', failureReason: 'batch reverted 3 times' }), 900);
      assert.equal(s.success, false);
      assert.equal(s.errorReason, 'settlement_failed');
      assert.equal(s.errorMessage, 'batch reverted 3 times');
      assert.equal(s.extra?.paymentId, receipt().paymentId);
    });

    it('anything else after the wait is a timeout that names the payment to poll', () => {
      const s = settleFromFinalReceipt(receipt({ status: 'SUBMITTED', transaction: `0x${'2'.repeat(64)}` }), 30_000);
      assert.equal(s.success, false);
      assert.equal(s.errorReason, 'settlement_timeout');
      assert.match(s.errorMessage ?? '', new RegExp(`${receipt().paymentId} was still SUBMITTED after 30000 ms`));
      assert.equal(s.transaction, `0x${'2'.repeat(64)}`);
    });
  });

  describe('supportedFrom', () => {
    it('maps our supported body and keeps only string extensions', () => {
      const s = supportedFrom(200, {
        kinds: [{ x402Version: 2, scheme: 'credit', network: 'eip155:84532', extra: { asset: SAMPLE.asset, decimals: 6 } }],
        extensions: ['bazaar', { not: 'a string' }],
        signers: { 'eip155:*': ['0xabc'] },
      });
      assert.deepEqual(s, {
        kinds: [{ x402Version: 2, scheme: 'credit', network: 'eip155:84532', extra: { asset: SAMPLE.asset, decimals: 6 } }],
        extensions: ['bazaar'],
        signers: { 'eip155:*': ['0xabc'] },
      });
      assert.throws(() => supportedFrom(500, null), UnusableAnswer);
      assert.throws(() => supportedFrom(200, { kinds: 'none' }), UnusableAnswer);
    });
  });

  describe('CreditFacilitatorClient edges', () => {
    const apiKey = `sk_live_${'x'.repeat(43)}`;

    it('refuses a credential that is not a merchant API key', () => {
      assert.throws(() => new CreditFacilitatorClient({ baseUrl: 'http://127.0.0.1:1/api/v1', apiKey: 'Bearer nope' }), /sk_live_/);
    });

    it('an unreachable facilitator is a FacilitatorResponseError (502 at the middleware) that never echoes the key', async () => {
      const client = new CreditFacilitatorClient({ baseUrl: 'http://127.0.0.1:1/api/v1', apiKey, requestTimeoutMs: 2000 });
      await assert.rejects(client.settle(payloadFor(), requirements()), (err: unknown) => {
        assert.ok(err instanceof FacilitatorResponseError, String(err));
        assert.match(err.message, /cannot reach the facilitator for POST \/facilitator\/capture/);
        assert.ok(!err.message.includes(apiKey));
        return true;
      });
      await assert.rejects(client.getSupported(), FacilitatorResponseError);
    });
  });
});
