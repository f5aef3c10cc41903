import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Lru } from '../domain/lru.js';
import { isLoopbackAddress, isPublicAddress } from './special-use-address.js';

/** Why a guarded fetch refused or gave up; the message is safe to show to the caller. */
export class OutboundFetchRefused extends Error {
  override readonly name = 'OutboundFetchRefused';
}

export interface GuardedFetchSettings {
  /** The whole exchange (DNS, connect, TLS, headers, body) must finish within this. */
  timeoutMs: number;
  maxBytes: number;
  /**
   * TEST ONLY (OAUTH_CIMD_TEST_CA_FILE): a PEM CA trusted beside the system roots, and hosts
   * resolving to loopback allowed. Every other special-use address stays refused.
   */
  testLoopbackCaPem?: string;
  /**
   * A URL whose fetch failed is answered with the same failure for this long without a new request:
   * oidc-provider looks a failing client up twice per request, and a slow host should cost us once.
   */
  failureMemoryMs: number;
  now?: () => number;
}

type AddressCheck = (ip: string) => boolean;

function addressProblem(host: string, ip: string, allowed: AddressCheck): string | null {
  if (allowed(ip)) return null;
  const what = 'a private, loopback, link-local or otherwise non-public address';
  return host === ip ? `${ip} is ${what}` : `${host} resolves to ${ip}, ${what}`;
}

/**
 * A DNS lookup for net/tls.connect that resolves every address of the host itself and refuses the
 * connection when any of them is non-public, so the socket only ever opens to a checked address
 * (a second, different answer from DNS cannot slip in between check and connect).
 */
export function checkedLookup(allowed: AddressCheck, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0) return callback(new OutboundFetchRefused(`${hostname} has no address`), '', 0);
      for (const a of addresses) {
        const problem = addressProblem(hostname, a.address, allowed);
        if (problem) return callback(new OutboundFetchRefused(problem), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * fetch() for documents the server retrieves on a caller's behalf (oidc-provider's `fetch`
 * option: client ID metadata documents): https only, every resolved address public, no redirect
 * followed, 200 with a JSON content type, at most `maxBytes`, all within `timeoutMs`. The body is
 * read here, under those limits, and handed back as a complete Response.
 */
export function guardedJsonFetch(settings: GuardedFetchSettings) {
  const allowLoopback = settings.testLoopbackCaPem !== undefined;
  const allowed: AddressCheck = (ip) => isPublicAddress(ip) || (allowLoopback && isLoopbackAddress(ip));
  const lookup = checkedLookup(allowed);
  const ca = settings.testLoopbackCaPem !== undefined ? [...rootCertificates, settings.testLoopbackCaPem] : undefined;
  const seconds = settings.timeoutMs / 1000;
  const now = settings.now ?? Date.now;
  const failures = new Lru<{ error: OutboundFetchRefused; until: number }>(1000);

  type Init = { headers?: ConstructorParameters<typeof Headers>[0]; signal?: AbortSignal };
  const fetchOnce = (input: string | URL, init: Init): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'https:') return reject(new OutboundFetchRefused('only https URLs are fetched'));
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) {
        const problem = addressProblem(host, host, allowed);
        if (problem) return reject(new OutboundFetchRefused(problem));
      }

      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        init.signal?.removeEventListener('abort', onAbort);
        req.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(new OutboundFetchRefused(`no complete answer within ${seconds} s`)), settings.timeoutMs);
      const onAbort = () => fail(new OutboundFetchRefused(`no complete answer within ${seconds} s`));
      init.signal?.addEventListener('abort', onAbort, { once: true });

      const headers = new Headers(init.headers);
      const options: RequestOptions = {
        method: 'GET',
        headers: { accept: headers.get('accept') ?? 'application/json', 'user-agent': 'x402-credit-facilitator' },
        lookup,
        agent: false,
        ...(ca ? { ca } : {}),
      };
      const req = request(url, options, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) return fail(new OutboundFetchRefused(`answered ${status}; redirects are not followed`));
        if (status !== 200) return fail(new OutboundFetchRefused(`answered HTTP ${status}, not 200`));
        const type = res.headers['content-type'] ?? '';
        if (!JSON_TYPE.test(type)) return fail(new OutboundFetchRefused(`answered content-type ${JSON.stringify(type.slice(0, 100))}, not application/json`));
        const tooLarge = () => new OutboundFetchRefused(`the document is larger than ${settings.maxBytes} bytes`);
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > settings.maxBytes) return fail(tooLarge());
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > settings.maxBytes) fail(tooLarge());
          else chunks.push(chunk);
        });
        res.on('error', (err) => fail(new OutboundFetchRefused(`the answer broke off (${err.message})`)));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          init.signal?.removeEventListener('abort', onAbort);
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) for (const item of v) out.append(k, item);
            else if (v !== undefined) out.set(k, v);
          }
          resolve(new Response(Buffer.concat(chunks, received), { status, headers: out }));
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof OutboundFetchRefused) return fail(err);
        fail(new OutboundFetchRefused(`could not fetch from ${url.host}: ${err.code ?? err.message}`));
      });
      req.end();
    });

  return async (input: string | URL, init: Init = {}): Promise<Response> => {
    const key = String(input);
    const failed = failures.get(key);
    if (failed && failed.until > now()) throw failed.error;
    try {
      return await fetchOnce(input, init);
    } catch (err) {
      if (err instanceof OutboundFetchRefused) failures.set(key, { error: err, until: now() + settings.failureMemoryMs });
      throw err;
    }
  };
}
