import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackReceiver {
  /** http://127.0.0.1:<port>/callback, the redirect URI to register. */
  readonly redirectUrl: string;
  /** The next authorization code delivered to the redirect URI. Rejects on an OAuth error redirect or timeout. */
  waitForCode(timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export interface LoopbackOptions {
  port?: number;
  path?: string;
  /** The state the callback must carry (checked when it returns a value). */
  expectedState?: () => string | undefined;
}

export class AuthorizationDeniedError extends Error {
  override readonly name = 'AuthorizationDeniedError';
  constructor(
    readonly error: string,
    description?: string,
  ) {
    super(`authorization failed: ${error}${description ? ` (${description})` : ''}`);
  }
}

type Delivery = { code: string } | { error: AuthorizationDeniedError };

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>Credit agent</title><p>${text.replace(/[<>&"]/g, '')}</p>`;
const SAFE_ERROR = /^[a-z_]{1,64}$/;

/**
 * A tiny loopback HTTP server on 127.0.0.1 (RFC 8252 section 7.3) that receives the OAuth redirect.
 * A callback whose state does not match the authorization in flight is refused and ignored.
 */
export async function startLoopbackReceiver(opts: LoopbackOptions = {}): Promise<LoopbackReceiver> {
  const path = opts.path ?? '/callback';
  let delivered: Delivery | undefined;
  let waiter: ((d: Delivery) => void) | undefined;

  const deliver = (d: Delivery) => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w(d);
    } else {
      delivered = d;
    }
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(PAGE(text));
    };
    if (req.method !== 'GET' || url.pathname !== path) return answer(404, 'Not found.');
    const expected = opts.expectedState?.();
    if (expected !== undefined && url.searchParams.get('state') !== expected) return answer(400, 'This sign-in link does not belong to the running agent.');
    const error = url.searchParams.get('error');
    if (error) {
      const code = SAFE_ERROR.test(error) ? error : 'invalid_request';
      deliver({ error: new AuthorizationDeniedError(code, url.searchParams.get('error_description')?.slice(0, 200)) });
      return answer(200, 'Sign-in was not completed. You can close this window.');
    }
    const code = url.searchParams.get('code');
    if (!code) return answer(400, 'The redirect carries no authorization code.');
    deliver({ code });
    answer(200, 'Signed in. You can close this window and return to your agent.');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    redirectUrl: `http://127.0.0.1:${port}${path}`,
    waitForCode(timeoutMs = 300_000) {
      const settle = (d: Delivery) => ('code' in d ? Promise.resolve(d.code) : Promise.reject(d.error));
      if (delivered) {
        const d = delivered;
        delivered = undefined;
        return settle(d);
      }
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          reject(new Error(`no sign-in within ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
        waiter = (d) => {
          clearTimeout(timer);
          settle(d).then(resolve, reject);
        };
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
