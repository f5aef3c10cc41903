import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { UsageError } from './output.js';

const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenFlags {
  secret?: string;
  /** The endpoint the secret belongs to (we_…), named in messages only. */
  endpoint?: string;
  port?: string;
  maxEvents?: string;
}

/** Names the secret without showing it: where it came from and the start of its SHA-256. */
function secretLabel(secret: string, from: string, endpoint: string | undefined): string {
  const fingerprint = createHash('sha256').update(secret).digest('hex').slice(0, 8);
  return `the secret from ${from} (sha256 ${fingerprint}…)${endpoint ? ` of endpoint ${endpoint}` : ''}`;
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(null));
  });
}

function verified(verifier: Webhook, body: string, headers: Record<string, string>): { type?: string; timestamp?: string; data?: unknown } | null {
  try {
    return verifier.verify(body, headers) as { type?: string; timestamp?: string; data?: unknown };
  } catch {
    return null;
  }
}

/**
 * Development: a webhook receiver on 127.0.0.1 (register http://127.0.0.1:<port>/webhooks for the
 * merchant; a development stack allows loopback endpoints). Each delivery's Standard Webhooks
 * signature is verified with the endpoint's secret: a verified event is printed to stdout as one JSON
 * line and answered 204, anything else is answered 401 and reported on stderr. Runs until Ctrl-C or
 * `maxEvents` verified events.
 */
export async function webhookListen(f: ListenFlags) {
  const secret = f.secret ?? process.env.WEBHOOK_SECRET;
  const from = f.secret !== undefined ? '--secret' : 'WEBHOOK_SECRET';
  if (!secret || !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
    throw new UsageError(
      `${secret ? `${from} is not a whsec_… secret` : 'no secret: pass --secret <whsec_…> or set WEBHOOK_SECRET'}; it is the secret the endpoint was registered with`,
    );
  }
  if (f.endpoint !== undefined && !/^we_[0-9a-f]{32}$/.test(f.endpoint)) throw new UsageError('--endpoint must be an endpoint id (we_…): list them with "webhook list"');
  const checkedWith = secretLabel(secret, from, f.endpoint);
  const verifier = new Webhook(secret);
  const port = Number(f.port ?? '8499');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError('--port must be a TCP port (1-65535)');
  const maxEvents = f.maxEvents === undefined ? Infinity : Number(f.maxEvents);
  if (!(maxEvents === Infinity || (Number.isInteger(maxEvents) && maxEvents > 0))) throw new UsageError('--max-events must be a positive whole number');

  let received = 0;
  let rejected = 0;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const server = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : null;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const event = body === null ? null : verified(verifier, body, headers);
    if (!event) {
      rejected++;
      const why =
        body === null
          ? 'not a POST with a body of at most 1 MiB'
          : `the signature does not verify with ${checkedWith}. Each endpoint signs with its own secret: a delivery signed for another endpoint (another URL registered to this listener, or a rotated-out secret) looks like this, as does a timestamp over 5 minutes off`;
      process.stderr.write(`rejected ${req.method} ${req.url}: ${why}${headers['webhook-id'] ? ` [webhook-id ${headers['webhook-id']}]` : ''}\n`);
      res.writeHead(401).end();
      return;
    }
    received++;
    process.stdout.write(JSON.stringify({ webhookId: headers['webhook-id'], type: event.type, timestamp: event.timestamp, data: event.data }) + '\n');
    res.writeHead(204).end();
    if (received >= maxEvents) stop();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`cannot listen on 127.0.0.1:${port}: ${err.code ?? err.message}`)));
    server.listen(port, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${port}/webhooks`;
  process.stderr.write(`listening on ${url}: register that URL for the merchant (development mode); verifying with ${checkedWith}; verified events print here, Ctrl-C stops\n`);
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, received, rejected };
}
