import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { TOOLS } from '../../src/mcp/tools/index.js';
import type { ToolDefinition } from '../../src/mcp/tools/define.js';
import { mcpUrl } from '../../src/config/env.js';
import { spendDayId, utcDay } from '../../src/domain/agent-policy.js';
import { SCOPES, type ToolName } from '@credit-facilitator/wire/onboarding';
import { encodeKey, generateAgentKeyPair } from '@credit-facilitator/wire/voucher';
import { findOrCreateBorrowerByWallet } from '../../src/store/borrowers.js';
import { onboardingWorkflowId } from '../../src/temporal/agent-definitions.js';
import { mintBorrowerToken } from '../helpers/borrower-token.js';
import { checkMcpAnswer, send, Tally, type RawRequest } from '../helpers/fuzz-checks.js';
import { assertConsistent, assertOnlyExpected, Expected, snapshot, type CollectionName, type FuzzScope, type Snapshot } from '../helpers/fuzz-state.js';
import { bodyTextOf, CASES, contentType, fuzzCases, headerJunk, mutantOf, toJsonText } from '../helpers/fuzz.js';
import { agentDeps, paymentRequiredHeader } from '../helpers/onboarding.js';
import { capture, newBorrower, newMerchant, newVoucher, pollUntil, UNTHROTTLED, world, type TestBorrower, type TestMerchant, type World } from '../helpers/world.js';

const ACCEPT = 'application/json, text/event-stream';
/** Stands in for the idempotency key in the base arguments; each case swaps in a fresh one. */
const KEY_SLOT = '5b0e7c1e-0000-4000-8000-00000000f00d';
const DEBT = 5_000_000;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const toolNamed = (name: string): ToolDefinition | undefined => TOOLS.find((t) => t.name === name);

/** Long-polls add waiting, not coverage: a valid wait_seconds becomes 0. */
function noLongPoll(v: unknown): unknown {
  if (isObj(v) && typeof v.wait_seconds === 'number' && Number.isInteger(v.wait_seconds) && v.wait_seconds > 0 && v.wait_seconds <= 25) v.wait_seconds = 0;
  return v;
}

function withKey(args: unknown, key: string): unknown {
  if (isObj(args) && args.idempotency_key === KEY_SLOT) args.idempotency_key = key;
  return args;
}

function mcpRequest(url: string, body: string, headers: Record<string, string | undefined>, method = 'POST'): RawRequest {
  const sent = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== undefined));
  return { method, url, headers: sent, body };
}

interface Caller {
  borrowerId: string;
  token: string;
}

/** The tools/call requests of a JSON-RPC message or batch, by id, with their tool definitions. */
function toolCallsOf(text: string): Map<string | number, ToolDefinition | undefined> {
  const out = new Map<string | number, ToolDefinition | undefined>();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return out;
  }
  for (const m of Array.isArray(body) ? body : [body]) {
    if (isObj(m) && m.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number')) {
      out.set(m.id, isObj(m.params) && typeof m.params.name === 'string' ? toolNamed(m.params.name) : undefined);
    }
  }
  return out;
}

function argsOf(text: string, id: string | number): Record<string, unknown> {
  const body = JSON.parse(text) as unknown;
  const m = (Array.isArray(body) ? body : [body]).find((x) => isObj(x) && x.id === id) as { params?: { arguments?: unknown } };
  return isObj(m?.params?.arguments) ? m.params.arguments : {};
}

/** What a successful call may create: the ids its answer names, and the claim of its idempotency key. */
function expectFrom(tool: string, borrowerId: string, args: Record<string, unknown>, result: Record<string, unknown>, expected: Expected): void {
  const key = typeof args.idempotency_key === 'string' ? args.idempotency_key.toLowerCase() : undefined;
  if (key) expected.add('toolIdempotency', `${borrowerId}:${key}`);
  switch (tool as ToolName) {
    case 'register_borrower':
      expected.add('operationalAgents', String(result.operational_agent_id));
      expected.add('workflows', onboardingWorkflowId(borrowerId));
      break;
    case 'accept_credit_facility':
    case 'register_agent_key':
    case 'rotate_agent_key':
    case 'execute_repayment':
      expected.add('signingRequests', String(result.signing_request_id));
      break;
    case 'prepare_x402_payment': {
      const voucher = result.voucher as { merchantId: string; orderRef: string };
      expected.spendIntent(String(result.spend_intent_id));
      expected.add('toolIdempotency', `${borrowerId}:order:${voucher.merchantId}:${voucher.orderRef}`);
      break;
    }
    default:
      break;
  }
}

