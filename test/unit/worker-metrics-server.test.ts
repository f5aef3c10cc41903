import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { serveMetrics } from '../../src/observability/metrics-server.js';

describe('worker metrics endpoint', function () {
  it('listens on loopback only, with or without METRICS_TOKEN, and asks for the token when set', async function () {
    for (const token of [undefined, 'm-token']) {
      const server = await serveMetrics(new Registry(), 0, token);
      try {
        const { address, port } = server.address() as AddressInfo;
        assert.equal(address, '127.0.0.1');
        const open = await fetch(`http://127.0.0.1:${port}/metrics`);
        assert.equal(open.status, token ? 401 : 200);
        if (token) assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
      } finally {
        server.close();
      }
    }
  });
});
