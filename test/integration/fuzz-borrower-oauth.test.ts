import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { PrivateKeyAccount } from 'viem';
import { z } from 'zod';
import { typedDataFromJson } from '../../src/agents/signing.js';
import { redirectUriProblem } from '../../src/domain/redirect-policy.js';
import { storeGrant } from '../helpers/borrower-token.js';
import { borrowerPageSession } from '../helpers/borrower-page-session.js';
import { checkAuthorizationAnswer, checkOAuthJsonAnswer, checkRestAnswer, send, Tally, type RawRequest } from '../helpers/fuzz-checks.js';
import { assertOnlyExpected, Expected, snapshot, type FuzzScope } from '../helpers/fuzz-state.js';
import { bodyTextOf, contentType, fuzzCases, headerJunk, nastyString, nastyValue, pathSegment, percentEncode, toJsonText } from '../helpers/fuzz.js';
import { newBorrower, world, type TestBorrower, type World } from '../helpers/world.js';
import { pkcePair, registerLoopbackClient } from '../support/oauth-client.js';

/**
 * Fuzz of the edges issue 10 added: the borrower page's JSON API (session cookie + Origin, revoke a
 * key or an agent, disconnect an app, lower a limit with a wallet-signed AgentGrant) and the OAuth registration and
 * authorization endpoints (application_type, https client ids naming metadata documents).
 * FUZZ_CASES sets the cases per edge (default kept small: these edges are slower than the REST ones).
 */
const CASES = Number(process.env.FUZZ_CASES ?? 400);

/** The borrower pages answer a conflict as 409 INVALID_REQUEST (docs/agent-side.md) and use a cookie, not a bearer credential. */
const PAGE = { alsoStatus: { INVALID_REQUEST: [409] }, sessionCookie: true } as const;

const KeyId = z.uuid();
const RevokeKeyAnswer = z.strictObject({ key_id: KeyId, status: z.literal('revoked'), changed: z.boolean() });
const RevokeAgentAnswer = z.strictObject({ operational_agent_id: KeyId, status: z.literal('revoked'), changed: z.boolean(), revoked_key_ids: z.array(KeyId), ended_grants: z.number().int().nonnegative() });
const TypedDataAnswer = z.strictObject({ typed_data: z.record(z.string(), z.unknown()), nonce: z.string().regex(/^0x[0-9a-f]{64}$/), expires_at: z.number() });
const LimitsAnswer = z.strictObject({ key_id: KeyId, per_payment_limit: z.string(), daily_limit: z.string(), expires_at: z.number() });
const AccountAnswer = z.looseObject({ borrower_id: KeyId });
const DisconnectAnswer = z.strictObject({ client_id: z.string().min(1), status: z.literal('disconnected'), ended_grants: z.number().int().positive() });

/** What the fuzz may change on the page: key status and grant, agent revocation. */
interface AgentState {
  keys: Map<string, { borrowerId: string; status: string; grantNonce: string | undefined; limits: string }>;
  agents: Map<string, { borrowerId: string; revoked: boolean }>;
  /** The status of each key's copy on its agent, which captures check. */
  copies: Map<string, string>;
}

/** Every key's copy on its agent says what its document says (captures read the copy). */
function assertCopiesMatch(state: AgentState): void {
  for (const [id, k] of state.keys) assert.equal(state.copies.get(id), k.status, `the copy of key ${id} on its agent`);
}

async function agentState(w: World, borrowerIds: string[]): Promise<AgentState> {
  const keys = await w.store.c.agentKeys.find({ borrowerId: { $in: borrowerIds } }).toArray();
  const agents = await w.store.c.operationalAgents.find({ borrowerId: { $in: borrowerIds } }).toArray();
  return {
    keys: new Map(keys.map((k) => [k._id, { borrowerId: k.borrowerId, status: k.status, grantNonce: k.grant?.nonce, limits: `${k.grant?.perPaymentLimit}/${k.grant?.dailyLimit}` }])),
    agents: new Map(agents.map((a) => [a._id, { borrowerId: a.borrowerId, revoked: !!a.revokedAt }])),
    copies: new Map(agents.flatMap((a) => (a.keys ?? []).map((k) => [k.keyId, k.status] as const))),
  };
}

