import assert from 'node:assert/strict';
import { bearerChallenge, insufficientScope, unauthorized, unavailable } from '../../src/http/mcp-errors.js';
import { findScopeShortfall, stepUpScopes } from '../../src/mcp/scope-gate.js';

const call = (name: string, id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe('mcp scope gate', function () {
  it('passes calls whose tool scopes the token holds, and non-tool methods', function () {
    assert.equal(findScopeShortfall(call('get_borrower_status'), ['borrower:token']), undefined);
    assert.equal(findScopeShortfall({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, []), undefined);
    assert.equal(findScopeShortfall(call('no_such_tool'), []), undefined, 'unknown tools are the SDK\'s to refuse');
    assert.equal(findScopeShortfall('garbage', []), undefined);
  });

  it('names every scope a tool needs and the ones missing', function () {
    const s = findScopeShortfall(call('prepare_x402_payment', 'a'), ['spend:intent:create']);
    assert.deepEqual(s, { tool: 'prepare_x402_payment', needed: ['spend:intent:create', 'policy:evaluate', 'signing:request'], missing: ['policy:evaluate', 'signing:request'], id: 'a' });
  });

  it('challenges for the needed scopes with those the token holds and the borrower consented to, in SCOPES order', function () {
    assert.deepEqual(stepUpScopes(['handle:claim'], ['borrower:token', 'credit:facility:accept'], []), ['borrower:token', 'credit:facility:accept', 'handle:claim']);
    assert.deepEqual(
      stepUpScopes(['credit:facility:accept'], ['borrower:token'], ['repayment:execute', 'borrower:token', 'agent:key:register']),
      ['borrower:token', 'credit:facility:accept', 'agent:key:register', 'repayment:execute'],
    );
    assert.deepEqual(stepUpScopes(['policy:evaluate'], [], []), ['policy:evaluate']);
  });

  it('checks every call of a batch', function () {
    const s = findScopeShortfall([call('get_borrower_status', 1), { jsonrpc: '2.0', method: 'notifications/initialized' }, call('claim_handle', 2)], ['borrower:token']);
    assert.equal(s?.tool, 'claim_handle');
    assert.equal(s?.id, 2);
  });
});

describe('mcp challenges', function () {
  it('quotes parameter values', function () {
    assert.equal(bearerChallenge({ a: 'x"y\\z', b: undefined }), 'Bearer a="x\\"y\\\\z"');
    assert.equal(bearerChallenge({}), 'Bearer');
  });

  it('adds error="invalid_token" only when a token was presented', function () {
    assert.equal(unauthorized('http://h/.well-known/oauth-protected-resource/mcp', false, 'req_1').headers['WWW-Authenticate'], 'Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp"');
    assert.match(unauthorized('http://h/m', true, 'req_1').headers['WWW-Authenticate'] ?? '', /^Bearer resource_metadata="http:\/\/h\/m", error="invalid_token"/);
  });

  it('puts error, scope and resource_metadata in the insufficient_scope challenge', function () {
    const e = insufficientScope('http://h/m', { tool: 'claim_handle', needed: ['handle:claim'], missing: ['handle:claim'], request: ['handle:claim'], granted: ['borrower:token'] }, 'req_1', 3);
    assert.equal(e.status, 403);
    assert.match(e.headers['WWW-Authenticate'] ?? '', /^Bearer error="insufficient_scope", scope="handle:claim", resource_metadata="http:\/\/h\/m"/);
    assert.equal(e.body.id, 3);
    assert.equal(e.body.error.data.scope, 'handle:claim');
    const wider = insufficientScope('http://h/m', { tool: 'claim_handle', needed: ['handle:claim'], missing: ['handle:claim'], request: ['borrower:token', 'handle:claim'], granted: ['borrower:token'] }, 'req_1', 3);
    assert.match(wider.headers['WWW-Authenticate'] ?? '', /scope="borrower:token handle:claim"/, 'the challenge names what to request');
    assert.equal(wider.body.error.data.scope, 'handle:claim', 'data.scope: what the tool needs');
  });

  it('names the onboarding step that opens the tool, read off the token\'s stage', function () {
    const atKey = ['borrower:token', 'credit:facility:accept', 'agent:key:register', 'handle:claim'];
    const e = insufficientScope('http://h/m', { tool: 'prepare_x402_payment', needed: ['spend:intent:create'], missing: ['spend:intent:create'], request: ['spend:intent:create'], granted: atKey }, 'req_1', 4);
    assert.match(e.body.error.message, /prepare_x402_payment opens at onboarding stage ACTIVE and the borrower is at AGENT_KEY_REGISTERED: next, claim a handle with claim_handle, then refresh the token and retry\.$/);
    assert.equal(e.body.error.data.next_step, 'claim a handle with claim_handle');
    assert.equal(e.body.error.data.token_stage, 'AGENT_KEY_REGISTERED');
  });

  it('answers a store away during the token check with 503 UNAVAILABLE and Retry-After, in the JSON-RPC error shape', function () {
    const e = unavailable('req_2');
    assert.equal(e.status, 503);
    assert.equal(e.headers['Retry-After'], '1');
    assert.deepEqual(e.body.error.data, { code: 'UNAVAILABLE', requestId: 'req_2' });
    assert.equal(e.body.jsonrpc, '2.0');
  });
});
