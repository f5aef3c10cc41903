import { createServer, type IncomingMessage } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { UsageError } from './output.js';

const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenFlags {
  secret?: string;
  port?: string;
  maxEvents?: string;
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
  if (!secret || !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
    throw new UsageError('--secret <whsec_…> (or WEBHOOK_SECRET) is required: the secret the endpoint was registered with');
  }
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
      process.stderr.write(`rejected ${req.method} ${req.url}: ${body === null ? 'not a POST with a body of at most 1 MiB' : 'the signature does not verify with this secret (or the timestamp is over 5 minutes off)'}\n`);
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
  process.stderr.write(`listening on ${url}: register that URL for the merchant (development mode); verified events print here, Ctrl-C stops\n`);
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
