import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { cimdRedirectUriProblem } from '../../src/domain/redirect-policy.js';
import { ConfigError, loadEnv } from '../../src/config/env.js';
import { checkedLookup, guardedJsonFetch, OutboundFetchRefused } from '../../src/net/guarded-json-fetch.js';
import { isLoopbackAddress, isPublicAddress } from '../../src/net/special-use-address.js';

describe('CIMD guards: special-use addresses, the checked DNS lookup, redirect URIs, the test-only flag', function () {
  it('calls only public addresses public', function () {
    for (const ip of ['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e']) assert.ok(isPublicAddress(ip), ip);
    for (const ip of [
      '0.0.0.0', '10.0.0.1', '100.64.1.1', '127.0.0.1', '127.8.9.10', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8',
      '192.0.2.1', '192.168.1.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '255.255.255.255',
      '::', '::1', '::ffff:10.0.0.1', '::ffff:8.8.8.8', '64:ff9b::a00:1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '2001:db8::1', '2002:a00:1::1',
      'localhost', 'example.com', '',
    ]) assert.ok(!isPublicAddress(ip), ip);
    assert.ok(isLoopbackAddress('127.0.0.1') && isLoopbackAddress('::1') && !isLoopbackAddress('10.0.0.1'));
  });

  /** A resolver that answers `addresses` for every name, as dns.lookup(name, { all: true }) would. */
  const resolver = (addresses: LookupAddress[]) =>
    ((_host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => cb(null, addresses)) as never;

  function lookupWith(addresses: LookupAddress[], all: boolean): Promise<unknown> {
    const lookup = checkedLookup(isPublicAddress, resolver(addresses));
    return new Promise((resolve, reject) =>
      lookup('agent.example', { all } as never, ((err: Error | null, address: unknown) => (err ? reject(err) : resolve(address))) as never),
    );
  }

  it('refuses a host when any of its addresses is not public, before connecting', async function () {
    await assert.rejects(lookupWith([{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }], true), (e: Error) => {
      assert.ok(e instanceof OutboundFetchRefused);
      assert.match(e.message, /agent\.example resolves to 10\.0\.0\.5, a private/);
      return true;
    });
    await assert.rejects(lookupWith([{ address: 'fd00::2', family: 6 }], false), /resolves to fd00::2/);
    assert.deepEqual(await lookupWith([{ address: '93.184.216.34', family: 4 }], true), [{ address: '93.184.216.34', family: 4 }]);
    assert.equal(await lookupWith([{ address: '93.184.216.34', family: 4 }], false), '93.184.216.34');
  });

  it('without the test flag, refuses loopback by name (real DNS), private IP literals and plain http', async function () {
    const fetchDoc = guardedJsonFetch({ timeoutMs: 2_500, maxBytes: 5 * 1024, failureMemoryMs: 0 });
    await assert.rejects(fetchDoc('https://localhost:9/client.json'), /localhost resolves to (127\.0\.0\.1|::1), a private, loopback/);
    await assert.rejects(fetchDoc('https://10.1.2.3/client.json'), /10\.1\.2\.3 is a private/);
    await assert.rejects(fetchDoc('https://[::1]/client.json'), /::1 is a private/);
    await assert.rejects(fetchDoc('http://93.184.216.34/client.json'), /only https/);
  });

  it('remembers a failed fetch for a while, then asks again', async function () {
    let t = 0;
    const fetchDoc = guardedJsonFetch({ timeoutMs: 2_500, maxBytes: 5 * 1024, failureMemoryMs: 10_000, now: () => t });
    const first = await fetchDoc('https://10.1.2.3/a.json').catch((e: unknown) => e);
    assert.equal(await fetchDoc('https://10.1.2.3/a.json').catch((e: unknown) => e), first, 'the same failure, no new request');
    t = 10_001;
    assert.notEqual(await fetchDoc('https://10.1.2.3/a.json').catch((e: unknown) => e), first);
  });

  it('lets a document list loopback redirects and https ones on its own host only', function () {
    const id = 'https://agent.example/oauth/client.json';
    assert.equal(cimdRedirectUriProblem('http://127.0.0.1:3000/cb', id, []), null);
    assert.equal(cimdRedirectUriProblem('https://agent.example/cb', id, []), null);
    assert.equal(cimdRedirectUriProblem('https://ide.example.org/cb', id, ['ide.example.org']), null);
    assert.match(cimdRedirectUriProblem('https://evil.example/cb', id, []) ?? '', /not allowed; .*own host \(agent\.example\)/);
    assert.match(cimdRedirectUriProblem('http://agent.example/cb', id, []) ?? '', /not allowed/);
    assert.match(cimdRedirectUriProblem('https://agent.example/cb#x', id, []) ?? '', /fragment/);
    assert.match(cimdRedirectUriProblem('https://u:p@agent.example/cb', id, []) ?? '', /credentials/);
  });

  it('refuses OAUTH_CIMD_TEST_CA_FILE in production', function () {
    assert.throws(() => loadEnv({ NODE_ENV: 'production', OAUTH_CIMD_TEST_CA_FILE: '/tmp/ca.pem' }), (e: Error) => e instanceof ConfigError && /OAUTH_CIMD_TEST_CA_FILE/.test(e.message));
    assert.equal(loadEnv({ NODE_ENV: 'test', OAUTH_CIMD_TEST_CA_FILE: '/tmp/ca.pem' }).OAUTH_CIMD_TEST_CA_FILE, '/tmp/ca.pem');
  });
});
