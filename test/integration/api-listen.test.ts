import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import { getStack } from '../support/stack.js';
import { world } from '../helpers/world.js';

/** The inode of the listening TCP socket on `port` (IPv4, state LISTEN), from /proc/net/tcp. */
function listeningInode(port: number): string {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A');
  assert.ok(row, `no listening socket on port ${port}`);
  return row[9] as string;
}

describe('API listening socket', function () {
  this.timeout(60_000);

  /**
   * Under overload the merchants' clients open connections faster than the API accepts them; with
   * Node's default backlog of 511 the kernel dropped the overflow (TcpExtListenOverflows rose by
   * 17k in one bench run) and each dropped connection came back after seconds of SYN retries.
   */
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

  /** libuv accepts one connection per listening handle per event-loop turn: the API gets several handles on its one socket. */
  it('serves its one listening socket through API_ACCEPT_HANDLES descriptors, so a loaded loop still accepts several connections a turn', async () => {
    const w = await world();
    const stack = await getStack();
    const inode = listeningInode(Number(new URL(w.baseUrl).port));
    const fdDir = `/proc/${stack.api.pid}/fd`;
    const onSocket = readdirSync(fdDir).filter((fd) => {
      try {
        return readlinkSync(`${fdDir}/${fd}`) === `socket:[${inode}]`;
      } catch {
        return false; // closed while we looked
      }
    });
    assert.equal(onSocket.length, stack.config.API_ACCEPT_HANDLES, `descriptors of the listening socket: ${onSocket.join(',')}`);
    const res = await fetch(`${w.baseUrl}/facilitator/health`);
    assert.equal(res.status, 200);
  });
});
