/**
 * The security matrix: what every credential gets from every route. test/integration/
 * security-matrix.test.ts asserts each cell against the running stack, and docs/api.md carries
 * the same table (renderSecurityMatrix), so the document cannot drift from what is enforced.
 */

export const CREDENTIALS = {
  none: 'no `Authorization`',
  malformed: 'malformed (`Bearer garbage`, `Basic …`, bare `Bearer`, `sk_live_short`, unknown `sk_live_…`, unsigned JWT)',
  revokedKey: 'revoked API key',
  otherMerchantKey: "another merchant's API key (on merchant A's voucher / payment)",
  jwtNoPermission: "merchant JWT without the route's permission",
  jwtNoStepUp: 'merchant JWT without step-up (no `mfa` in `amr`, or `auth_time` over 10 min old)',
  borrowerToken: 'borrower OAuth token (all scopes)',
  borrowerNoScope: "borrower OAuth token lacking the tool's scope",
  foreignOrigin: 'borrower OAuth token (all scopes) from a page on another site (`Origin: https://evil.example`)',
  expired: 'expired token (merchant JWT on REST, borrower token on `/mcp`)',
  wrongAudience: 'token for another audience (merchant JWT on REST, borrower token on `/mcp`)',
  merchantKey: "the merchant's own API key",
  merchantJwt: 'merchant JWT with both permissions and a recent MFA',
  metricsToken: 'the `METRICS_TOKEN`',
} as const;

export type Credential = keyof typeof CREDENTIALS;

export const COLUMNS = {
  verify: '`POST …/facilitator/verify`',
  capture: '`POST …/facilitator/capture`',
  payment: '`GET …/facilitator/payments/{id}`',
  receipt: '`GET …/facilitator/payments/{id}/receipt` (signed)',
  list: '`GET …/facilitator/payments` (list)',
  batch: '`GET …/facilitator/batches/{id}`',
  void: '`POST …/facilitator/payments/{id}/void`',
  refund: '`POST …/facilitator/payments/{id}/refunds` (an unsigned body: admitted means judged)',
  refundAuth: '`GET …/facilitator/payments/{id}/refund-authorization`',
  hookCreate: '`POST …/facilitator/webhook-endpoints`',
  hookList: '`GET …/facilitator/webhook-endpoints`',
  hookDeliveries: '`GET …/webhook-endpoints/{id}/deliveries`',
  me: '`GET …/facilitator/me` (any merchant credential that authenticates: its own merchant, permissions and limits)',
  hookManage: '`POST …/webhook-endpoints/{id}/rotate-secret`, `PATCH`/`DELETE …/webhook-endpoints/{id}`, `POST …/webhook-endpoints/{id}/test`, `POST …/deliveries/{id}/resend`',
  mcp: '`POST /mcp` (every tool; at 2025-11-25 and natively at 2026-07-28)',
  metrics: '`GET /metrics` (`METRICS_TOKEN` set)',
} as const;

export type Column = keyof typeof COLUMNS;

/**
 * `code` is the body's error code; on /mcp it is the OAuth error of the challenge
 * (`invalid_token`, `insufficient_scope`), UNAUTHENTICATED when no token was sent, or FORBIDDEN
 * (`data.code`, no challenge) for a foreign Origin.
 * `invalidReason` is verify's verdict (on a 200) or a refused capture's reason (on a 422).
 */
export type Outcome = { status: 200 | 201 | 202; invalidReason?: string } | { status: 400 | 401 | 403 | 404 | 422; code: string; invalidReason?: string };

const ok: Outcome = { status: 200 };
const created: Outcome = { status: 201 };
const stepUp: Outcome = { status: 403, code: 'STEP_UP_REQUIRED' };
const unauth: Outcome = { status: 401, code: 'UNAUTHENTICATED' };
const invalidToken: Outcome = { status: 401, code: 'invalid_token' };
/** An admitted refund whose (deliberately unsigned) authorization is then judged. */
const refundJudged: Outcome = { status: 400, code: 'REFUND_AUTHORIZATION_INVALID' };

/** Every credential that is not a borrower token is refused alike at /mcp and at /metrics. */
type RestColumn = Exclude<Column, 'mcp' | 'metrics'>;

function refusedOutsideRest(rest: Record<RestColumn, Outcome>): Record<Column, Outcome> {
  return { ...rest, mcp: invalidToken, metrics: unauth };
}

/** The same answer on every REST column. */
function allRest(o: Outcome): Record<RestColumn, Outcome> {
  return { verify: o, capture: o, payment: o, receipt: o, list: o, batch: o, void: o, refund: o, refundAuth: o, hookCreate: o, hookList: o, hookDeliveries: o, hookManage: o, me: o };
}

