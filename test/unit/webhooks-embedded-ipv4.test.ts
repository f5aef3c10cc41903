import assert from 'node:assert/strict';
import { loadEnv } from '../../src/config/env.js';
import { ApiError } from '../../src/domain/errors.js';
import { embedsIpv4, isLoopbackAddress } from '../../src/net/special-use-address.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import {
  allowedAddresses,
  assertAllowedDestination,
  endpointUrlProblem,
  IPV4_EMBEDDING_PROBLEM,
  PUBLIC_ONLY,
  webhookDestinationPolicy,
  type WebhookDestinationPolicy,
} from '../../src/webhooks/url-policy.js';

/** `npm start`'s policy: NODE_ENV=development, DEV_TOOLS=true (loopback receivers over http allowed). */
const DEV = webhookDestinationPolicy(loadEnv({}));
const PRIVATE: WebhookDestinationPolicy = { allowPrivate: true, allowLoopback: false };

/** Loopback written as IPv6 forms that embed 127.0.0.1: mapped (both spellings), compatible, translated, NAT64. */
const EMBEDDED_LOOPBACK = ['[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[::7f00:1]', '[::ffff:0:127.0.0.1]', '[64:ff9b::7f00:1]', '[64:ff9b::127.0.0.1]'];

describe('webhooks: IPv6 literals that embed an IPv4 address are refused in every mode', function () {
  it('the development policy is the loopback allowance (the mode these forms slipped through)', function () {
    assert.deepEqual(DEV, { allowPrivate: false, allowLoopback: true });
  });

  it('refuses them as endpoint URLs, over http and https, in development, private and public-only modes', function () {
    for (const host of EMBEDDED_LOOPBACK) {
      for (const policy of [DEV, PRIVATE, PUBLIC_ONLY]) {
        assert.equal(endpointUrlProblem(`https://${host}:8499/x`, policy), IPV4_EMBEDDING_PROBLEM, `https ${host} ${JSON.stringify(policy)}`);
      }
      assert.equal(endpointUrlProblem(`http://${host}:8499/x`, DEV), IPV4_EMBEDDING_PROBLEM, `http ${host} in development`);
    }
  });

  it('still allows a plain loopback receiver in development', async function () {
    for (const url of ['http://127.0.0.1:8499/x', 'http://[::1]:8499/x', 'https://127.0.0.1:8499/x']) {
      assert.equal(endpointUrlProblem(url, DEV), null, url);
      await assertAllowedDestination(url, DEV);
    }
  });

  it('answers registration with a 400 INVALID_REQUEST naming the url field', async function () {
    const deps = { env: loadEnv({}), store: {} as never, nowMs: Date.now };
    for (const host of EMBEDDED_LOOPBACK) {
      await assert.rejects(
        createEndpoint(deps, 'merchant', `http://${host}:8499/x`),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.status, 400);
          assert.deepEqual(err.toBody('req').error, {
            code: 'INVALID_REQUEST',
            message: 'The request body is invalid; see fields.',
            requestId: 'req',
            fields: [{ path: 'url', message: IPV4_EMBEDDING_PROBLEM }],
          });
          return true;
        },
        host,
      );
    }
  });

  it('a delivery connects to none of them either, whatever the mode (a host name may resolve to one)', function () {
    for (const ip of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::7f00:1', '64:ff9b::7f00:1', '::ffff:10.0.0.1']) {
      assert.ok(embedsIpv4(ip), ip);
      assert.equal(isLoopbackAddress(ip), false, ip);
      assert.equal(allowedAddresses(new URL('http://receiver.localhost:8499/x'), DEV)(ip), false, `http ${ip}`);
      for (const policy of [DEV, PRIVATE, PUBLIC_ONLY]) {
        assert.equal(allowedAddresses(new URL('https://hooks.example.com/x'), policy)(ip), false, `https ${ip} ${JSON.stringify(policy)}`);
      }
    }
    assert.ok(isLoopbackAddress('127.0.0.1') && isLoopbackAddress('::1'));
    assert.equal(embedsIpv4('127.0.0.1'), false, 'an IPv4 address is not an IPv6 form');
    assert.equal(allowedAddresses(new URL('http://127.0.0.1:8499/x'), DEV)('127.0.0.1'), true);
    assert.equal(allowedAddresses(new URL('https://hooks.example.com/x'), PRIVATE)('10.0.0.1'), true, 'WEBHOOK_ALLOW_PRIVATE still reaches private IPv4');
  });
});
