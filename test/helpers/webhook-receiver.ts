import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';

/** A throwaway CA and a certificate for 127.0.0.1 it signed; the worker trusts the CA through NODE_EXTRA_CA_CERTS. */
export function testCertificates(dir: string) {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=webhook-test-ca']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf']);
  return { ca: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) };
}

export interface Received {
  id: string;
  type: string;
  paymentId: string;
  status: string;
  /** The event's data as sent. */
  data: Record<string, unknown>;
  /** The secret that verified it. */
  secret: string;
}

/** A merchant's HTTPS receiver that verifies every signature with the secrets it knows and records what it accepted. */
export class Receiver {
  readonly accepted: Received[] = [];
  rejected = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  secrets: string[] = [];
  /** What to answer a verified delivery (204 unless a test wants the endpoint to fail). */
  answer = 204;

  constructor(
    private readonly tls: { key: Buffer; cert: Buffer },
    readonly port: number,
  ) {}

  async start(): Promise<void> {
    const server = createServer(this.tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const secret = this.secrets.find((s) => {
          try {
            new Webhook(s).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
        if (!secret) {
          this.rejected++;
          res.writeHead(401).end();
          return;
        }
        if (this.answer >= 300) {
          res.writeHead(this.answer).end();
          return;
        }
        const event = JSON.parse(body) as { type: string; data: { paymentId: string; status: string } };
        this.accepted.push({ id: headers['webhook-id']!, type: event.type, paymentId: event.data.paymentId, status: event.data.status, data: event.data, secret });
        res.writeHead(this.answer).end();
      });
    });
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  uniqueIds(): Set<string> {
    return new Set(this.accepted.map((r) => r.id));
  }
}