export const MATRIX: Record<Credential, Record<Column, Outcome>> = {
  none: { ...allRest(unauth), mcp: unauth, metrics: unauth },
  malformed: refusedOutsideRest(allRest(unauth)),
  revokedKey: refusedOutsideRest(allRest(unauth)),
  otherMerchantKey: refusedOutsideRest({
    verify: { status: 200, invalidReason: 'recipient_mismatch' },
    capture: { status: 422, code: 'PAYMENT_REJECTED', invalidReason: 'recipient_mismatch' },
    payment: { status: 404, code: 'NOT_FOUND' },
    receipt: { status: 404, code: 'NOT_FOUND' },
    list: ok, // its own (empty) list, never A's payments
    batch: { status: 404, code: 'NOT_FOUND' },
    void: { status: 404, code: 'NOT_FOUND' },
    refund: { status: 404, code: 'NOT_FOUND' },
    refundAuth: { status: 404, code: 'NOT_FOUND' },
    hookCreate: created, // an endpoint of its own
    hookList: ok, // its own endpoints, never A's
    hookDeliveries: { status: 404, code: 'NOT_FOUND' },
    hookManage: { status: 404, code: 'NOT_FOUND' },
    me: ok, // its own merchant
  }),
  // /me answers any credential that authenticates, permissions or not: it is how a merchant finds out what it lacks.
  jwtNoPermission: refusedOutsideRest({ ...allRest({ status: 403, code: 'FORBIDDEN' }), me: ok }),
  jwtNoStepUp: refusedOutsideRest({
    verify: ok,
    capture: stepUp,
    payment: ok,
    receipt: ok,
    list: ok,
    batch: ok,
    void: stepUp,
    refund: stepUp,
    refundAuth: ok,
    hookCreate: stepUp,
    hookList: ok,
    hookDeliveries: ok,
    hookManage: stepUp,
    me: ok,
  }),
  borrowerToken: { ...allRest(unauth), mcp: ok, metrics: unauth },
  borrowerNoScope: { ...allRest(unauth), mcp: { status: 403, code: 'insufficient_scope' }, metrics: unauth },
  // The MCP transport's DNS-rebinding check answers before the token is looked at.
  foreignOrigin: { ...allRest(unauth), mcp: { status: 403, code: 'FORBIDDEN' }, metrics: unauth },
  expired: refusedOutsideRest(allRest(unauth)),
  wrongAudience: refusedOutsideRest(allRest(unauth)),
  merchantKey: refusedOutsideRest({ ...allRest(ok), refund: refundJudged, hookCreate: created }),
  merchantJwt: refusedOutsideRest({ ...allRest(ok), refund: refundJudged, hookCreate: created }),
  metricsToken: { ...allRest(unauth), mcp: invalidToken, metrics: ok },
};

/** The mounted routes behind each column (`METHOD path` as the routers declare them). */
export const COLUMN_ROUTES: Record<Column, string[]> = {
  verify: ['POST /api/v1/facilitator/verify'],
  capture: ['POST /api/v1/facilitator/capture'],
  payment: ['GET /api/v1/facilitator/payments/:paymentId'],
  receipt: ['GET /api/v1/facilitator/payments/:paymentId/receipt'],
  list: ['GET /api/v1/facilitator/payments'],
  batch: ['GET /api/v1/facilitator/batches/:batchId'],
  void: ['POST /api/v1/facilitator/payments/:paymentId/void'],
  refund: ['POST /api/v1/facilitator/payments/:paymentId/refunds'],
  refundAuth: ['GET /api/v1/facilitator/payments/:paymentId/refund-authorization'],
  hookCreate: ['POST /api/v1/facilitator/webhook-endpoints'],
  hookList: ['GET /api/v1/facilitator/webhook-endpoints'],
  hookDeliveries: ['GET /api/v1/facilitator/webhook-endpoints/:endpointId/deliveries'],
  me: ['GET /api/v1/facilitator/me'],
  hookManage: [
    'DELETE /api/v1/facilitator/webhook-endpoints/:endpointId',
    'PATCH /api/v1/facilitator/webhook-endpoints/:endpointId',
    'POST /api/v1/facilitator/webhook-endpoints/:endpointId/deliveries/:deliveryId/resend',
    'POST /api/v1/facilitator/webhook-endpoints/:endpointId/rotate-secret',
    'POST /api/v1/facilitator/webhook-endpoints/:endpointId/test',
  ],
  mcp: ['ANY /mcp'],
  metrics: ['GET /metrics'],
};

/** Routes whose answer does not depend on the credential at all. */
export interface FixedRoute {
  route: string;
  /** A concrete request for the route. */
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  expect: { status: number; code?: string; html?: boolean };
  /** What the request stands for, in the docs table. */
  when: string;
  /** Served by oidc-provider, outside the routers the coverage check enumerates. */
  provider?: boolean;
}

