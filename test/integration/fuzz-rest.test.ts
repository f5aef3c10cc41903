import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { z } from 'zod';
import {
  BatchViewSchema,
  CaptureResponseSchema,
  PaymentListSchema,
  ReceiptSchema,
  RefundAuthorizationResponseSchema,
  RefundResponseSchema,
  VerifyResponseSchema,
  VoidResponseSchema,
} from '../../src/api/facilitator/response-schemas.js';
import { isUuidV4 } from '@credit-facilitator/wire/ids';
import { checkRestAnswer, send, Tally, type RawRequest } from '../helpers/fuzz-checks.js';
import { assertConsistent, assertOnlyExpected, assertPaymentsComplete, Expected, snapshot, type FuzzScope } from '../helpers/fuzz-state.js';
import { bodyTextOf, CASES, contentType, fuzzCases, headerJunk, idempotencyKeyHeader, nastyString, pathSegment, percentEncode, toJsonText } from '../helpers/fuzz.js';
import { resignedBody, type VoucherWorld } from '../helpers/fuzz-voucher.js';
import { capture, pollUntil, newBorrower, newMerchant, newVoucher, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type TestVoucher, type World } from '../helpers/world.js';

interface RestCase {
  method: string;
  body?: string;
  contentType?: string | undefined;
  auth?: string | undefined;
  accept?: string | undefined;
  idempotencyKey?: string | undefined;
  path?: string;
}

function request(w: World, path: string, c: RestCase): RawRequest {
  const headers: Record<string, string> = {};
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  if (c.auth !== undefined) headers.authorization = c.auth;
  if (c.accept !== undefined) headers.accept = c.accept;
  if (c.idempotencyKey !== undefined) headers['idempotency-key'] = c.idempotencyKey;
  return { method: c.method, url: `${w.baseUrl}${path}`, headers, ...(c.body !== undefined ? { body: c.body } : {}) };
}

