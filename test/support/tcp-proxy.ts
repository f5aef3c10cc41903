import { connect, createServer, type Socket } from 'node:net';

/**
 * - `pass`: bytes flow both ways.
 * - `refuse`: every connection is reset as soon as it opens (a node that is down).
 * - `blackhole`: connections open but nothing ever comes back (packets dropped): each call hangs until its own timeout.
 */
export type ProxyMode = 'pass' | 'refuse' | 'blackhole';

export interface TcpProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  readonly mode: ProxyMode;
  /** Switching mode resets every open connection, so no request spans two modes. */
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

/** A TCP proxy on a free 127.0.0.1 port in front of target, whose link the test can cut. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };

  const server = createServer({ noDelay: true }, (client) => {
    track(client);
    if (mode === 'refuse') return void client.resetAndDestroy();
    if (mode === 'blackhole') return void client.resume();
    const upstream = connect({ host: target.host, port: target.port, noDelay: true });
    track(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('proxy has no address');

  const resetAll = () => {
    for (const s of open) s.resetAndDestroy();
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
      resetAll();
    },
    close() {
      resetAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
