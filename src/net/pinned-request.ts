import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

/** Why a guarded outbound request was refused or given up; the message is safe to show to the caller. */
export class OutboundFetchRefused extends Error {
  override readonly name = 'OutboundFetchRefused';
}

/** The destination's address is one the request may not reach (not a network failure: retrying will not help). */
export class AddressRefused extends OutboundFetchRefused {}

/** Which IP addresses an outbound request may reach. */
export type AddressCheck = (ip: string) => boolean;

export function addressProblem(host: string, ip: string, allowed: AddressCheck): string | null {
  if (allowed(ip)) return null;
  const what = 'a private, loopback, link-local or otherwise non-public address';
  return host === ip ? `${ip} is ${what}` : `${host} resolves to ${ip}, ${what}`;
}

/**
 * A DNS lookup for net/tls.connect that resolves every address of the host itself and refuses the
 * connection when any of them is not allowed, so the socket only ever opens to a checked address
 * (a second, different answer from DNS cannot slip in between check and connect).
 */
export function checkedLookup(allowed: AddressCheck, resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0) return callback(new OutboundFetchRefused(`${hostname} has no address`), '', 0);
      for (const a of addresses) {
        const problem = addressProblem(hostname, a.address, allowed);
        if (problem) return callback(new AddressRefused(problem), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export interface PinnedRequestOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange (DNS, connect, TLS, headers, body) must finish within this. */
  timeoutMs: number;
  /** The most of the answer's body read; 0: the body is not read, the status and headers are the answer. */
  maxBytes: number;
  /** Every address the request may reach: an IP literal is checked here, a host name on the connection's own lookup. */
  allowed: AddressCheck;
  /** Default https only. */
  protocols?: readonly ('https:' | 'http:')[];
  /** CAs trusted instead of the defaults (https). */
  ca?: string[];
  signal?: AbortSignal;
  /** Judges the status and headers before any of the body is read; an error returned ends the request with it. */
  checkHead?: (status: number, headers: IncomingHttpHeaders) => OutboundFetchRefused | null;
  /** The resolver behind the checked lookup (tests). */
  resolve?: typeof dnsLookup;
}

export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One HTTP(S) request on a caller's behalf (SSRF-guarded): the socket connects only to an address
 * `allowed` accepts, resolved once by the connection itself (no DNS-rebinding window between check
 * and connect), no redirect followed, no keep-alive, all within `timeoutMs`. Failures are
 * OutboundFetchRefused with a message safe to show.
 */
export function pinnedRequest(url: URL, o: PinnedRequestOptions): Promise<PinnedResponse> {
  return new Promise<PinnedResponse>((resolve, reject) => {
    const protocols = o.protocols ?? ['https:'];
    if (!(protocols as readonly string[]).includes(url.protocol)) {
      return reject(new OutboundFetchRefused(`only ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URLs are fetched`));
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const problem = addressProblem(host, host, o.allowed);
      if (problem) return reject(new AddressRefused(problem));
    }
    const seconds = o.timeoutMs / 1000;
    let settled = false;
    const finish = (err: Error | null, res?: PinnedResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else {
        resolve(res!);
      }
    };
    const timer = setTimeout(() => finish(new OutboundFetchRefused(`no complete answer within ${seconds} s`)), o.timeoutMs);
    const onAbort = () => finish(new OutboundFetchRefused(`no complete answer within ${seconds} s`));
    o.signal?.addEventListener('abort', onAbort, { once: true });

    const options: RequestOptions = {
      method: o.method,
      headers: { ...o.headers, ...(o.body !== undefined ? { 'content-length': String(Buffer.byteLength(o.body)) } : {}) },
      lookup: checkedLookup(o.allowed, o.resolve),
      agent: false,
      ...(o.ca ? { ca: o.ca } : {}),
    };
    const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, options, (res) => {
      const status = res.statusCode ?? 0;
      const refused = o.checkHead?.(status, res.headers);
      if (refused) return finish(refused);
      if (o.maxBytes === 0) {
        finish(null, { status, headers: res.headers, body: Buffer.alloc(0) });
        res.resume();
        req.destroy();
        return;
      }
      const tooLarge = () => new OutboundFetchRefused(`the answer is larger than ${o.maxBytes} bytes`);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > o.maxBytes) return finish(tooLarge());
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > o.maxBytes) finish(tooLarge());
        else chunks.push(chunk);
      });
      res.on('error', (err) => finish(new OutboundFetchRefused(`the answer broke off (${err.message})`)));
      res.on('end', () => finish(null, { status, headers: res.headers, body: Buffer.concat(chunks, received) }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof OutboundFetchRefused) return finish(err);
      finish(new OutboundFetchRefused(`could not reach ${url.host}: ${err.code ?? err.message}`));
    });
    req.end(o.body);
  });
}
