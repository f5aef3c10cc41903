import assert from 'node:assert/strict';
import { corsMethods, corsPolicy } from '../../src/http/cors.js';
import { corsOriginProblem, loadEnv } from '../../src/config/env.js';

describe('CORS policy (MCP_CORS_ORIGINS)', function () {
  it('accepts exact https origins and http only on loopback', function () {
    for (const ok of ['https://inspector.example.com', 'https://a.example:8443', 'http://127.0.0.1:6274', 'http://localhost:5173', 'http://[::1]:3000']) {
      assert.equal(corsOriginProblem(ok), null, ok);
    }
  });

  it('refuses wildcards, paths, trailing slashes, upper case, null and plain http elsewhere', function () {
    for (const bad of ['*', 'null', 'https://a.example/', 'https://a.example/app', 'https://A.example', 'https://a.example:443', 'http://a.example', 'ftp://a.example', 'a.example']) {
      assert.ok(corsOriginProblem(bad), bad);
    }
    assert.match(corsOriginProblem('https://a.example/')!, /did you mean https:\/\/a\.example\?/);
  });

  it('an invalid entry stops start-up with the entry named', function () {
    assert.throws(() => loadEnv({ MCP_CORS_ORIGINS: 'https://ok.example, *' }), /MCP_CORS_ORIGINS: "\*" is not an http\(s\) origin/);
  });

  it('none by default outside development; loopback origins too in development; exact matches only', function () {
    const test = corsPolicy(loadEnv({ NODE_ENV: 'test', MCP_CORS_ORIGINS: 'https://inspector.example.com' }));
    assert.equal(test.allows('https://inspector.example.com'), true);
    for (const o of ['http://127.0.0.1:6274', 'https://inspector.example.com.evil.example', 'https://evil.example', 'null', '', undefined]) assert.equal(test.allows(o), false, String(o));
    assert.equal(corsPolicy(loadEnv({ NODE_ENV: 'production' })).allows('http://localhost:6274'), false);
    const dev = corsPolicy(loadEnv({ NODE_ENV: 'development' }));
    for (const o of ['http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:3000']) assert.equal(dev.allows(o), true, o);
    assert.equal(dev.allows('http://192.168.1.10:3000'), false);
  });

  it('opens /mcp, the well-known documents and the browser-facing OAuth endpoints only', function () {
    assert.equal(corsMethods('/mcp'), 'GET, POST, DELETE');
    assert.equal(corsMethods('/.well-known/oauth-protected-resource/mcp'), 'GET');
    assert.equal(corsMethods('/oauth/.well-known/openid-configuration'), 'GET');
    for (const p of ['/oauth/token', '/oauth/reg', '/oauth/token/revocation']) assert.equal(corsMethods(p), 'POST', p);
    for (const p of ['/api/v1/capture', '/oauth/auth', '/oauth/interaction/x', '/metrics', '/mcp/x', '/borrower']) assert.equal(corsMethods(p), undefined, p);
  });
});