describe('fuzz: every MCP tool and the JSON-RPC envelope on the real stack', function () {
  this.timeout(900_000);
  let w: World;
  let url: string;
  let ownOrigin: string;
  let merchant: TestMerchant;
  let active: TestBorrower;
  /** ACTIVE, with booked debt so execute_repayment reaches its write path. */
  let a: Caller;
  /** Signed in only: register_borrower's first success moves it on. */
  let r: Caller;
  /** Signed in only, for raw JSON-RPC junk. */
  let j: Caller;
  let scope: FuzzScope;

  async function signedIn(): Promise<Caller> {
    const b = await findOrCreateBorrowerByWallet(w.store.c, privateKeyToAddress(generatePrivateKey()), randomUUID(), new Date());
    return { borrowerId: b._id, token: await mintBorrowerToken(w, { borrowerId: b._id, scopes: [...SCOPES], expiresIn: 3600 }) };
  }

  before(async function () {
    w = await world();
    url = mcpUrl(w.cli.env);
    ownOrigin = new URL(url).origin;
    merchant = await newMerchant(w, 'Fuzz MCP Merchant', { rateLimits: UNTHROTTLED });
    active = await newBorrower(w);
    const v = await newVoucher(w, merchant, active, String(DEBT), { orderRef: 'fuzz-debt' });
    const paid = await capture(w, merchant, v.captureBody);
    assert.equal(paid.status, 200, JSON.stringify(paid.json));
    await pollUntil(w, merchant, paid.json.receipt.paymentId as string, 'CONFIRMED');
    const deadline = Date.now() + 20_000;
    while ((await w.store.c.borrowers.findOne({ _id: active.borrowerId }))?.debt !== DEBT) {
      assert.ok(Date.now() < deadline, 'the debt was booked');
      await new Promise((res) => setTimeout(res, 200));
    }
    a = { borrowerId: active.borrowerId, token: await mintBorrowerToken(w, { borrowerId: active.borrowerId, scopes: [...SCOPES], expiresIn: 3600 }) };
    [r, j] = await Promise.all([signedIn(), signedIn()]);
    scope = { merchantIds: [merchant.merchantId], borrowerIds: [a.borrowerId, r.borrowerId, j.borrowerId] };
  });

  /** Runs the cases, checks every answer, and records what the successful calls may have created. */
  async function fuzzMcp(
    name: string,
    arb: fc.Arbitrary<RawRequest>,
    caller: Caller,
    examples: RawRequest[] = [],
    check: (req: RawRequest, answer: Awaited<ReturnType<typeof send>>, httpCode: string | undefined) => void = () => undefined,
  ): Promise<{ tally: Tally; before: Snapshot; expected: Expected }> {
    const before = await snapshot(w, scope);
    const tally = new Tally();
    const expected = new Expected();
    await fuzzCases(arb, async (req) => {
      const answer = await send(req);
      const calls = toolCallsOf(req.body ?? '');
      const out = checkMcpAnswer(req, answer, calls);
      check(req, answer, out.httpCode);
      if (out.httpCode) tally.add(`${answer.status}:${out.httpCode}`);
      else if (out.outcomes.size === 0) tally.add(String(answer.status));
      for (const outcome of out.outcomes.values()) tally.add(outcome);
      for (const [id, result] of out.results) {
        const tool = id === null ? undefined : calls.get(id);
        if (tool && id !== null) expectFrom(tool.name, caller.borrowerId, argsOf(req.body ?? '', id), result, expected);
      }
    }, { examples });
    console.log(`      ${name} outcomes: ${tally}`);
    return { tally, before, expected };
  }

  /** Signing requests the run created for repayments bring their repayment document. */
  async function expectRepayments(expected: Expected): Promise<void> {
    const ids = [...(expected.ids.get('signingRequests') ?? [])];
    for (const doc of await w.store.c.signingRequests.find({ _id: { $in: ids }, kind: 'repayment' }).toArray()) expected.add('repayments', String(doc.action.repaymentId));
  }

  function toolRequest(tool: ToolName, args: unknown, caller: Caller): RawRequest {
    const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, ...(args === undefined ? {} : { arguments: args }) } };
    return mcpRequest(url, toJsonText(message), { authorization: `Bearer ${caller.token}`, accept: ACCEPT, 'content-type': 'application/json' });
  }

  function toolCase(tool: ToolName, base: Record<string, unknown>, caller: Caller, adjust: (args: unknown, flip: boolean) => unknown = (x) => x): fc.Arbitrary<RawRequest> {
    const args = fc.oneof(
      { weight: 14, arbitrary: fc.tuple(mutantOf(base, noLongPoll), fc.uuid({ version: 4 }), fc.boolean()).map(([x, key, flip]) => adjust(withKey(x, key), flip)) },
      { weight: 2, arbitrary: fc.tuple(fc.uuid({ version: 4 }), fc.boolean()).map(([key, flip]) => adjust(withKey(structuredClone(base), key), flip)) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
    return args.map((x) => toolRequest(tool, x, caller));
  }

  interface ToolFuzzOptions {
    /** Rewrites a case's arguments; `flip` is a free coin for it. */
    adjust?: (args: unknown, flip: boolean) => unknown;
    /** Collections where the run may, but need not, add the ids `allow` names. */
    allow?: (expected: Expected) => CollectionName[];
    /** Hand-written arguments run before the generated ones. */
    examples?: unknown[];
  }

  async function fuzzTool(tool: ToolName, base: Record<string, unknown>, caller: Caller, opts: ToolFuzzOptions = {}): Promise<Tally> {
    const examples = (opts.examples ?? []).map((args) => toolRequest(tool, args, caller));
    const { tally, before, expected } = await fuzzMcp(tool, toolCase(tool, base, caller, opts.adjust), caller, examples);
    await expectRepayments(expected);
    const loose = opts.allow?.(expected) ?? [];
    await assertOnlyExpected(w, scope, before, expected, { loose });
    for (const b of scope.borrowerIds) await assertConsistent(w, b);
    tally.assertReached(['input_validation']);
    return tally;
  }

  const newPublicKey = () => encodeKey(generateAgentKeyPair().publicKey);
  const inADay = () => Math.floor(Date.now() / 1000) + 86_400;

  it(`register_borrower: ${CASES} argument mutants`, async function () {
    const tally = await fuzzTool('register_borrower', { idempotency_key: KEY_SLOT, terminal_label: 'fuzz host' }, r);
    tally.assertReached(['ok']);
  });

  it(`get_borrower_status: ${CASES} argument mutants`, async function () {
    const tally = await fuzzTool('get_borrower_status', { operational_agent_id: active.operationalAgentId }, a);
    tally.assertReached(['ok', 'NOT_FOUND']);
  });

  it(`accept_credit_facility: ${CASES} argument mutants`, async function () {
    const tally = await fuzzTool('accept_credit_facility', { idempotency_key: KEY_SLOT, wait_seconds: 0 }, a);
    tally.assertReached(['STAGE_REQUIRED']);
  });

  it(`register_agent_key: ${CASES} argument mutants`, async function () {
    const base = { idempotency_key: KEY_SLOT, operational_agent_id: active.operationalAgentId, public_key: newPublicKey(), per_payment_limit: '1000000', daily_limit: '5000000', expires_at: inADay(), wait_seconds: 0 };
    const tally = await fuzzTool('register_agent_key', base, a);
    tally.assertReached(['AGENT_KEY_EXISTS']);
  });

  it(`rotate_agent_key: ${CASES} argument mutants`, async function () {
    const base = { idempotency_key: KEY_SLOT, operational_agent_id: active.operationalAgentId, public_key: newPublicKey(), per_payment_limit: '1000000', daily_limit: '5000000', expires_at: inADay(), wait_seconds: 0 };
    // Random mutants reach INVALID_INPUT a few times in 2000 (none in about one run in a hundred): one case that must.
    const pastExpiry = { ...base, idempotency_key: randomUUID(), public_key: newPublicKey(), expires_at: Math.floor(Date.now() / 1000) - 60 };
    const tally = await fuzzTool('rotate_agent_key', base, a, { examples: [pastExpiry] });
    tally.assertReached(['ok', 'INVALID_INPUT']);
  });

  it(`claim_handle: ${CASES} argument mutants`, async function () {
    const tally = await fuzzTool('claim_handle', { idempotency_key: KEY_SLOT, handle: active.handle }, a);
    tally.assertReached(['ok', 'INVALID_INPUT']);
  });

  it(`prepare_x402_payment: ${CASES} argument mutants (header string and decoded object)`, async function () {
    const deps = await agentDeps(w);
    const required = decodePaymentRequiredHeader(paymentRequiredHeader(deps, merchant, '1000', 'fuzz-order')) as unknown as Record<string, unknown>;
    const base = { payment_required: required, order_ref: 'fuzz-order', operational_agent_id: active.operationalAgentId, idempotency_key: KEY_SLOT };
    // Half the cases send the (mutated) PAYMENT-REQUIRED object as the base64 header value instead.
    const encode = (args: unknown, flip: boolean) =>
      flip && isObj(args) && isObj(args.payment_required) ? { ...args, payment_required: Buffer.from(toJsonText(args.payment_required)).toString('base64') } : args;
    const started = Date.now();
    // The first charge of a UTC day creates that day's spend record for the agent key, even when the payment is then refused.
    const spendDays = (e: Expected): CollectionName[] => {
      for (const t of [started, Date.now()]) e.add('agentSpendDays', spendDayId(active.agentKeyId, utcDay(t)));
      return ['agentSpendDays'];
    };
    const accepted = (required.accepts as Record<string, unknown>[])[0] as Record<string, unknown>;
    const order = (ref: string, amount: string, extra = '{}') => ({
      ...base,
      idempotency_key: randomUUID(),
      order_ref: ref,
      payment_required: { ...required, accepts: [{ ...accepted, amount, extra: { ...(accepted.extra as object), ...(JSON.parse(extra) as object) } }] },
    });
    const examples = [
      // Valid payments whose merchant extra carries keys a document store may choke on ($-operators, dots, __proto__).
      ...['{"$where":"sleep(100)"}', '{"a.b":1,"$set":{"x":1}}', '{"__proto__":{"polluted":true}}', '{"":{"$gt":""}}'].map((e, i) => order(`fuzz-hostile-${i}`, '1000', e)),
      // Four concurrent orders where only two fit in the credit line: the others are refused, some after their expiry workflow started.
      ...[0, 1, 2, 3].map((i) => order(`fuzz-big-${i}`, '400000000')),
    ];
    const tally = await fuzzTool('prepare_x402_payment', base, a, { adjust: encode, allow: spendDays, examples });
    tally.assertReached(['ok', 'INVALID_INPUT', 'INSUFFICIENT_CREDIT', 'POLICY_DENIED:recipient_mismatch', 'POLICY_DENIED:unknown_merchant']);
  });

  it(`execute_repayment: ${CASES} argument mutants`, async function () {
    const tally = await fuzzTool('execute_repayment', { idempotency_key: KEY_SLOT, amount: '1000', wait_seconds: 0 }, a);
    tally.assertReached(['ok', 'INVALID_INPUT']);
  });

  it(`raw JSON-RPC: ${CASES} broken envelopes, batches, methods and headers`, async function () {
    const call = (id: number | string, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const envelopes = [
      call(1, 'get_borrower_status', {}),
      call(2, 'register_borrower', { idempotency_key: KEY_SLOT }),
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'p', method: 'ping' },
      { jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [call(5, 'get_borrower_status', {}), { jsonrpc: '2.0', id: 6, method: 'tools/list' }],
    ];
    const expired = await mintBorrowerToken(w, { borrowerId: j.borrowerId, scopes: [...SCOPES], expiresIn: -120 });
    const arb = fc
      .record({
        body: fc.constantFrom(...envelopes).chain((e) => bodyTextOf(e)),
        method: fc.oneof({ weight: 20, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH') }),
        contentType,
        accept: fc.oneof({ weight: 10, arbitrary: fc.constant(ACCEPT) }, { weight: 2, arbitrary: fc.constantFrom(undefined, 'application/json', 'text/event-stream', '*/*', 'text/html') }, { weight: 1, arbitrary: headerJunk }),
        protocol: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', '') }, { weight: 1, arbitrary: headerJunk }),
        origin: fc.oneof(
          { weight: 14, arbitrary: fc.constant(undefined) },
          { weight: 2, arbitrary: fc.constantFrom(ownOrigin, 'https://evil.example', 'null', `${ownOrigin}.evil.example`, ownOrigin.replace('http:', 'https:'), `${ownOrigin}/`, '') },
          { weight: 1, arbitrary: headerJunk },
        ),
        auth: fc.oneof(
          { weight: 14, arbitrary: fc.constant(`Bearer ${j.token}`) },
          { weight: 2, arbitrary: fc.constantFrom(undefined, '', 'Bearer', `Bearer ${expired}`, `Bearer ${merchant.apiKey}`, `bearer ${j.token}`, `Bearer ${j.token}x`, `Basic ${j.token}`) },
          { weight: 1, arbitrary: headerJunk.map((s) => `Bearer ${s}`) },
        ),
      })
      .map(({ body, method, contentType: ct, accept, protocol, auth, origin }) =>
        mcpRequest(url, body, { authorization: auth, accept, 'content-type': ct, 'mcp-protocol-version': protocol, origin }, method),
      );
    // A batch repeating an id once ran both calls and answered only one of them.
    const repeated = [call(7, 'register_borrower', { idempotency_key: randomUUID(), terminal_label: 'twice' }), { jsonrpc: '2.0', id: 7, method: 'ping' }];
    const examples = [mcpRequest(url, JSON.stringify(repeated), { authorization: `Bearer ${j.token}`, accept: ACCEPT, 'content-type': 'application/json' })];
    // A present Origin other than ours is 403 FORBIDDEN before anything else (an oversized header may be refused first).
    const originCheck = (req: RawRequest, answer: { status: number; text: string }, httpCode: string | undefined) => {
      const origin = req.headers.origin?.replace(/^[ \t]+|[ \t]+$/g, '');
      const foreign = origin !== undefined && origin !== '' && origin !== ownOrigin;
      if (foreign) assert.ok(httpCode === 'FORBIDDEN' || httpCode === 'HEADERS_TOO_LARGE', `Origin ${JSON.stringify(origin.slice(0, 80))} answered ${answer.status} ${answer.text.slice(0, 200)}`);
      else assert.notEqual(httpCode, 'FORBIDDEN', `Origin ${JSON.stringify(origin)} was refused: ${answer.text.slice(0, 200)}`);
    };
    const { tally, before, expected } = await fuzzMcp('raw JSON-RPC', arb, j, examples, originCheck);
    await assertOnlyExpected(w, scope, before, expected);
    await assertConsistent(w, j.borrowerId);
    tally.assertReached(['ok', '401:UNAUTHENTICATED', '403:FORBIDDEN', '415:UNSUPPORTED_MEDIA_TYPE', '413:PAYLOAD_TOO_LARGE']);
  });

  it(`raw JSON-RPC at 2026-07-28: ${CASES} envelopes with broken _meta, methods and Mcp-Method / Mcp-Name / version headers`, async function () {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const modern = (id: number | string, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
    const envelopes = [
      modern(1, 'tools/call', { name: 'get_borrower_status', arguments: {} }),
      modern(2, 'tools/call', { name: 'register_borrower', arguments: { idempotency_key: KEY_SLOT } }),
      modern(3, 'tools/list'),
      modern('d', 'server/discover'),
      modern(4, 'no/such_method'),
      modern(5, 'subscriptions/listen', { notifications: { toolsListChanged: true } }),
      modern(6, 'initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: meta } },
    ];
    /** The method and tool name a body names, for headers that agree with it. */
    const namedBy = (text: string): { method?: string; name?: string } => {
      try {
        const m = JSON.parse(text) as unknown;
        if (!isObj(m)) return {};
        const name = isObj(m.params) && typeof m.params.name === 'string' ? m.params.name : undefined;
        return { ...(typeof m.method === 'string' ? { method: m.method } : {}), ...(name !== undefined ? { name } : {}) };
      } catch {
        return {};
      }
    };
    const agreeing = fc.constant('agree' as const);
    const arb = fc
      .record({
        body: fc.constantFrom(...envelopes).chain((e) => bodyTextOf(e)),
        contentType,
        protocol: fc.oneof({ weight: 12, arbitrary: fc.constant('2026-07-28') }, { weight: 2, arbitrary: fc.constantFrom(undefined, '2025-11-25', '2030-01-01', '') }, { weight: 1, arbitrary: headerJunk }),
        mcpMethod: fc.oneof({ weight: 12, arbitrary: agreeing }, { weight: 2, arbitrary: fc.constantFrom(undefined, 'tools/call', 'tools/list', 'server/discover', ' tools/list ') }, { weight: 1, arbitrary: headerJunk }),
        mcpName: fc.oneof({ weight: 12, arbitrary: agreeing }, { weight: 2, arbitrary: fc.constantFrom(undefined, 'register_borrower', 'valueOf', '=?base64?!!?=') }, { weight: 1, arbitrary: headerJunk }),
        origin: fc.oneof({ weight: 14, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(ownOrigin, 'https://evil.example', 'null') }),
        auth: fc.oneof({ weight: 14, arbitrary: fc.constant(`Bearer ${j.token}`) }, { weight: 1, arbitrary: fc.constantFrom(undefined, `Bearer ${merchant.apiKey}`, `Bearer ${j.token}x`) }),
      })
      .map(({ body, contentType: ct, protocol, mcpMethod, mcpName, origin, auth }) => {
        // An agreeing header copies the body's value when node:http can send it (no CR, LF, NUL or beyond Latin-1).
        const raw = namedBy(body);
        const sendable = (v: string | undefined) => (v !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(v) ? v : undefined);
        const named = { method: sendable(raw.method), name: sendable(raw.name) };
        return mcpRequest(url, body, {
          authorization: auth, accept: ACCEPT, 'content-type': ct, 'mcp-protocol-version': protocol, origin,
          'mcp-method': mcpMethod === 'agree' ? named.method : mcpMethod,
          'mcp-name': mcpName === 'agree' ? named.name : mcpName,
        });
      });
    // A valid 2026-07-28 request whose Mcp-Method names another method is refused (400), whatever else it holds
    // (an oversized header, e.g. a long Mcp-Name, is refused first with 431, as in the Origin check above).
    const headerCheck = (req: RawRequest, answer: { status: number; text: string }, httpCode: string | undefined) => {
      const named = namedBy(req.body ?? '');
      const sentMethod = req.headers['mcp-method']?.trim();
      const clean = req.headers.authorization === `Bearer ${j.token}` && req.headers.origin === undefined && req.headers['content-type'] === 'application/json' && req.headers['mcp-protocol-version'] === '2026-07-28';
      if (!clean || named.method === undefined || sentMethod === undefined || sentMethod === named.method || !(req.body ?? '').includes('"_meta"')) return;
      assert.ok(httpCode === 'INVALID_REQUEST' || httpCode === 'PAYLOAD_TOO_LARGE' || httpCode === 'HEADERS_TOO_LARGE' || httpCode === 'INSUFFICIENT_SCOPE', `Mcp-Method ${JSON.stringify(sentMethod.slice(0, 60))} for ${named.method} answered ${answer.status} ${answer.text.slice(0, 200)}`);
    };
    // One hand-written request per outcome asserted below, so the assertion does not hang on a random draw.
    const modernRequest = (body: unknown, headers: Record<string, string | undefined> = {}) =>
      mcpRequest(url, JSON.stringify(body), { authorization: `Bearer ${j.token}`, accept: ACCEPT, 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', ...headers });
    const examples = [
      modernRequest(modern(11, 'tools/call', { name: 'get_borrower_status', arguments: {} }), { 'mcp-method': 'tools/call', 'mcp-name': 'get_borrower_status' }),
      modernRequest(modern(12, 'tools/call', { name: 'register_borrower', arguments: { idempotency_key: 42 } }), { 'mcp-method': 'tools/call', 'mcp-name': 'register_borrower' }),
      modernRequest(modern(13, 'tools/list'), { 'mcp-method': 'tools/call' }),
      modernRequest(modern(14, 'no/such_method'), { 'mcp-method': 'no/such_method' }),
      modernRequest(modern(15, 'tools/list'), { authorization: undefined, 'mcp-method': 'tools/list' }),
      modernRequest(modern(16, 'tools/list'), { origin: 'https://evil.example', 'mcp-method': 'tools/list' }),
    ];
    const { tally, before, expected } = await fuzzMcp('raw JSON-RPC at 2026-07-28', arb, j, examples, headerCheck);
    await assertOnlyExpected(w, scope, before, expected);
    await assertConsistent(w, j.borrowerId);
    tally.assertReached(['ok', 'input_validation', '400:INVALID_REQUEST', '404:METHOD_NOT_FOUND', '401:UNAUTHENTICATED', '403:FORBIDDEN']);
  });
});
