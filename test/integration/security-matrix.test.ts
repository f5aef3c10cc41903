import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PERMISSIONS } from '../../src/auth/permissions.js';
import { mcpUrl } from '../../src/config/env.js';
import { projectRoot } from '../../src/config/paths.js';
import { SCOPES, TOOL_SCOPES, type ToolName } from '@credit-facilitator/wire/onboarding';
import { TOOLS } from '../../src/mcp/tools/index.js';
import { resourceMetadataUrl } from '../../src/mcp/metadata.js';
import { idempotencyId } from '../../src/store/idempotency.js';
import { revokeApiKey } from '../../src/store/merchants.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { startExtraApi, type ExtraApi } from '../helpers/extra-api.js';
import { mintMerchantJwt } from '../helpers/merchant-jwt.js';
import { API_ROUTER_MODULES, mountedRoutes, routerModulesInSource } from '../helpers/mounted-routes.js';
import { COLUMN_ROUTES, CREDENTIALS, FIXED_ROUTES, MATRIX, renderSecurityMatrix, type Column, type Credential, type Outcome } from '../helpers/security-matrix.js';
import { capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type TestVoucher, type World } from '../helpers/world.js';
import { readJsonResponse, type JsonResponse } from '../support/http.js';

const CREDENTIAL_NAMES = Object.keys(CREDENTIALS) as Credential[];

/** Authorization values of the `foreignOrigin` row: sent with this Origin. */
const FOREIGN_ORIGIN = 'https://evil.example';
const fromForeignOrigin = new Set<string>();

async function send(url: string, method: string, authorization: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const h: Record<string, string> = { ...headers };
  if (authorization !== undefined) h.authorization = authorization;
  if (authorization !== undefined && fromForeignOrigin.has(authorization)) h.origin = FOREIGN_ORIGIN;
  if (body !== undefined) h['content-type'] = 'application/json';
  return readJsonResponse(await fetch(url, { method, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }));
}

/**
 * The two ways a tool call reaches /mcp: the 2025-era stateless form (served by the v1 SDK) and the
 * 2026-07-28 form (`_meta` envelope, Mcp-Method / Mcp-Name; served by the v2 server).
 */
const MCP_REVISIONS = [
  { version: '2025-11-25', params: {}, headers: (_tool: string): Record<string, string> => ({ 'mcp-protocol-version': '2025-11-25' }) },
  {
    version: '2026-07-28',
    params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'matrix', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    headers: (tool: string): Record<string, string> => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool }),
  },
] as const;

const describeAnswer = (r: JsonResponse) => `${r.status} ${JSON.stringify(r.json).slice(0, 300)}`;

/** A REST answer against its matrix cell, in the one error shape. */
function assertRest(r: JsonResponse, want: Outcome, what: string) {
  assert.equal(r.status, want.status, `${what}: ${describeAnswer(r)}`);
  assert.ok(!JSON.stringify(r.json).includes('    at '), `${what}: no stack trace`);
  if (!('code' in want)) return;
  assert.equal(r.json.error.code, want.code, what);
  assert.match(r.json.error.requestId, /^req_/, what);
  assert.equal(typeof r.json.error.message, 'string', what);
  if (want.status === 401) assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/, `${what}: WWW-Authenticate`);
  if (want.invalidReason) assert.equal(r.json.error.invalidReason, want.invalidReason, what);
}

