import assert from 'node:assert/strict';
import { guardedJsonFetch } from '../../src/net/guarded-json-fetch.js';
import { isPublicAddress } from '../../src/net/special-use-address.js';
import { assertAllowedDestination, PUBLIC_ONLY } from '../../src/webhooks/url-policy.js';

/** Every IPv6 form that embeds an IPv4 address, written around 127.0.0.1, 10.0.0.1, 169.254.169.254 and 8.8.8.8. */
const EMBEDDING_FORMS: Record<string, (v4: [number, number, number, number]) => string> = {
  'IPv4-mapped ::ffff:0:0/96': (a) => `::ffff:${a.join('.')}`,
  'IPv4-compatible ::/96': (a) => `::${a.join('.')}`,
  'IPv4-translated ::ffff:0:0:0/96': (a) => `::ffff:0:${a.join('.')}`,
  'NAT64 64:ff9b::/96': (a) => `64:ff9b::${a.join('.')}`,
  'NAT64 local use 64:ff9b:1::/48': (a) => `64:ff9b:1:${hex16(a[0], a[1])}:${hex16(a[2], a[3])}::`,
  '6to4 2002::/16': (a) => `2002:${hex16(a[0], a[1])}:${hex16(a[2], a[3])}::1`,
  // Teredo: server IPv4 in bits 32-63, the client's obfuscated (inverted) in the last 32 bits.
  'Teredo 2001::/32': (a) => `2001:0:${hex16(a[0], a[1])}:${hex16(a[2], a[3])}:0:0:${hex16(255 - a[0], 255 - a[1])}:${hex16(255 - a[2], 255 - a[3])}`,
};

function hex16(hi: number, lo: number): string {
  return ((hi << 8) | lo).toString(16);
}

const EMBEDDED: [number, number, number, number][] = [[127, 0, 0, 1], [10, 0, 0, 1], [169, 254, 169, 254], [8, 8, 8, 8]];

describe('special-use addresses: IPv6 forms that embed an IPv4 address', function () {
  it('refuses every IPv4-embedding form, whatever IPv4 it carries', function () {
    for (const [name, form] of Object.entries(EMBEDDING_FORMS)) {
      for (const v4 of EMBEDDED) {
        const ip = form(v4);
        assert.ok(!isPublicAddress(ip), `${name}: ${ip} (${v4.join('.')})`);
        // The URL parser's normal form of the same address (e.g. [::127.0.0.1] is [::7f00:1]) too.
        const normal = new URL(`https://[${ip}]/`).hostname.slice(1, -1);
        assert.ok(!isPublicAddress(normal), `${name}: ${normal}`);
      }
    }
  });

  it('still calls public IPv4 and IPv6 addresses public, including ones near the embedding prefixes', function () {
    for (const ip of ['8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001::200e', '2001:4860:4860::8888', '64:ff9c::808:808', '2003::1', '1::808:808']) {
      assert.ok(isPublicAddress(ip), ip);
    }
  });

  it('refuses them as webhook endpoints and as CIMD hosts', async function () {
    for (const host of ['[::127.0.0.1]', '[::ffff:0:127.0.0.1]', '[::ffff:0:a9fe:a9fe]', '[64:ff9b::10.0.0.1]', '[2002:7f00:1::1]']) {
      await assert.rejects(assertAllowedDestination(`https://${host}/h`, PUBLIC_ONLY), /private or loopback/, host);
      const fetchDoc = guardedJsonFetch({ timeoutMs: 2_000, maxBytes: 1024, failureMemoryMs: 0 });
      await assert.rejects(fetchDoc(`https://${host}/client.json`), /is a private, loopback, link-local or otherwise non-public address/, host);
    }
  });
});
