import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { world } from '../helpers/world.js';

/**
 * Under overload the merchants' clients open connections faster than the API accepts them; with
 * Node's default backlog of 511 the kernel dropped the overflow (TcpExtListenOverflows rose by
 * 17k in one bench run) and each dropped connection came back after seconds of SYN retries.
 */
describe('API listening socket', function () {
  this.timeout(60_000);

  it('queues as many connections as the kernel allows (API_LISTEN_BACKLOG, capped by somaxconn)', async () => {
    const w = await world();
    const port = new URL(w.baseUrl).port;
    const { stdout } = await promisify(execFile)('ss', ['-ltnH', `sport = :${port}`]);
    const line = stdout.trim().split('\n')[0] ?? '';
    // For a listening socket, ss's Send-Q column is its accept backlog.
    const backlog = Number(line.split(/\s+/)[2]);
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    assert.equal(backlog, Math.min(4096, somaxconn), `ss said: ${line}`);
  });
});