describe('security matrix: every credential against every route and tool', function () {
  let w: World;
  let origin: string;
  let b: TestBorrower;
  let a: TestMerchant;
  let other: TestMerchant;
  let revoked: TestMerchant;
  let target: TestVoucher;
  let paymentId: string;
  let metricsApi: ExtraApi;
  const metricsToken = randomBytes(24).toString('base64url');
  const tokens: Record<string, string> = {};

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    b = await newBorrower(w);
    [a, other, revoked] = await Promise.all([
      newMerchant(w, 'Matrix A', { rateLimits: UNTHROTTLED }),
      newMerchant(w, 'Matrix B', { rateLimits: UNTHROTTLED }),
      newMerchant(w, 'Matrix revoked'),
    ]);
    await revokeApiKey(w.store.c, revoked.merchantId, revoked.keyId, new Date());
    target = await newVoucher(w, a, b, '1111');
    const paid = await capture(w, a, (await newVoucher(w, a, b, '2222')).captureBody);
    assert.equal(paid.status, 200, JSON.stringify(paid.json));
    paymentId = paid.json.receipt.paymentId;

    const m = a.merchantId;
    Object.assign(tokens, {
      jwt: await mintMerchantJwt({ merchantId: m }),
      jwtReadOnly: await mintMerchantJwt({ merchantId: m, permissions: [PERMISSIONS.settleRead] }),
      jwtCreateOnly: await mintMerchantJwt({ merchantId: m, permissions: [PERMISSIONS.settleCreate] }),
      jwtNoMfa: await mintMerchantJwt({ merchantId: m, mfa: false }),
      jwtStaleMfa: await mintMerchantJwt({ merchantId: m, authAgeSeconds: 11 * 60 }),
      jwtExpired: await mintMerchantJwt({ merchantId: m, expiresIn: -120 }),
      jwtOtherAudience: await mintMerchantJwt({ merchantId: m, audience: mcpUrl(w.cli.env) }),
      borrower: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES }),
      borrowerForeign: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES }),
      borrowerExpired: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES, expiresIn: -120 }),
      borrowerOtherAudience: await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: SCOPES, audience: w.baseUrl }),
    });
    fromForeignOrigin.add(`Bearer ${tokens.borrowerForeign}`);
    for (const t of TOOLS) {
      const lacking = SCOPES.filter((s) => !(TOOL_SCOPES[t.name] as readonly string[]).includes(s));
      tokens[`lacking:${t.name}`] = await mintBorrowerToken(w, { borrowerId: b.borrowerId, scopes: lacking });
    }
    metricsApi = await startExtraApi('api-metrics', { METRICS_TOKEN: metricsToken });
  });

  after(async function () {
    await metricsApi?.stop();
  });

  /** The Authorization header values standing for a credential on a column (several for the families). */
  function authorizations(cred: Credential, column: Column | 'fixed', tool: ToolName = 'prepare_x402_payment'): (string | undefined)[] {
    const bearer = (t: string) => `Bearer ${t}`;
    switch (cred) {
      case 'none':
        return [undefined];
      case 'malformed':
        return ['Bearer garbage', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer sk_live_short', `Bearer sk_live_${'A'.repeat(43)}`, 'Bearer eyJhbGciOiJub25lIn0.e30.'];
      case 'revokedKey':
        return [bearer(revoked.apiKey)];
      case 'otherMerchantKey':
        return [bearer(other.apiKey)];
      case 'jwtNoPermission':
        if (column === 'capture' || column === 'void' || column === 'refund' || column === 'hookCreate' || column === 'hookManage') return [bearer(tokens.jwtReadOnly!)];
        if (column === 'verify' || column === 'payment' || column === 'receipt' || column === 'list' || column === 'batch' || column === 'refundAuth' || column === 'hookList' || column === 'hookDeliveries') return [bearer(tokens.jwtCreateOnly!)];
        return [bearer(tokens.jwtReadOnly!), bearer(tokens.jwtCreateOnly!)];
      case 'jwtNoStepUp':
        return [bearer(tokens.jwtNoMfa!), bearer(tokens.jwtStaleMfa!)];
      case 'borrowerToken':
        return [bearer(tokens.borrower!)];
      case 'borrowerNoScope':
        return [bearer(tokens[`lacking:${tool}`]!)];
      case 'foreignOrigin':
        return [bearer(tokens.borrowerForeign!)];
      case 'expired':
        return column === 'mcp' ? [bearer(tokens.borrowerExpired!)] : [bearer(tokens.jwtExpired!)];
      case 'wrongAudience':
        return column === 'mcp' ? [bearer(tokens.borrowerOtherAudience!)] : [bearer(tokens.jwtOtherAudience!)];
      case 'merchantKey':
        return [bearer(a.apiKey)];
      case 'merchantJwt':
        return [bearer(tokens.jwt!)];
      case 'metricsToken':
        return [bearer(metricsToken)];
    }
  }

  it('covers every mounted route, every OpenAPI operation and every MCP tool', async function () {
    const covered = [...Object.values(COLUMN_ROUTES).flat(), ...FIXED_ROUTES.filter((r) => !r.provider).map((r) => r.route)].sort();
    assert.deepEqual(routerModulesInSource(), API_ROUTER_MODULES, 'a router module the matrix does not enumerate');
    assert.deepEqual(await mountedRoutes(w), covered, 'a mounted route has no row in the security matrix');
    const openapi = (await send(`${w.baseUrl}/openapi.json`, 'GET', undefined)).json as { paths: Record<string, Record<string, unknown>> };
    for (const [path, ops] of Object.entries(openapi.paths)) {
      for (const method of Object.keys(ops)) {
        const route = `${method.toUpperCase()} /api/v1${path.replace(/\{(\w+)\}/g, ':$1')}`;
        assert.ok(covered.includes(route), `OpenAPI operation ${route} is not in the matrix`);
      }
    }
    assert.deepEqual(TOOLS.map((t) => t.name).sort(), Object.keys(TOOL_SCOPES).sort());
  });

  it('merchant routes answer each credential as the matrix says; refused captures write nothing', async function () {
    const refusedKeys: string[] = [];
    const verifyBody = { x402Version: 2, paymentPayload: target.paymentPayload, paymentRequirements: target.prepared.payment_requirements };
    for (const cred of CREDENTIAL_NAMES) {
      for (const auth of authorizations(cred, 'verify')) {
        const want = MATRIX[cred].verify;
        const r = await send(`${w.baseUrl}/facilitator/verify`, 'POST', auth, verifyBody);
        assertRest(r, want, `verify with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) {
          assert.equal(r.json.isValid, !want.invalidReason, `verify with ${cred}: ${describeAnswer(r)}`);
          if (want.invalidReason) assert.equal(r.json.invalidReason, want.invalidReason);
        }
      }
      for (const auth of authorizations(cred, 'capture')) {
        const want = MATRIX[cred].capture;
        const key = randomUUID();
        // A capture the matrix admits gets a voucher of its own; every refusal aims at `target`.
        const body = want.status === 200 ? (await newVoucher(w, a, b, '3333')).captureBody : target.captureBody;
        if (want.status !== 200) refusedKeys.push(key);
        const r = await send(`${w.baseUrl}/facilitator/capture`, 'POST', auth, body, { 'idempotency-key': key });
        assertRest(r, want, `capture with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) assert.equal(r.json.replayed, false);
        if (r.status === 403 && want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleCreate);
      }
      for (const auth of authorizations(cred, 'payment')) {
        const want = MATRIX[cred].payment;
        const r = await send(`${w.baseUrl}/facilitator/payments/${paymentId}`, 'GET', auth);
        assertRest(r, want, `poll with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) assert.equal(r.json.paymentId, paymentId);
        if (want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleRead);
      }
    }

    const settled = await pollUntil(w, a, paymentId, 'CONFIRMED');
    for (const cred of CREDENTIAL_NAMES) {
      for (const auth of authorizations(cred, 'receipt')) {
        const want = MATRIX[cred].receipt;
        const r = await send(`${w.baseUrl}/facilitator/payments/${paymentId}/receipt`, 'GET', auth);
        assertRest(r, want, `signed receipt with ${cred} (${auth?.slice(0, 24)})`);
        if (r.status === 200) assert.equal(r.json.paymentId, paymentId);
        if (want.status === 403 && 'code' in want && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleRead);
      }
      for (const auth of authorizations(cred, 'list')) {
        const want = MATRIX[cred].list;
        const r = await send(`${w.baseUrl}/facilitator/payments?limit=100`, 'GET', auth);
        assertRest(r, want, `list with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) {
          const ids = (r.json.data as { paymentId: string; merchantId: string }[]).map((p) => p.paymentId);
          assert.equal(ids.includes(paymentId), cred !== 'otherMerchantKey', `list with ${cred}: only the caller's own payments`);
        }
        if (want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleRead);
      }
      for (const auth of authorizations(cred, 'batch')) {
        const want = MATRIX[cred].batch;
        const r = await send(`${w.baseUrl}/facilitator/batches/${settled.batchId}`, 'GET', auth);
        assertRest(r, want, `batch view with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) assert.ok((r.json.payments as { paymentId: string }[]).some((p) => p.paymentId === paymentId));
      }
      for (const auth of authorizations(cred, 'void')) {
        const want = MATRIX[cred].void;
        // An admitted void gets a payment of its own (a batch may claim it first: 409 PAYMENT_ALREADY_CLAIMED is admitted too); every refusal aims at A's settled payment.
        const victim = want.status === 200 ? (await capture(w, a, (await newVoucher(w, a, b, '1234')).captureBody)).json.receipt.paymentId : paymentId;
        const r = await send(`${w.baseUrl}/facilitator/payments/${victim}/void`, 'POST', auth, undefined, { 'idempotency-key': randomUUID() });
        if (want.status === 200 && r.status === 409) assert.equal(r.json.error.code, 'PAYMENT_ALREADY_CLAIMED', describeAnswer(r));
        else assertRest(r, want, `void with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleCreate);
      }
    }
    assert.equal((await pollUntil(w, a, paymentId, 'CONFIRMED')).transaction, settled.transaction, 'the refused voids left the payment alone');

    // Refunds: every credential on A's CONFIRMED payment, with a well-formed but unsigned authorization.
    const unsigned = {
      amount: '1',
      authorization: { from: `0x${'11'.repeat(20)}`, to: `0x${'22'.repeat(20)}`, value: '1', validAfter: '0', validBefore: '99999999999', nonce: `0x${'33'.repeat(32)}` },
      signature: `0x${'44'.repeat(65)}`,
    };
    for (const cred of CREDENTIAL_NAMES) {
      for (const auth of authorizations(cred, 'refund')) {
        const want = MATRIX[cred].refund;
        const r = await send(`${w.baseUrl}/facilitator/payments/${paymentId}/refunds`, 'POST', auth, unsigned, { 'idempotency-key': randomUUID() });
        assertRest(r, want, `refund with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleCreate);
      }
      for (const auth of authorizations(cred, 'refundAuth')) {
        const want = MATRIX[cred].refundAuth;
        const r = await send(`${w.baseUrl}/facilitator/payments/${paymentId}/refund-authorization?amount=1`, 'GET', auth);
        assertRest(r, want, `refund authorization with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) assert.equal(r.json.typedData.message.nonce.slice(2, 34), paymentId.replace(/-/g, ''));
        if (want.status === 403 && want.code === 'FORBIDDEN') assert.equal(r.json.error.requiredPermission, PERMISSIONS.settleRead);
      }
    }
    assert.equal(await w.store.c.refunds.countDocuments({ _id: paymentId }), 0, 'no refusal recorded a refund');

    // Webhook endpoints: A's own endpoint is the target of every refused rotation and deletion.
    const hookUrl = 'https://127.0.0.1:9/x402'; // nothing listens: deliveries fail and stop once the endpoint is deleted
    const aHook = await send(`${w.baseUrl}/facilitator/webhook-endpoints`, 'POST', `Bearer ${a.apiKey}`, { url: hookUrl });
    assert.equal(aHook.status, 201, describeAnswer(aHook));
    const aHookId = aHook.json.endpoint.id as string;
    for (const cred of CREDENTIAL_NAMES) {
      for (const auth of authorizations(cred, 'hookCreate')) {
        const r = await send(`${w.baseUrl}/facilitator/webhook-endpoints`, 'POST', auth, { url: hookUrl });
        assertRest(r, MATRIX[cred].hookCreate, `webhook create with ${cred} (${auth?.slice(0, 24)})`);
        if (r.status === 201) {
          assert.match(r.json.secret, /^whsec_/);
          const owner = cred === 'otherMerchantKey' ? other : a;
          await send(`${w.baseUrl}/facilitator/webhook-endpoints/${r.json.endpoint.id}`, 'DELETE', `Bearer ${owner.apiKey}`);
        }
      }
      for (const auth of authorizations(cred, 'hookList')) {
        const r = await send(`${w.baseUrl}/facilitator/webhook-endpoints`, 'GET', auth);
        assertRest(r, MATRIX[cred].hookList, `webhook list with ${cred} (${auth?.slice(0, 24)})`);
        if (r.status === 200) assert.equal((r.json.data as { id: string }[]).some((e) => e.id === aHookId), cred !== 'otherMerchantKey');
      }
      for (const auth of authorizations(cred, 'me')) {
        const r = await send(`${w.baseUrl}/facilitator/me`, 'GET', auth);
        assertRest(r, MATRIX[cred].me, `/me with ${cred} (${auth?.slice(0, 24)})`);
        if (r.status === 200) assert.equal(r.json.merchantId, cred === 'otherMerchantKey' ? other.merchantId : a.merchantId, 'its own merchant, never another');
      }
      for (const auth of authorizations(cred, 'hookDeliveries')) {
        const r = await send(`${w.baseUrl}/facilitator/webhook-endpoints/${aHookId}/deliveries`, 'GET', auth);
        assertRest(r, MATRIX[cred].hookDeliveries, `webhook deliveries with ${cred} (${auth?.slice(0, 24)})`);
      }
      for (const auth of authorizations(cred, 'hookManage')) {
        const want = MATRIX[cred].hookManage;
        // An admitted credential manages an endpoint made for it; every refusal aims at A's.
        const target = want.status === 200 ? ((await send(`${w.baseUrl}/facilitator/webhook-endpoints`, 'POST', `Bearer ${a.apiKey}`, { url: hookUrl })).json.endpoint.id as string) : aHookId;
        const rotated = await send(`${w.baseUrl}/facilitator/webhook-endpoints/${target}/rotate-secret`, 'POST', auth);
        assertRest(rotated, want, `webhook rotate with ${cred} (${auth?.slice(0, 24)})`);
        const updated = await send(`${w.baseUrl}/facilitator/webhook-endpoints/${target}`, 'PATCH', auth, { events: ['payment.confirmed'] });
        assertRest(updated, want, `webhook update with ${cred} (${auth?.slice(0, 24)})`);
        const tested = await send(`${w.baseUrl}/facilitator/webhook-endpoints/${target}/test`, 'POST', auth);
        assertRest(tested, want.status === 200 ? { status: 202 } : want, `webhook test with ${cred} (${auth?.slice(0, 24)})`);
        const removed = await send(`${w.baseUrl}/facilitator/webhook-endpoints/${target}`, 'DELETE', auth);
        assertRest(removed, want, `webhook delete with ${cred} (${auth?.slice(0, 24)})`);
      }
    }
    const still = await send(`${w.baseUrl}/facilitator/webhook-endpoints`, 'GET', `Bearer ${a.apiKey}`);
    assert.deepEqual((still.json.data as { id: string; secretCreatedAt: string }[]).map((e) => [e.id, e.secretCreatedAt]), [[aHookId, aHook.json.endpoint.secretCreatedAt]], 'refusals neither rotated nor deleted A\'s endpoint');
    assert.equal((await send(`${w.baseUrl}/facilitator/webhook-endpoints/${aHookId}`, 'DELETE', `Bearer ${a.apiKey}`)).status, 200);

    // Nothing the refusals touched moved: no payment, no bound key, the spend intent still reserved.
    const voucher = target.prepared.voucher;
    assert.equal(await w.store.c.payments.countDocuments({ voucherId: voucher.voucherId }), 0);
    const boundKeys = refusedKeys.flatMap((k) => [a, other, revoked].map((m) => idempotencyId(m.merchantId, k)));
    assert.equal(await w.store.c.idempotency.countDocuments({ _id: { $in: boundKeys } }), 0);
    assert.equal((await w.store.c.spendIntents.findOne({ _id: voucher.spendIntentId }))?.status, 'RESERVED');
    const own = await capture(w, a, target.captureBody);
    assert.equal(own.status, 200, `the voucher is still good for its own merchant: ${describeAnswer(own)}`);
  });

  it('/mcp answers each credential on every tool as the matrix says, at 2025-11-25 and at 2026-07-28', async function () {
    const prm = resourceMetadataUrl(w.cli.env);
    for (const tool of TOOLS) {
      const needed = TOOL_SCOPES[tool.name].join(' ');
      for (const cred of CREDENTIAL_NAMES) {
        const want = MATRIX[cred].mcp;
        for (const [auth, revision] of authorizations(cred, 'mcp', tool.name).flatMap((a) => MCP_REVISIONS.map((v) => [a, v] as const))) {
          const what = `${tool.name} at ${revision.version} with ${cred} (${auth?.slice(0, 24)})`;
          const message = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: tool.name, arguments: {}, ...revision.params } };
          const r = await send(mcpUrl(w.cli.env), 'POST', auth, message, { accept: 'application/json, text/event-stream', ...revision.headers(tool.name) });
          assert.equal(r.status, want.status, `${what}: ${describeAnswer(r)}`);
          assert.equal(r.json.jsonrpc, '2.0', what);
          if (!('code' in want)) {
            assert.ok(r.json.result && !r.json.error, `${what}: the tool ran: ${describeAnswer(r)}`);
            continue;
          }
          if (want.code === 'FORBIDDEN') {
            assert.equal(r.json.error.data.code, 'FORBIDDEN', what);
            assert.equal(r.json.id, null, what);
            assert.equal(r.headers.get('www-authenticate'), null, `${what}: refused before the token is looked at`);
            continue;
          }
          const challenge = r.headers.get('www-authenticate') ?? '';
          assert.ok(challenge.startsWith('Bearer ') && challenge.includes(`resource_metadata="${prm}"`), `${what}: ${challenge}`);
          assert.match(r.json.error.data.requestId, /^req_/, what);
          if (want.code === 'UNAUTHENTICATED') {
            assert.ok(!challenge.includes('error='), `${what}: no error code without a token`);
            assert.equal(r.json.error.data.code, 'UNAUTHENTICATED', what);
          } else if (want.code === 'invalid_token') {
            assert.ok(challenge.includes('error="invalid_token"'), `${what}: ${challenge}`);
            assert.equal(r.json.error.data.code, 'UNAUTHENTICATED', what);
          } else {
            assert.equal(want.code, 'insufficient_scope');
            // The token holds every other scope: the challenge asks for them with the needed ones (MCP 2025-11-25).
            assert.ok(challenge.includes('error="insufficient_scope"') && challenge.includes(`scope="${SCOPES.join(' ')}"`), `${what}: ${challenge}`);
            assert.equal(r.json.error.data.code, 'INSUFFICIENT_SCOPE', what);
            assert.equal(r.json.error.data.scope, needed, what);
            assert.equal(r.json.error.data.tool, tool.name, what);
            assert.equal(r.json.id, 7, what);
          }
        }
      }
    }
  });

  it('/metrics needs the METRICS_TOKEN when one is set, and is open when none is', async function () {
    for (const cred of CREDENTIAL_NAMES) {
      const want = MATRIX[cred].metrics;
      for (const auth of authorizations(cred, 'metrics')) {
        const r = await send(`${metricsApi.origin}/metrics`, 'GET', auth);
        assertRest(r, want, `metrics with ${cred} (${auth?.slice(0, 24)})`);
        if (want.status === 200) assert.match(String(r.json?.unparsable ?? ''), /^# HELP /m, 'the Prometheus text');
      }
    }
    const open = await send(`${origin}/metrics`, 'GET', undefined);
    assert.equal(open.status, 200, 'the test stack sets no METRICS_TOKEN');
  });

  it('public routes, the settle non-route and the borrower pages ignore every credential', async function () {
    for (const route of FIXED_ROUTES) {
      for (const cred of CREDENTIAL_NAMES) {
        for (const auth of authorizations(cred, 'fixed')) {
          const what = `${route.route} with ${cred} (${auth?.slice(0, 24)})`;
          const r = await send(`${origin}${route.path}`, route.method, auth, route.body);
          assert.equal(r.status, route.expect.status, `${what}: ${describeAnswer(r)}`);
          if (route.expect.code) assert.equal(r.json.error.code, route.expect.code, what);
          if (route.expect.html) assert.match(r.headers.get('content-type') ?? '', /^text\/html/, what);
        }
      }
    }
  });

  it('docs/api.md carries this matrix', function () {
    const doc = readFileSync(join(projectRoot(), 'docs', 'api.md'), 'utf8');
    assert.ok(doc.includes(renderSecurityMatrix()), `docs/api.md "Security matrix" differs from the tested one; it should read:\n${renderSecurityMatrix()}`);
  });
});