/** Mostly the merchant's own key; sometimes another merchant's, a near miss or junk (undefined: no header). */
function authHeader(m: TestMerchant, other: TestMerchant): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant(`Bearer ${m.apiKey}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${other.apiKey}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        undefined, '', 'Bearer', 'Bearer ', `bearer ${m.apiKey}`, `Bearer  ${m.apiKey}`, m.apiKey, `Basic ${Buffer.from(`x:${m.apiKey}`).toString('base64')}`,
        `Bearer ${m.apiKey}x`, `Bearer ${m.apiKey.slice(0, -1)}`, `Bearer ${m.apiKey.toUpperCase()}`, 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'Bearer sk_live_',
        `Bearer ${m.apiKey}, Bearer ${other.apiKey}`,
      ),
    },
    { weight: 1, arbitrary: headerJunk.map((s) => `Bearer ${s}`) },
  );
}

const method = (main: string) => fc.oneof({ weight: 24, arbitrary: fc.constant(main) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POST') });
const accept = fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml') }, { weight: 1, arbitrary: headerJunk });

describe('fuzz: the facilitator REST edges on the real stack', function () {
  this.timeout(600_000);
  let w: World;
  let m: TestMerchant;
  let other: TestMerchant;
  let scope: FuzzScope;
  let vouchers: TestVoucher[];
  let b: TestBorrower;
  let vw: VoucherWorld;
  let borrowerId: string;
  /** A payment of the fuzz merchant and one of another merchant, for the poll. */
  let ownPayment: string;
  let othersPayment: string;
  /** The merchant a fuzzed Authorization header names, if either (the scheme is case-insensitive, RFC 7235). */
  const callerOf = (auth: string | undefined) => {
    const key = /^bearer\s+(\S+)\s*$/i.exec(auth ?? '')?.[1];
    return [m, other].find((x) => x.apiKey === key);
  };
  const ownerOf = (auth: string | undefined) => callerOf(auth)?.merchantId;

  before(async function () {
    w = await world();
    [m, other] = await Promise.all([newMerchant(w, 'Fuzz Merchant', { rateLimits: UNTHROTTLED }), newMerchant(w, 'Fuzz Other', { rateLimits: UNTHROTTLED })]);
    b = await newBorrower(w);
    borrowerId = b.borrowerId;
    vouchers = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => newVoucher(w, m, b, String(1000 + i), { orderRef: `fuzz-${i}` })));
    const [paid, othersPaid] = await Promise.all([newVoucher(w, m, b, '999', { orderRef: 'fuzz-paid' }), newVoucher(w, other, b, '777', { orderRef: 'fuzz-other' })]);
    const [own, others] = await Promise.all([capture(w, m, paid.captureBody), capture(w, other, othersPaid.captureBody)]);
    assert.equal(own.status, 200, JSON.stringify(own.json));
    assert.equal(others.status, 200, JSON.stringify(others.json));
    ownPayment = own.json.receipt.paymentId as string;
    othersPayment = others.json.receipt.paymentId as string;
    // Capture starts the payment workflow after answering: let both settle so the snapshots
    // below see their workflows as existing state, not as something a fuzz case created.
    await Promise.all([pollUntil(w, m, ownPayment, 'CONFIRMED'), pollUntil(w, other, othersPayment, 'CONFIRMED')]);
    const all = [...vouchers, paid, othersPaid];
    vw = {
      ids: [b.borrowerId, b.operationalAgentId, m.merchantId, other.merchantId, ...all.flatMap((v) => [v.prepared.voucher.voucherId, v.prepared.spend_intent_id])],
      addresses: [m.payoutAddress.toLowerCase(), other.payoutAddress.toLowerCase(), w.asset.toLowerCase()],
      nowSeconds: Math.floor(Date.now() / 1000),
    };
    scope = { merchantIds: [m.merchantId, other.merchantId], borrowerIds: [borrowerId] };
  });

  it(`POST /facilitator/verify: ${CASES} mutated bodies and headers, never a 5xx, one error shape, changes nothing`, async function () {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    const bases = vouchers.map((v) => ({ x402Version: 2, paymentPayload: v.paymentPayload, paymentRequirements: v.paymentPayload.accepted }));
    const arb = fc.record({
      method: method('POST'),
      body: fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...bases).chain((base) => bodyTextOf(base)) }, { weight: 1, arbitrary: resignedBody(vouchers, b, vw, true) }),
      contentType,
      auth: authHeader(m, other),
      accept,
    });
    await fuzzCases(arb, async (c) => {
      const req = request(w, '/facilitator/verify', c);
      const a = await send(req);
      const { code, json } = checkRestAnswer(req, a, VerifyResponseSchema);
      const verdict = json as { isValid?: boolean; invalidReason?: string };
      tally.add(code ? `${a.status}:${code}` : verdict.isValid ? 'valid' : `invalid:${verdict.invalidReason}`);
    });
    console.log(`      verify outcomes: ${tally}`);
    assert.ok(!tally.has('429:RATE_LIMITED'), 'an unthrottled merchant is never rate-limited, however concurrent');
    tally.assertReached(['valid', 'invalid:invalid_payload', 'invalid:unknown_spend_intent', 'invalid:voucher_expired', 'invalid:recipient_mismatch', '400:INVALID_REQUEST', '401:UNAUTHENTICATED', '413:PAYLOAD_TOO_LARGE', '415:UNSUPPORTED_MEDIA_TYPE']);
    await assertOnlyExpected(w, scope, before, new Expected());
    await assertConsistent(w, borrowerId);
  });

  it(`GET /facilitator/payments/{paymentId}: ${CASES} path params and headers, only the merchant's own payment answers`, async function () {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    const arb = fc.record({
      method: method('GET'),
      path: fc
        .tuple(
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(ownPayment, ownPayment.toUpperCase(), othersPayment) },
            { weight: 3, arbitrary: nastyString.filter((s) => s.length < 2_000).map((s) => percentEncode(`${ownPayment}${s}`)) },
            { weight: 4, arbitrary: pathSegment },
          ),
          fc.constantFrom('', '', '', '/', '/x', '?paymentId=1', '?a=%zz', '//', '%20'),
        )
        .map(([segment, suffix]) => `/facilitator/payments/${segment}${suffix}`),
      auth: authHeader(m, other),
      accept,
    });
    await fuzzCases(arb, async (c) => {
      const req = request(w, c.path, c);
      const a = await send(req);
      // A segment like '.' or '' makes the path the list route's.
      if (new URL(req.url).pathname.replace(/\/+$/, '') === new URL(`${w.baseUrl}/facilitator/payments`).pathname) {
        const { code, json } = checkRestAnswer(req, a, PaymentListSchema);
        if (!code) for (const r of (json as { data: { merchantId: string }[] }).data) assert.equal(r.merchantId, ownerOf(c.auth));
        tally.add(code ? `${a.status}:${code}` : '200:list');
        return;
      }
      const { code, json } = checkRestAnswer(req, a, ReceiptSchema);
      if (!code) {
        const receipt = json as { paymentId: string; merchantId: string };
        assert.ok([ownPayment, othersPayment].includes(receipt.paymentId), `200 names a real payment: ${a.text}`);
        assert.equal(receipt.merchantId, ownerOf(c.auth), `a merchant sees only its own payment: ${JSON.stringify(req)}`);
      }
      tally.add(code ? `${a.status}:${code}` : `200:${(json as { paymentId: string }).paymentId === ownPayment ? 'own' : 'other'}`);
    });
    console.log(`      poll outcomes: ${tally}`);
    tally.assertReached(['200:own', '404:NOT_FOUND', '401:UNAUTHENTICATED', '405:METHOD_NOT_ALLOWED']);
    await assertOnlyExpected(w, scope, before, new Expected());
  });

  it(`GET /facilitator/payments, GET …/batches/{id} and POST …/payments/{id}/void: ${CASES} queries, paths and keys, only the caller's own data, nothing voided`, async function () {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    const ownBatch = (await pollUntil(w, m, ownPayment, 'CONFIRMED')).batchId as string;
    const value = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('1', '100', '0', '101', '-1', '1e2', 'CONFIRMED', 'VOIDED', 'QUEUED', 'done', ownPayment, othersPayment, ownBatch, 'fuzz-1', '2026-01-01T00:00:00Z', 'yesterday', '') },
      { weight: 1, arbitrary: nastyString.filter((s) => s.length < 500).map(percentEncode) },
    );
    const name = fc.constantFrom('limit', 'starting_after', 'status', 'orderRef', 'batchId', 'created[gte]', 'created[gt]', 'created[lte]', 'created[lt]', 'colour', 'limit');
    const listPath = fc.array(fc.tuple(name, value), { maxLength: 4 }).map((pairs) => `/facilitator/payments?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&')}`);
    const target = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(ownPayment, othersPayment, ownPayment.toUpperCase(), ownBatch) }, { weight: 2, arbitrary: pathSegment.filter((s) => !['', '.', '..', '%2e%2e'].includes(s)) });
    const arb = fc.oneof(
      fc.record({ kind: fc.constant('list' as const), method: fc.constant('GET'), path: listPath, auth: authHeader(m, other), accept }),
      fc.record({ kind: fc.constant('batch' as const), method: fc.constant('GET'), path: target.map((t) => `/facilitator/batches/${t}`), auth: authHeader(m, other), accept }),
      fc.record({ kind: fc.constant('void' as const), method: fc.constant('POST'), path: target.map((t) => `/facilitator/payments/${t}/void`), auth: authHeader(m, other), accept, idempotencyKey: idempotencyKeyHeader }),
    );
    await fuzzCases(arb, async (c) => {
      const req = request(w, c.path, c);
      const a = await send(req);
      const schema = c.kind === 'list' ? PaymentListSchema : c.kind === 'batch' ? BatchViewSchema : VoidResponseSchema;
      const { code, json } = checkRestAnswer(req, a, schema);
      if (!code && c.kind === 'list') for (const r of (json as { data: { merchantId: string }[] }).data) assert.equal(r.merchantId, ownerOf(c.auth), `a list shows only the caller's payments: ${JSON.stringify(req)}`);
      if (!code && c.kind === 'batch') for (const r of (json as { payments: { merchantId: string }[] }).payments) assert.equal(r.merchantId, ownerOf(c.auth));
      if (!code && c.kind === 'void') assert.fail(`a settled or foreign payment was voided: ${JSON.stringify(req)} -> ${a.text}`);
      tally.add(`${c.kind}:${code ? `${a.status}:${code}` : '200'}`);
    });
    console.log(`      list, batch and void outcomes: ${tally}`);
    tally.assertReached(['list:200', 'list:400:INVALID_REQUEST', 'list:401:UNAUTHENTICATED', 'batch:200', 'batch:404:NOT_FOUND', 'void:404:NOT_FOUND', 'void:409:PAYMENT_ALREADY_CLAIMED', 'void:400:IDEMPOTENCY_KEY_INVALID']);
    await assertOnlyExpected(w, scope, before, new Expected());
  });

  it(`POST …/payments/{id}/refunds and GET …/refund-authorization: ${CASES} bodies, queries, paths and keys; nothing unsigned is ever recorded`, async function () {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    await pollUntil(w, m, ownPayment, 'CONFIRMED');
    const nonce = `0x${ownPayment.replace(/-/g, '')}${'5a'.repeat(16)}`;
    const base = {
      amount: '1',
      authorization: { from: m.payoutAddress, to: `0x${'22'.repeat(20)}`, value: '1', validAfter: '0', validBefore: '99999999999', nonce },
      signature: `0x${'44'.repeat(65)}`,
    };
    const field = fc.constantFrom('amount', 'authorization', 'signature', 'authorization.from', 'authorization.to', 'authorization.value', 'authorization.validAfter', 'authorization.validBefore', 'authorization.nonce');
    const junk = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<unknown>('0', '-1', '1e3', '01', 'x', '', ' 1', '0x', `0x${'ff'.repeat(32)}`, `0x${'ff'.repeat(40)}`, String(2n ** 256n), 1, null, true, [], {}, nonce.toUpperCase()) },
      { weight: 1, arbitrary: nastyString.filter((x) => x.length < 2_000) },
    );
    const mutated = fc.array(fc.tuple(field, fc.option(junk, { nil: undefined })), { maxLength: 3 }).map((edits) => {
      const body = structuredClone(base) as Record<string, unknown> & { authorization: Record<string, unknown> };
      for (const [path, v] of edits) {
        const [head, leaf] = path.split('.') as [string, string | undefined];
        const holder = leaf ? body.authorization : body;
        if (typeof holder !== 'object' || holder === null || Array.isArray(holder)) continue; // authorization itself was replaced
        const key = leaf ?? head;
        if (v === undefined) delete holder[key];
        else holder[key] = typeof v === 'object' && v !== null ? structuredClone(v) : v; // constantFrom hands out one shared instance
      }
      return body;
    });
    const target = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(ownPayment, othersPayment, ownPayment.toUpperCase()) }, { weight: 1, arbitrary: pathSegment.filter((x) => !['', '.', '..', '%2e%2e'].includes(x)) });
    const query = fc.array(fc.tuple(fc.constantFrom('amount', 'valid_for', 'colour'), fc.oneof(fc.constantFrom('1', '0', '-1', '900', '899', '604801', '1e3', '', `${10n ** 31n}`), nastyString.filter((x) => x.length < 200).map(percentEncode))), { maxLength: 3 });
    const arb = fc.oneof(
      fc.record({ kind: fc.constant('refund' as const), method: method('POST'), path: target.map((t) => `/facilitator/payments/${t}/refunds`), body: mutated.chain((b) => bodyTextOf(b)), contentType, auth: authHeader(m, other), accept, idempotencyKey: idempotencyKeyHeader }),
      fc.record({ kind: fc.constant('prep' as const), method: fc.constant('GET'), path: fc.tuple(target, query).map(([t, q]) => `/facilitator/payments/${t}/refund-authorization?${q.map(([k, v]) => `${k}=${v}`).join('&')}`), auth: authHeader(m, other), accept }),
    );
    await fuzzCases(arb, async (c) => {
      const req = request(w, c.path, c);
      const a = await send(req);
      const { code, json } = checkRestAnswer(req, a, c.kind === 'refund' ? RefundResponseSchema : RefundAuthorizationResponseSchema);
      if (!code && c.kind === 'refund') assert.fail(`an unsigned refund was recorded: ${JSON.stringify(req)} -> ${a.text}`);
      if (!code && c.kind === 'prep') {
        // Either merchant's key is valid: the answer must be for the payment of whichever merchant the key names.
        const caller = callerOf(c.auth);
        assert.ok(caller, `typed data only for a valid key: ${JSON.stringify(req)}`);
        const td = (json as { typedData: { message: { nonce: string; from: string } } }).typedData;
        assert.equal(td.message.nonce.slice(2, 34), (caller === m ? ownPayment : othersPayment).replace(/-/g, ''), `typed data only for the caller's own payment: ${JSON.stringify(req)}`);
        assert.equal(td.message.from, caller.payoutAddress.toLowerCase());
      }
      tally.add(`${c.kind}:${code ? `${a.status}:${code}` : a.status}`);
    });
    console.log(`      refund outcomes: ${tally}`);
    tally.assertReached(['refund:400:REFUND_AUTHORIZATION_INVALID', 'refund:400:INVALID_REQUEST', 'refund:404:NOT_FOUND', 'prep:200', 'prep:400:INVALID_REQUEST', 'prep:404:NOT_FOUND']);
    assert.equal(await w.store.c.refunds.countDocuments({ _id: { $in: [ownPayment, othersPayment] } }), 0, 'no refund recorded');
    await assertOnlyExpected(w, scope, before, new Expected());
  });

  it(`webhook endpoints: ${CASES} bodies, URLs, ids and headers; only an https URL is registered, only the owner manages it`, async function () {
    const tally = new Tally();
    const own = await fetch(`${w.baseUrl}/facilitator/webhook-endpoints`, { method: 'POST', headers: { authorization: `Bearer ${m.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'https://127.0.0.1:9/own' }) });
    const ownId = ((await own.json()) as { endpoint: { id: string } }).endpoint.id;
    const url = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom('https://127.0.0.1:9/h', 'http://127.0.0.1:9/h', 'https://u:p@127.0.0.1/h', 'https://127.0.0.1/h#x', 'ftp://x', 'https://', '', 'https://[::1]/h') },
      { weight: 1, arbitrary: nastyString.filter((x) => x.length < 3_000) },
    );
    const id = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(ownId, ownId.toUpperCase(), 'we_0', 'we_' + '0'.repeat(32)) }, { weight: 1, arbitrary: pathSegment.filter((x) => !['', '.', '..', '%2e%2e'].includes(x)) });
    const arb = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), method: fc.constant('POST'), path: fc.constant('/facilitator/webhook-endpoints'), body: fc.oneof(url.chain((u) => bodyTextOf({ url: u })), fc.constant('{}')), contentType, auth: authHeader(m, other), accept }),
      fc.record({ kind: fc.constant('rotate' as const), method: fc.constant('POST'), path: id.map((x) => `/facilitator/webhook-endpoints/${x}/rotate-secret`), auth: authHeader(m, other), accept }),
    );
    try {
      await fuzzCases(arb, async (c) => {
        const req = request(w, c.path, c);
        const a = await send(req);
        const { code, json } = checkRestAnswer(req, a, z.object({ endpoint: z.object({ id: z.string(), url: z.string() }), secret: z.string().startsWith('whsec_') }));
        if (!code) {
          const answer = json as { endpoint: { id: string; url: string } };
          assert.ok(answer.endpoint.url.startsWith('https://'), `only https is registered: ${a.text}`);
          if (c.kind === 'rotate') {
            assert.equal(answer.endpoint.id, ownId);
            assert.equal(ownerOf(c.auth), m.merchantId, 'only the owner rotates its secret');
          }
        }
        tally.add(`${c.kind}:${code ? `${a.status}:${code}` : a.status}`);
      });
    } finally {
      // Endpoints left behind would make later batches start deliveries the next test does not expect.
      for (const key of [m.apiKey, other.apiKey]) {
        const auth = { authorization: `Bearer ${key}` };
        const listed = (await (await fetch(`${w.baseUrl}/facilitator/webhook-endpoints`, { headers: auth })).json()) as { data: { id: string }[] };
        for (const e of listed.data) await fetch(`${w.baseUrl}/facilitator/webhook-endpoints/${e.id}`, { method: 'DELETE', headers: auth });
      }
    }
    console.log(`      webhook endpoint outcomes: ${tally}`);
    tally.assertReached(['create:201', 'create:400:INVALID_REQUEST', 'create:401:UNAUTHENTICATED', 'rotate:200', 'rotate:404:NOT_FOUND']);
  });

  it(`POST /facilitator/capture: ${CASES} mutated bodies, Idempotency-Keys and headers; only accepted captures leave state`, async function () {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    const expected = new Expected();
    // A few keys shared across cases, so the same key meets other bodies (409) and the same body (replay).
    const sharedKeys = ['7d1f4a52-94c1-4d8e-a0a7-3f25f0d1c001', '7d1f4a52-94c1-4d8e-a0a7-3f25f0d1c002', '7D1F4A52-94C1-4D8E-A0A7-3F25F0D1C003'];
    const arb = fc.record({
      method: method('POST'),
      body: fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...vouchers.map((v) => v.captureBody)).chain((base) => bodyTextOf(base)) }, { weight: 1, arbitrary: resignedBody(vouchers, b, vw, false) }),
      contentType,
      auth: authHeader(m, other),
      accept,
      idempotencyKey: fc.oneof({ weight: 5, arbitrary: idempotencyKeyHeader }, { weight: 1, arbitrary: fc.constantFrom(...sharedKeys) }),
    });
    // Hand-written first: what once answered 500 (a 1e400 number, 10,000 levels of nesting), and oversized body and headers.
    const real = toJsonText(vouchers[0]!.captureBody);
    const example = (body: string, accept?: string) => ({ method: 'POST', body, contentType: 'application/json', auth: `Bearer ${m.apiKey}`, accept, idempotencyKey: randomUUID() });
    const examples = [
      example(`{"x402Version":2,"paymentPayload":{"value":1e400}}`),
      example(`{"x402Version":2,"paymentPayload":{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`),
      example(real.replace('"x402Version":2', '"x402Version":2,"pad":-1e999')),
      example(real.replace('"x402Version":2', `"x402Version":2,"pad":"${'x'.repeat(70_000)}"`)),
      example(real, 'x'.repeat(20_000)),
    ];
    await fuzzCases(arb, async (c) => {
      const req = request(w, '/facilitator/capture', c);
      const a = await send(req);
      const { code, json } = checkRestAnswer(req, a, CaptureResponseSchema);
      if (!code) {
        const { receipt, replayed } = json as { receipt: { paymentId: string; merchantId: string }; replayed: boolean };
        assert.ok(c.idempotencyKey !== undefined && isUuidV4(c.idempotencyKey), `a capture without a UUID v4 key was accepted: ${JSON.stringify(req)}`);
        assert.equal(receipt.merchantId, m.merchantId, 'only the voucher merchant can capture it');
        expected.payment(receipt.paymentId);
        expected.add('idempotency', `${m.merchantId}:${c.idempotencyKey.toLowerCase()}`);
        tally.add(replayed ? 'replayed' : 'captured');
      } else {
        const reason = (json as { error: { invalidReason?: string } }).error.invalidReason;
        tally.add(`${a.status}:${code}${reason ? `:${reason}` : ''}`);
      }
    }, { examples });
    console.log(`      capture outcomes: ${tally}`);
    assert.ok(!tally.has('429:RATE_LIMITED'), 'an unthrottled merchant is never rate-limited, however concurrent');
    tally.assertReached(['captured', '431:HEADERS_TOO_LARGE', '400:IDEMPOTENCY_KEY_INVALID', '400:IDEMPOTENCY_KEY_REQUIRED', '400:INVALID_REQUEST', '422:PAYMENT_REJECTED:invalid_payload', '422:PAYMENT_REJECTED:voucher_already_used', '422:PAYMENT_REJECTED:recipient_mismatch', '409:IDEMPOTENCY_KEY_CONFLICT', '413:PAYLOAD_TOO_LARGE', '415:UNSUPPORTED_MEDIA_TYPE']);
    await assertOnlyExpected(w, scope, before, expected);
    await assertPaymentsComplete(w, m.merchantId);
    await assertConsistent(w, borrowerId);
  });
});