interface PageCase {
  kind: 'revoke-key' | 'revoke-agent' | 'typed-data' | 'limits' | 'account' | 'disconnect';
  method: string;
  id: string;
  suffix: string;
  body?: string | undefined;
  contentType?: string | undefined;
  origin?: string | undefined;
  cookie?: string | undefined;
}

const ROUTE: Record<PageCase['kind'], (id: string) => string> = {
  'revoke-key': (id) => `/borrower/api/agent-keys/${id}/revoke`,
  'revoke-agent': (id) => `/borrower/api/operational-agents/${id}/revoke`,
  'typed-data': (id) => `/borrower/api/agent-keys/${id}/limits/typed-data`,
  limits: (id) => `/borrower/api/agent-keys/${id}/limits`,
  account: () => '/borrower/api/account',
  disconnect: () => '/borrower/api/connected-clients/disconnect',
};

const ANSWER: Record<PageCase['kind'], z.ZodType> = {
  'revoke-key': RevokeKeyAnswer,
  'revoke-agent': RevokeAgentAnswer,
  'typed-data': TypedDataAnswer,
  limits: LimitsAnswer,
  account: AccountAnswer,
  disconnect: DisconnectAnswer,
};

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Mostly the borrower's own session; sometimes another's, both, a signed-out, tampered or unsigned one, or junk. */
function cookieHeader(own: string, other: string, signedOut: string): fc.Arbitrary<string | undefined> {
  const [head, payload, sig] = own.split('.') as [string, string, string];
  const otherPayload = other.split('.')[1] as string;
  const unsigned = `${b64url({ alg: 'none', typ: 'borrower-session+jwt' })}.${payload}.`;
  const otherTyp = `${b64url({ alg: 'HS256', typ: 'borrower-signin+jwt' })}.${payload}.${sig}`;
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`borrower_session=${own}`) },
    { weight: 1, arbitrary: fc.constant(`borrower_session=${other}`) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        undefined, '', 'borrower_session=', `borrower_session=${own}x`, `borrower_session=${head}.${payload}.${'A'.repeat(43)}`, `borrower_session=${head}.${otherPayload}.${sig}`,
        `borrower_session=${unsigned}`, `borrower_session=${otherTyp}`, `borrower_session=${head}.${payload}`, `BORROWER_SESSION=${own}`, `borrower_session="${own}"`,
        `borrower_session=${own.toUpperCase()}`, `x=1; borrower_session=${own}`, `borrower_session=${other}; borrower_session=${own}`, `borrower_signin=${own}`,
        `borrower_session=${'A'.repeat(5_000)}`, `borrower_session=${own};borrower_session=`, `borrower_session=${signedOut}`,
      ),
    },
    { weight: 1, arbitrary: headerJunk.map((s) => `borrower_session=${s}`) },
    { weight: 1, arbitrary: nastyString.filter((s) => s.length < 300).map((s) => `borrower_session=${percentEncode(s)}`) },
  );
}

/** Mostly our origin; sometimes a near miss, another site, none, or junk. */
function originHeader(origin: string): fc.Arbitrary<string | undefined> {
  const u = new URL(origin);
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(origin) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        undefined, '', 'null', `${origin}/`, origin.toUpperCase(), `http://localhost:${u.port}`, `https://${u.host}`, `${origin}.evil.example`, `${origin}, ${origin}`,
        'https://evil.example', `${origin}:${u.port}`, `http://127.0.0.1:${Number(u.port) + 1}`, `${origin}/borrower/account`,
      ),
    },
    { weight: 1, arbitrary: headerJunk },
  );
}