const unknownUid = 'AbCdEfGhIjKlMnOp0123';
const unknownSigningRequest = '00000000-0000-4000-8000-000000000000';

export const FIXED_ROUTES: FixedRoute[] = [
  { route: 'GET /api/v1/facilitator/supported', method: 'GET', path: '/api/v1/facilitator/supported', when: 'public', expect: { status: 200 } },
  { route: 'GET /api/v1/facilitator/health', method: 'GET', path: '/api/v1/facilitator/health', when: 'public', expect: { status: 200 } },
  { route: 'GET /api/v1/facilitator/receipt-keys', method: 'GET', path: '/api/v1/facilitator/receipt-keys', when: 'public', expect: { status: 200 } },
  { route: 'GET /api/v1/openapi.json', method: 'GET', path: '/api/v1/openapi.json', when: 'public', expect: { status: 200 } },
  { route: 'GET /.well-known/oauth-protected-resource/mcp', method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', when: 'public', expect: { status: 200 } },
  { route: 'GET /.well-known/oauth-protected-resource', method: 'GET', path: '/.well-known/oauth-protected-resource', when: 'public', expect: { status: 200 } },
  { route: 'GET /.well-known/oauth-authorization-server/oauth', method: 'GET', path: '/.well-known/oauth-authorization-server/oauth', when: 'public', expect: { status: 200 }, provider: true },
  { route: 'GET /.well-known/openid-configuration/oauth', method: 'GET', path: '/.well-known/openid-configuration/oauth', when: 'public', expect: { status: 200 }, provider: true },
  { route: 'GET /oauth/jwks', method: 'GET', path: '/oauth/jwks', when: 'public', expect: { status: 200 }, provider: true },
  { route: 'POST /api/v1/facilitator/settle', method: 'POST', path: '/api/v1/facilitator/settle', body: {}, when: 'there is no settle route', expect: { status: 404, code: 'NOT_FOUND' } },
  { route: 'GET /oauth/interaction/:uid', method: 'GET', path: `/oauth/interaction/${unknownUid}`, when: 'sign-in without its interaction cookie', expect: { status: 400, html: true } },
  { route: 'GET /oauth/interaction/:uid/challenge', method: 'GET', path: `/oauth/interaction/${unknownUid}/challenge?wallet=0x${'1'.repeat(40)}`, when: 'sign-in without its interaction cookie', expect: { status: 404, code: 'NOT_FOUND' } },
  { route: 'POST /oauth/interaction/:uid/wallet-proof', method: 'POST', path: `/oauth/interaction/${unknownUid}/wallet-proof`, body: {}, when: 'sign-in without its interaction cookie', expect: { status: 404, code: 'NOT_FOUND' } },
  { route: 'POST /oauth/interaction/:uid/abort', method: 'POST', path: `/oauth/interaction/${unknownUid}/abort`, body: {}, when: 'sign-in without its interaction cookie', expect: { status: 404, code: 'NOT_FOUND' } },
  { route: 'GET /borrower/sign/:id', method: 'GET', path: '/borrower/sign/not-a-signing-request', when: 'malformed signing link', expect: { status: 404, html: true } },
  { route: 'GET /borrower/api/signing-requests/:id', method: 'GET', path: `/borrower/api/signing-requests/${unknownSigningRequest}`, when: 'unknown signing request', expect: { status: 404, code: 'NOT_FOUND' } },
  {
    route: 'POST /borrower/api/signing-requests/:id/signature',
    method: 'POST',
    path: `/borrower/api/signing-requests/${unknownSigningRequest}/signature`,
    body: { signature: `0x${'ab'.repeat(65)}` },
    when: 'unknown signing request', expect: { status: 404, code: 'NOT_FOUND' },
  },
  { route: 'GET /borrower/account', method: 'GET', path: '/borrower/account', when: 'the borrower page (signs in with the wallet)', expect: { status: 200, html: true } },
  { route: 'GET /borrower/api/session/challenge', method: 'GET', path: `/borrower/api/session/challenge?wallet=0x${'1'.repeat(40)}`, when: 'starts a wallet sign-in', expect: { status: 200 } },
  { route: 'POST /borrower/api/session', method: 'POST', path: '/borrower/api/session', body: {}, when: 'no Origin header (not from the page)', expect: { status: 403, code: 'FORBIDDEN' } },
  { route: 'POST /borrower/api/session/end', method: 'POST', path: '/borrower/api/session/end', body: {}, when: 'no Origin header (not from the page)', expect: { status: 403, code: 'FORBIDDEN' } },
  { route: 'GET /borrower/api/account', method: 'GET', path: '/borrower/api/account', when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },
  { route: 'POST /borrower/api/agent-keys/:id/revoke', method: 'POST', path: `/borrower/api/agent-keys/${unknownSigningRequest}/revoke`, body: {}, when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },
  { route: 'POST /borrower/api/agent-keys/:id/limits/typed-data', method: 'POST', path: `/borrower/api/agent-keys/${unknownSigningRequest}/limits/typed-data`, body: {}, when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },
  { route: 'POST /borrower/api/agent-keys/:id/limits', method: 'POST', path: `/borrower/api/agent-keys/${unknownSigningRequest}/limits`, body: {}, when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },
  { route: 'POST /borrower/api/operational-agents/:id/revoke', method: 'POST', path: `/borrower/api/operational-agents/${unknownSigningRequest}/revoke`, body: {}, when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },
  { route: 'POST /borrower/api/connected-clients/disconnect', method: 'POST', path: '/borrower/api/connected-clients/disconnect', body: { client_id: 'any' }, when: 'no page session cookie', expect: { status: 401, code: 'UNAUTHENTICATED' } },  { route: 'GET /merchant', method: 'GET', path: `/merchant`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/payments', method: 'GET', path: `/merchant/payments`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/payments/:id', method: 'GET', path: `/merchant/payments/${unknownSigningRequest}`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/payments/:id/refund', method: 'GET', path: `/merchant/payments/${unknownSigningRequest}/refund?kind=full`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/batches', method: 'GET', path: `/merchant/batches`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/batches/:id', method: 'GET', path: `/merchant/batches/${unknownSigningRequest}`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/export.csv', method: 'GET', path: `/merchant/export.csv?from=2026-01-01`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/webhooks', method: 'GET', path: `/merchant/webhooks`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/webhooks/:id', method: 'GET', path: `/merchant/webhooks/we_${"0".repeat(32)}`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/account', method: 'GET', path: `/merchant/account`, when: 'no console session: redirected to the sign-in page', expect: { status: 200, html: true } },
  { route: 'GET /merchant/sign-in', method: 'GET', path: '/merchant/sign-in', when: 'the console sign-in page (a merchant user token from the identity provider)', expect: { status: 200, html: true } },
  { route: 'POST /merchant/sign-in', method: 'POST', path: `/merchant/sign-in`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/sign-out', method: 'POST', path: `/merchant/sign-out`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/payments/:id/void', method: 'POST', path: `/merchant/payments/${unknownSigningRequest}/void`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/payments/:id/refunds', method: 'POST', path: `/merchant/payments/${unknownSigningRequest}/refunds`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks', method: 'POST', path: `/merchant/webhooks`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks/:id/events', method: 'POST', path: `/merchant/webhooks/we_${"0".repeat(32)}/events`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks/:id/test', method: 'POST', path: `/merchant/webhooks/we_${"0".repeat(32)}/test`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks/:id/deliveries/:deliveryId/resend', method: 'POST', path: `/merchant/webhooks/we_${"0".repeat(32)}/deliveries/whd_0/resend`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks/:id/rotate-secret', method: 'POST', path: `/merchant/webhooks/we_${"0".repeat(32)}/rotate-secret`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
  { route: 'POST /merchant/webhooks/:id/delete', method: 'POST', path: `/merchant/webhooks/we_${"0".repeat(32)}/delete`, body: {}, when: 'no Origin header (not a console form)', expect: { status: 403, html: true } },
];

function cell(o: Outcome): string {
  if (!('code' in o)) return o.status === 201 ? '201' : o.invalidReason ? `200, \`isValid:false\` \`${o.invalidReason}\`` : '200';
  return `${o.status} \`${o.code}\`${o.invalidReason ? ` \`${o.invalidReason}\`` : ''}`;
}

function fixedCell(e: FixedRoute['expect']): string {
  if (e.code) return `${e.status} \`${e.code}\``;
  return e.html ? `${e.status} (HTML page)` : String(e.status);
}

/** The markdown docs/api.md carries under "Security matrix". */
export function renderSecurityMatrix(): string {
  const cols = Object.keys(COLUMNS) as Column[];
  const lines = [
    `| credential | ${cols.map((c) => COLUMNS[c]).join(' | ')} |`,
    `| --- | ${cols.map(() => '---').join(' | ')} |`,
    ...(Object.keys(CREDENTIALS) as Credential[]).map((cred) => `| ${CREDENTIALS[cred]} | ${cols.map((c) => cell(MATRIX[cred][c])).join(' | ')} |`),
    '',
    'Routes whose answer does not depend on any credential (an `Authorization` header is ignored there):',
    '',
    '| route | request | any credential |',
    '| --- | --- | --- |',
    ...FIXED_ROUTES.map((r) => `| \`${r.route}\` | ${r.when} | ${fixedCell(r.expect)} |`),
  ];
  return lines.join('\n');
}
