import { rootCertificates } from 'node:tls';
import { Lru } from '@credit-facilitator/wire/lru';
import { OutboundFetchRefused, pinnedRequest, type AddressCheck } from './pinned-request.js';
import { isLoopbackAddress, isPublicAddress } from './special-use-address.js';

export { checkedLookup, OutboundFetchRefused } from './pinned-request.js';

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
  const ca = settings.testLoopbackCaPem !== undefined ? [...rootCertificates, settings.testLoopbackCaPem] : undefined;
  const now = settings.now ?? Date.now;
  const failures = new Lru<{ error: OutboundFetchRefused; until: number }>(1000);

  type Init = { headers?: ConstructorParameters<typeof Headers>[0]; signal?: AbortSignal };
  const checkHead = (status: number, headers: { 'content-type'?: string }): OutboundFetchRefused | null => {
    if (status >= 300 && status < 400) return new OutboundFetchRefused(`answered ${status}; redirects are not followed`);
    if (status !== 200) return new OutboundFetchRefused(`answered HTTP ${status}, not 200`);
    const type = headers['content-type'] ?? '';
    if (!JSON_TYPE.test(type)) return new OutboundFetchRefused(`answered content-type ${JSON.stringify(type.slice(0, 100))}, not application/json`);
    return null;
  };
  const fetchOnce = async (input: string | URL, init: Init): Promise<Response> => {
    const res = await pinnedRequest(new URL(String(input)), {
      method: 'GET',
      headers: { accept: new Headers(init.headers).get('accept') ?? 'application/json', 'user-agent': 'x402-credit-facilitator' },
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
      allowed,
      ...(ca ? { ca } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      checkHead,
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (Array.isArray(v)) for (const item of v) out.append(k, item);
      else if (v !== undefined) out.set(k, v);
    }
    return new Response(res.body, { status: res.status, headers: out });
  };

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