const suffix = fc.constantFrom('', '', '', '', '/', '?x=1', '/x', '%20', '//');
const pageMethod = fc.oneof({ weight: 20, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH') });

function pageRequest(origin: string, c: PageCase): RawRequest {
  const headers: Record<string, string> = {};
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  if (c.origin !== undefined) headers.origin = c.origin;
  if (c.cookie !== undefined) headers.cookie = c.cookie;
  return { method: c.method, url: `${origin}${ROUTE[c.kind](c.id)}${c.suffix}`, headers, ...(c.body !== undefined ? { body: c.body } : {}) };
}

async function signedLimits(origin: string, session: string, b: TestBorrower, limits: { per_payment_limit: string; daily_limit: string }) {
  const res = await fetch(`${origin}/borrower/api/agent-keys/${b.agentKeyId}/limits/typed-data`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, cookie: `borrower_session=${session}` },
    body: JSON.stringify(limits),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { typed_data, nonce } = (await res.json()) as { typed_data: Record<string, unknown>; nonce: string };
  const signature = await b.wallet.signTypedData(typedDataFromJson(typed_data) as Parameters<PrivateKeyAccount['signTypedData']>[0]);
  return { ...limits, nonce, signature };
}

describe('fuzz: the borrower page API and the OAuth registration and authorization edges', function () {
  this.timeout(600_000);
  let w: World;
  let origin: string;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
  });

  describe('borrower page', function () {
    let b: TestBorrower;
    let other: TestBorrower;
    let bystander: TestBorrower;
    let sessions: Map<string, string>;
    /** A session of b's that signed out: it must never act. */
    let signedOut: string;
    let scope: FuzzScope;
    /** Which borrower owns an id (lowercase), for the ids the fuzz sends. */
    let ownerOf: Map<string, string>;

    before(async function () {
      [b, other, bystander] = await Promise.all([newBorrower(w), newBorrower(w), newBorrower(w)]);
      const [own, others] = await Promise.all([borrowerPageSession(origin, b.wallet), borrowerPageSession(origin, other.wallet)]);
      sessions = new Map([[b.borrowerId, own], [other.borrowerId, others]]);
      signedOut = await borrowerPageSession(origin, b.wallet);
      const out = await fetch(`${origin}/borrower/api/session/end`, { method: 'POST', headers: { origin, cookie: `borrower_session=${signedOut}` } });
      assert.equal(out.status, 200);
      scope = { merchantIds: [], borrowerIds: [b.borrowerId, other.borrowerId, bystander.borrowerId] };
      ownerOf = new Map([b, other, bystander].flatMap((x) => [[x.agentKeyId, x.borrowerId], [x.operationalAgentId, x.borrowerId]] as const));
    });

    const knownIds = () => [b, other, bystander].flatMap((x) => [x.agentKeyId, x.operationalAgentId]);
    const idArb = () =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(b.agentKeyId, b.operationalAgentId) },
        { weight: 3, arbitrary: fc.constantFrom(...knownIds(), b.agentKeyId.toUpperCase()) },
        { weight: 1, arbitrary: nastyString.filter((s) => s.length < 500).map((s) => percentEncode(`${b.agentKeyId}${s}`)) },
        { weight: 2, arbitrary: pathSegment.filter((s) => !['', '.', '..', '%2e%2e'].includes(s)) },
      );

    /**
     * An accepted answer: our exact Origin, a session of the id's owner in the Cookie, and it
     * names the id of the path. Returns the borrower it acted for.
     */
    function assertAcceptedFairly(c: PageCase, json: Record<string, unknown>): void {
      const req = JSON.stringify(pageRequest(origin, c)).slice(0, 600);
      if (c.kind !== 'account') assert.equal(c.origin?.trim(), origin, `accepted without our Origin: ${req}`);
      if (c.kind === 'disconnect') {
        // The body names the client; the session (whichever of the two sent) names the borrower.
        assert.ok([...sessions.values()].some((t) => (c.cookie ?? '').includes(t)), `disconnected without a session: ${req}`);
        assert.equal(json.client_id, (JSON.parse(c.body as string) as { client_id: unknown }).client_id, `the answer names another client than the body: ${req}`);
        return;
      }
      const actedFor = c.kind === 'account' ? (json.borrower_id as string) : ownerOf.get(c.id.toLowerCase());
      assert.ok(actedFor, `accepted for an id that is nobody's: ${req}`);
      const token = sessions.get(actedFor);
      assert.ok(token && (c.cookie ?? '').includes(token), `acted for ${actedFor} without their session: ${req}`);
      const named = (json.key_id ?? json.operational_agent_id) as string | undefined;
      if (named !== undefined) assert.equal(named, c.id.toLowerCase(), `the answer names another id than the path: ${req}`);
    }

    it(`lowering a limit and reading the account: ${CASES} bodies, ids, Origins and cookies; only a wallet-signed lower grant replaces one`, async function () {
      const before = await snapshot(w, scope);
      const stateBefore = await agentState(w, scope.borrowerIds);
      const tally = new Tally();
      const own = sessions.get(b.borrowerId) as string;
      const lower = { per_payment_limit: '500000000', daily_limit: '900000000000' };
      const lowerStill = { per_payment_limit: '400000000', daily_limit: '800000000000' };
      const signed = await signedLimits(origin, own, b, lower);
      const accepted: { id: string; nonce: string; limits: string }[] = [];
      const common = { id: idArb(), suffix, contentType, origin: originHeader(origin), cookie: cookieHeader(own, sessions.get(other.borrowerId) as string, signedOut) };
      const arb: fc.Arbitrary<PageCase> = fc.oneof(
        // Lower again than the grant the example below installs, so an untouched body is a valid request.
        fc.record({ kind: fc.constant('typed-data' as const), method: pageMethod, body: bodyTextOf(lowerStill), ...common }),
        fc.record({ kind: fc.constant('limits' as const), method: pageMethod, body: bodyTextOf(signed), ...common }),
        fc.record({ kind: fc.constant('account' as const), method: fc.constantFrom('GET', 'GET', 'GET', 'POST'), ...common }),
      );
      // First, as one concurrent batch: the real signed grant twice (one may win) and its near misses.
      const exact: PageCase = { kind: 'limits', method: 'POST', id: b.agentKeyId, suffix: '', body: JSON.stringify(signed), contentType: 'application/json', origin, cookie: `borrower_session=${own}` };
      const examples: PageCase[] = [
        exact,
        exact,
        { ...exact, id: other.agentKeyId },
        { ...exact, cookie: `borrower_session=${sessions.get(other.borrowerId)}` },
        { ...exact, origin: 'https://evil.example' },
        { ...exact, body: JSON.stringify({ ...signed, per_payment_limit: '500000001' }) },
        { ...exact, body: JSON.stringify({ ...signed, signature: signed.signature.toUpperCase().replace('0X', '0x') }) },
        { ...exact, body: JSON.stringify({ ...signed, per_payment_limit: '0x1' }) },
        { ...exact, kind: 'typed-data', body: JSON.stringify(lowerStill) },
      ];
      await fuzzCases(
        arb,
        async (c) => {
          const req = pageRequest(origin, c);
          const a = await send(req);
          const { code, json } = checkRestAnswer(req, a, ANSWER[c.kind], PAGE);
          if (!code) {
            assertAcceptedFairly(c, json as Record<string, unknown>);
            if (c.kind === 'limits') {
              const answer = json as z.infer<typeof LimitsAnswer>;
              accepted.push({ id: answer.key_id, nonce: JSON.parse(c.body as string).nonce.toLowerCase(), limits: `${answer.per_payment_limit}/${answer.daily_limit}` });
            }
          }
          tally.add(`${c.kind}:${code ? `${a.status}:${code}` : '200'}`);
        },
        { cases: CASES, examples },
      );
      console.log(`      page limit outcomes: ${tally}`);
      tally.assertReached(['limits:200', 'typed-data:200', 'account:200', 'limits:400:INVALID_REQUEST', 'limits:404:NOT_FOUND', 'limits:403:FORBIDDEN', 'limits:401:UNAUTHENTICATED']);
      assert.equal(accepted.length, 1, `exactly one grant replacement was accepted: ${JSON.stringify(accepted)}`);
      const after = await agentState(w, scope.borrowerIds);
      for (const [id, was] of stateBefore.keys) {
        const now = after.keys.get(id);
        const replaced = accepted.find((x) => x.id === id);
        if (replaced) assert.deepEqual(now, { ...was, grantNonce: replaced.nonce, limits: replaced.limits });
        else assert.deepEqual(now, was, `key ${id} changed without an accepted request`);
      }
      assert.deepEqual(after.agents, stateBefore.agents, 'no agent revoked');
      assertCopiesMatch(after);
      await assertOnlyExpected(w, scope, before, new Expected());
    });

    it(`revoking a key or an agent, disconnecting an app: ${CASES} bodies, ids, Origins and cookies; only what an accepted request named is revoked or ended`, async function () {
      const before = await snapshot(w, scope);
      const stateBefore = await agentState(w, scope.borrowerIds);
      const tally = new Tally();
      const own = sessions.get(b.borrowerId) as string;
      const revokedKeys = new Set<string>();
      const revokedAgents = new Set<string>();
      const disconnected = new Set<string>();
      // OAuth grants to disconnect: two clients of b's, one shared with the other borrower and the bystander, one only the bystander has.
      const [shared, mine, bystanders] = ['fuzz-client-shared', 'https://agent.example.com/fuzz-client.json', 'fuzz-client-bystander'];
      const grants = [
        { borrowerId: b.borrowerId, clientId: shared },
        { borrowerId: b.borrowerId, clientId: mine },
        { borrowerId: other.borrowerId, clientId: shared },
        { borrowerId: bystander.borrowerId, clientId: shared },
        { borrowerId: bystander.borrowerId, clientId: bystanders },
      ];
      const grantIds = await Promise.all(grants.map((g) => storeGrant(w, g.borrowerId, g.clientId, ['borrower:token'])));
      const common = { id: idArb(), suffix, contentType, origin: originHeader(origin), cookie: cookieHeader(own, sessions.get(other.borrowerId) as string, signedOut) };
      const body = fc.oneof({ weight: 3, arbitrary: bodyTextOf({}) }, { weight: 1, arbitrary: nastyValue.map(toJsonText) }, { weight: 1, arbitrary: fc.constant(undefined) });
      const clientArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(shared, mine, bystanders) }, { weight: 1, arbitrary: nastyString.filter((s) => s.length < 300) });
      const disconnectCase = fc
        .record({ clientId: clientArb, method: pageMethod, suffix, contentType, origin: common.origin, cookie: common.cookie })
        .chain((r) => bodyTextOf({ client_id: r.clientId }).map((text): PageCase => ({ kind: 'disconnect', id: r.clientId, body: text, method: r.method, suffix: r.suffix, contentType: r.contentType, origin: r.origin, cookie: r.cookie })));
      const arb: fc.Arbitrary<PageCase> = fc.oneof(
        { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('revoke-key' as const, 'revoke-agent' as const), method: pageMethod, body, ...common }) },
        { weight: 1, arbitrary: disconnectCase },
      );
      // First, as one concurrent batch: the same revocation twice, the other borrower's agent by
      // their own session, and near misses that must change nothing.
      const revokeOwnKey: PageCase = { kind: 'revoke-key', method: 'POST', id: b.agentKeyId, suffix: '', body: '{}', contentType: 'application/json', origin, cookie: `borrower_session=${own}` };
      const othersSession = `borrower_session=${sessions.get(other.borrowerId)}`;
      const examples: PageCase[] = [
        revokeOwnKey,
        revokeOwnKey,
        { ...revokeOwnKey, kind: 'revoke-agent', id: other.operationalAgentId, cookie: othersSession },
        { ...revokeOwnKey, id: bystander.agentKeyId },
        { ...revokeOwnKey, kind: 'revoke-agent', id: bystander.operationalAgentId, cookie: `${othersSession}; borrower_session=${own}` },
        { ...revokeOwnKey, kind: 'revoke-agent', id: b.operationalAgentId, origin: undefined },
        { ...revokeOwnKey, kind: 'revoke-agent', id: b.operationalAgentId, body: '{"__proto__":{}}' },
        { ...revokeOwnKey, kind: 'disconnect', id: mine, body: JSON.stringify({ client_id: mine }) },
        { ...revokeOwnKey, kind: 'disconnect', id: mine, body: JSON.stringify({ client_id: mine }) },
        { ...revokeOwnKey, kind: 'disconnect', id: bystanders, body: JSON.stringify({ client_id: bystanders }) },
        { ...revokeOwnKey, kind: 'disconnect', id: shared, body: JSON.stringify({ client_id: shared }), origin: 'https://evil.example' },
        { ...revokeOwnKey, kind: 'disconnect', id: shared, body: JSON.stringify({ client_id: shared, extra: 1 }) },
      ];
      await fuzzCases(arb, async (c) => {
        const req = pageRequest(origin, c);
        const a = await send(req);
        const { code, json } = checkRestAnswer(req, a, ANSWER[c.kind], PAGE);
        if (!code) {
          assertAcceptedFairly(c, json as Record<string, unknown>);
          if (c.kind === 'revoke-key') revokedKeys.add((json as z.infer<typeof RevokeKeyAnswer>).key_id);
          else if (c.kind === 'disconnect') disconnected.add((json as z.infer<typeof DisconnectAnswer>).client_id);
          else {
            const answer = json as z.infer<typeof RevokeAgentAnswer>;
            revokedAgents.add(answer.operational_agent_id);
            for (const k of answer.revoked_key_ids) revokedKeys.add(k);
          }
        }
        const done = c.kind === 'disconnect' ? 'disconnected' : (json as { changed: boolean }).changed ? 'changed' : 'unchanged';
        tally.add(`${c.kind}:${code ? `${a.status}:${code}` : `200:${done}`}`);
      }, { cases: CASES, examples });
      console.log(`      page revoke outcomes: ${tally}`);
      tally.assertReached(['revoke-key:200:changed', 'revoke-key:200:unchanged', 'revoke-agent:200:changed', 'revoke-key:404:NOT_FOUND', 'revoke-agent:404:NOT_FOUND', 'revoke-key:403:FORBIDDEN', 'revoke-key:401:UNAUTHENTICATED', 'revoke-key:400:INVALID_REQUEST', 'disconnect:200:disconnected', 'disconnect:404:NOT_FOUND', 'disconnect:403:FORBIDDEN', 'disconnect:400:INVALID_REQUEST']);
      const after = await agentState(w, scope.borrowerIds);
      for (const [id, was] of stateBefore.keys) {
        const want = revokedKeys.has(id) ? { ...was, status: 'revoked' } : was;
        assert.deepEqual(after.keys.get(id), want, `key ${id}`);
      }
      for (const [id, was] of stateBefore.agents) assert.deepEqual(after.agents.get(id), revokedAgents.has(id) ? { ...was, revoked: true } : was, `agent ${id}`);
      assertCopiesMatch(after);
      assert.equal(after.keys.get(bystander.agentKeyId)?.status, 'active', 'a borrower whose session was never sent keeps their key');
      const left = new Set((await w.store.db.collection<{ _id: string }>('oauth_grant').find({ _id: { $in: grantIds } }).toArray()).map((g) => g._id));
      for (const [i, g] of grants.entries()) {
        const gone = !left.has(grantIds[i] as string);
        if (g.borrowerId === bystander.borrowerId) assert.ok(!gone, `the bystander's grant of ${g.clientId} was ended`);
        else if (gone) assert.ok(disconnected.has(g.clientId), `${g.clientId}'s grant ended without an accepted disconnect`);
      }
      for (const clientId of disconnected) {
        assert.ok(grants.some((g, i) => g.clientId === clientId && g.borrowerId !== bystander.borrowerId && !left.has(grantIds[i] as string)), `${clientId} was disconnected but no grant of it ended`);
      }
      await assertOnlyExpected(w, scope, before, new Expected());
    });
  });

  describe('OAuth', function () {
    const ALLOWED_HOSTS = ['agent.example.com'];
    const NATIVE = {
      client_name: 'Fuzz agent host',
      application_type: 'native',
      redirect_uris: ['http://127.0.0.1:43999/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    const WEB = { ...NATIVE, client_name: 'Fuzz web host', application_type: 'web', redirect_uris: ['https://agent.example.com/cb'] };
    const APPLICATION_TYPES: unknown[] = [
      'native', 'web', 'NATIVE', 'Web', '', ' native', 'native ', 'desktop', 'browser', 'native web', 'native\u0000', null, 1, true, [], ['native'], {}, { type: 'native' }, 'x'.repeat(2_000),
    ];
    const REDIRECTS = [
      'http://127.0.0.1:43999/callback', 'http://localhost:1/cb', 'http://[::1]:8080/cb', 'https://agent.example.com/cb', 'https://AGENT.example.com/cb', 'https://evil.example/cb',
      'http://agent.example.com/cb', 'https://127.0.0.1/cb', 'com.example.app:/cb', 'http://127.0.0.1:1/cb#frag', 'http://user:pw@127.0.0.1/cb', 'javascript:alert(1)',
      'data:text/html,x', '//127.0.0.1/cb', 'http://127.0.0.1.evil.example/cb', 'http://0x7f000001/cb', 'http://127.1/cb', '', 'http://127.0.0.1:99999/cb',
      'http://[::ffff:127.0.0.1]/cb', 'http://localhost./cb', 'https://agent.example.com.evil.example/cb', 'https://agent.example.com@evil.example/cb',
    ];
    const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt', 'tls_client_auth', 'NONE', ''];

    // Public clients only: whatever the document asked for, an accepted one authenticates with "none" and gets no secret.
    const RegisteredClient = z.looseObject({
      client_id: z.string().min(1),
      redirect_uris: z.array(z.string()),
      application_type: z.enum(['web', 'native']),
      token_endpoint_auth_method: z.literal('none'),
      client_secret: z.never().optional(),
    });

    it(`POST /oauth/reg: ${CASES} documents with mutated application_type, redirect_uris and auth method; never a 5xx, refusals are OAuth errors and store nothing`, async function () {
      const clients = w.store.db.collection('oauth_client');
      const countBefore = await clients.countDocuments();
      const tally = new Tally();
      let registered = 0;
      const field = <T>(values: readonly T[]) => fc.option(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: nastyValue }), { nil: undefined, freq: 5 });
      const fieldwise = fc
        .record({
          base: fc.constantFrom(NATIVE, WEB),
          application_type: field(APPLICATION_TYPES),
          redirect_uris: field([...REDIRECTS.map((r) => [r]), REDIRECTS.slice(0, 3), [REDIRECTS[0], REDIRECTS[5]], []]),
          token_endpoint_auth_method: field(AUTH_METHODS),
          drop: fc.subarray(['application_type', 'redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'response_types']),
        })
        .map(({ base, drop, ...fields }) => {
          const doc: Record<string, unknown> = { ...base };
          for (const [k, v] of Object.entries(fields)) if (v !== undefined) doc[k] = v;
          for (const k of drop) delete doc[k];
          return toJsonText(doc);
        });
      const arb = fc.record({
        body: fc.oneof({ weight: 3, arbitrary: fieldwise }, { weight: 1, arbitrary: fc.constantFrom(NATIVE, WEB).chain((base) => bodyTextOf(base)) }),
        contentType: fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: contentType }),
      });
      await fuzzCases(arb, async (c) => {
        const req: RawRequest = { method: 'POST', url: `${origin}/oauth/reg`, headers: c.contentType === undefined ? {} : { 'content-type': c.contentType }, body: c.body };
        const a = await send(req);
        const { error, json } = checkOAuthJsonAnswer(req, a, RegisteredClient);
        if (error) {
          assert.ok([400, 429].includes(a.status), `${a.status} for ${error}: ${c.body.slice(0, 300)}`);
          tally.add(`${a.status}:${error}`);
          return;
        }
        assert.equal(a.status, 201, a.text.slice(0, 300));
        const client = json as z.infer<typeof RegisteredClient>;
        for (const uri of client.redirect_uris) assert.equal(redirectUriProblem(uri, ALLOWED_HOSTS), null, `registered ${uri}: ${c.body.slice(0, 300)}`);
        registered++;
        tally.add(`201:${client.application_type}`);
      }, { cases: CASES });
      console.log(`      registration outcomes: ${tally}`);
      tally.assertReached(['201:native', '201:web', '400:invalid_client_metadata', '400:invalid_redirect_uri']);
      assert.equal(await clients.countDocuments(), countBefore + registered, 'only accepted registrations are stored');
    });

    it(`GET /oauth/auth: ${CASES} client_ids (DCR ids, https metadata document URLs, junk) and parameters; never a 5xx, never a redirect off the registered URIs`, async function () {
      const redirectUri = 'http://127.0.0.1:43999/callback';
      const clientId = await registerLoopbackClient(origin, redirectUri, 'Fuzz authorization host');
      const { challenge } = pkcePair();
      const mcp = `${origin}/mcp`;
      const port = new URL(origin).port;
      const hosts = ['127.0.0.1', `127.0.0.1:${port}`, 'localhost', '[::1]', '10.0.0.1', '169.254.169.254', '[::ffff:127.0.0.1]', '0x7f000001', '2130706433', 'cimd.invalid', 'agent.example', 'xn--nxasmq6b.invalid'];
      const cimdUrls = [
        `https://127.0.0.1:${port}/agent.json`, 'https://localhost/agent.json', 'https://169.254.169.254/latest/meta-data', 'https://cimd.invalid/agent.json', 'https://user:pw@cimd.invalid/a.json',
        'https://cimd.invalid/a.json#frag', 'https://cimd.invalid/a.json?x=1', 'https://cimd.invalid', 'https://cimd.invalid/', 'https://', 'https:///a.json', 'HTTPS://cimd.invalid/a.json',
        'http://cimd.invalid/a.json', `https://cimd.invalid/${'a'.repeat(3_000)}`, 'https://cimd.invalid/%zz', 'https://cimd.invalid/../a.json', 'https://cimd.invalid:0/a.json',
        'https://cimd.invalid:99999/a.json', 'https://é.invalid/a.json', 'https://cimd.invalid/a.json\u0000',
      ];
      const clientIdArb = fc.oneof(
        { weight: 4, arbitrary: fc.constant(clientId) },
        { weight: 1, arbitrary: fc.constantFrom(clientId.toUpperCase(), clientId.slice(0, -1), `${clientId} `, `${clientId}x`) },
        { weight: 4, arbitrary: fc.constantFrom(...cimdUrls) },
        { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...hosts), nastyString.filter((s) => s.length < 300)).map(([h, s]) => `https://${h}/${s}`) },
        { weight: 2, arbitrary: nastyString.filter((s) => s.length < 3_000) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      const optional = <T>(usual: T, others: fc.Arbitrary<T | undefined>) => fc.oneof({ weight: 6, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: others });
      const arb = fc.record({
        client_id: clientIdArb,
        redirect_uri: optional<string>(redirectUri, fc.oneof(fc.constantFrom(undefined, 'http://127.0.0.1:1/other', 'https://evil.example/cb', `${redirectUri}#x`, `${redirectUri}?a=1`), nastyString.filter((s) => s.length < 300))),
        response_type: optional<string>('code', fc.constantFrom(undefined, 'token', 'code id_token', '', 'CODE', 'none')),
        scope: optional<string>('borrower:token', fc.oneof(fc.constantFrom(undefined, '', 'openid', 'admin'), nastyString.filter((s) => s.length < 300))),
        code_challenge: optional<string>(challenge, fc.constantFrom(undefined, '', 'short', 'x'.repeat(200))),
        code_challenge_method: optional<string>('S256', fc.constantFrom(undefined, 'plain', 's256', '')),
        resource: optional<string>(mcp, fc.constantFrom(undefined, `${origin}/other`, 'https://evil.example/mcp', 'not a url')),
        extra: fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('&client_id=other', '&client_id=', '&request=eyJ9', '&request_uri=https://evil.example/r', '&prompt=none', '&response_mode=query', '&%zz=1') }),
      });
      const tally = new Tally();
      await fuzzCases(arb, async ({ extra, ...params }) => {
        const q = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${percentEncode(v as string)}`).join('&');
        const req: RawRequest = { method: 'GET', url: `${origin}/oauth/auth?${q}${extra}`, headers: {} };
        const a = await send(req);
        const outcome = checkAuthorizationAnswer(req, a, { origin, registeredRedirects: [redirectUri] });
        const cimd = typeof params.client_id === 'string' && /^https:\/\//i.test(params.client_id);
        if (outcome === 'interaction') assert.ok(!cimd, `a metadata document URL this stack cannot fetch reached sign-in: ${JSON.stringify(req)}`);
        tally.add(`${cimd ? 'cimd' : 'other'}:${outcome}`);
      }, { cases: CASES });
      console.log(`      authorization outcomes: ${tally}`);
      tally.assertReached(['other:interaction', 'other:redirect:invalid_request', 'cimd:page:invalid_client', 'other:page:invalid_client']);
      // Without the test CA setting a loopback metadata document is never fetched, and the page says why.
      const loopback = await send({ method: 'GET', url: `${origin}/oauth/auth?client_id=${percentEncode(`https://127.0.0.1:${port}/agent.json`)}&response_type=code&redirect_uri=${percentEncode(redirectUri)}`, headers: {} });
      assert.equal(loopback.status, 400);
      assert.match(loopback.text, /invalid_client: .*non-public address/);
    });
  });
});
