import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A throwaway CA and a certificate for localhost / 127.0.0.1 signed by it, made with the openssl
 * CLI in `dir`. The API trusts the CA only through OAUTH_CIMD_TEST_CA_FILE (test-only setting).
 */
export function makeTestCa(dir: string): { caFile: string; key: string; cert: string } {
  const f = (name: string) => join(dir, name);
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=CIMD test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  run(['req', ...ec, '-keyout', f('host.key'), '-out', f('host.csr'), '-subj', '/CN=localhost']);
  writeFileSync(f('host.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  run(['x509', '-req', '-in', f('host.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('host.pem'), '-days', '2', '-extfile', f('host.ext')]);
  return { caFile: f('ca.pem'), key: readFileSync(f('host.key'), 'utf8'), cert: readFileSync(f('host.pem'), 'utf8') };
}

/** What the host answers on one path. */
export type CimdRoute = (res: ServerResponse, url: string) => void;

export interface CimdHost {
  /** https://localhost:<port> */
  origin: string;
  /** Serves `route` at `path` and returns the full URL (the client_id). */
  serve(path: string, route: CimdRoute): string;
  /** Serves `doc` as JSON (client_id set to the URL unless given) with optional extra headers. */
  serveDocument(path: string, doc: Record<string, unknown>, headers?: Record<string, string>): string;
  /** How many requests `path` received. */
  hits(path: string): number;
  close(): Promise<void>;
}

/** An agent host's web server on 127.0.0.1 that publishes client ID metadata documents over TLS. */
export async function startCimdHost(tls: { key: string; cert: string }): Promise<CimdHost> {
  const routes = new Map<string, CimdRoute>();
  const counts = new Map<string, number>();
  const server: Server = createServer(tls, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
      return;
    }
    route(res, `${origin}${path}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  const serve = (path: string, route: CimdRoute): string => {
    routes.set(path, route);
    return `${origin}${path}`;
  };
  return {
    origin,
    serve,
    serveDocument(path, doc, headers = {}) {
      return serve(path, (res, url) => {
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ client_id: url, ...doc }));
      });
    },
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
