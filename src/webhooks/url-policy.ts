import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Env } from '../config/env.js';
import type { AddressCheck } from '../net/pinned-request.js';
import { embedsIpv4, isLoopbackAddress, isPublicAddress } from '../net/special-use-address.js';

/** Where webhook endpoints may point. Production: https to public addresses only. */
export interface WebhookDestinationPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: https to any address (tests, closed dev networks). */
  allowPrivate: boolean;
  /** Development mode: a receiver on this machine, over http or https (`npm run admin -- webhook listen`). */
  allowLoopback: boolean;
}

export const PUBLIC_ONLY: WebhookDestinationPolicy = { allowPrivate: false, allowLoopback: false };

/** Loopback receivers only on a development stack (NODE_ENV=development with DEV_TOOLS=true), never in production or test mode. */
export function webhookDestinationPolicy(env: Pick<Env, 'NODE_ENV' | 'DEV_TOOLS' | 'WEBHOOK_ALLOW_PRIVATE'>): WebhookDestinationPolicy {
  return { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE, allowLoopback: env.NODE_ENV === 'development' && env.DEV_TOOLS };
}

export const IPV4_EMBEDDING_PROBLEM =
  'must not be an IPv6 address that embeds an IPv4 address (IPv4-mapped, compatible, translated, NAT64, 6to4, Teredo); write the IPv4 address or a host name';

/** The IP literal of a URL's host ([::1] is ::1), or null for a host name. */
function ipLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : null;
}

/** Why an endpoint URL is refused, or null. */
export function endpointUrlProblem(raw: string, policy: WebhookDestinationPolicy = PUBLIC_ONLY): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  // The URL parser forgives a lot ("https:x/y" is https://x/y): ask for the plain form.
  const httpOk = policy.allowLoopback && url.protocol === 'http:' && /^http:\/\/[^/]/i.test(raw);
  if (!httpOk && (url.protocol !== 'https:' || !/^https:\/\/[^/]/i.test(raw))) {
    return policy.allowLoopback ? 'must be https (http only to a loopback receiver, in development mode)' : 'must be https';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash) return 'must not have a fragment';
  if (raw.length > 2048) return 'longer than 2048 characters';
  // In every mode, the dev loopback allowance and WEBHOOK_ALLOW_PRIVATE included (docs/api.md).
  const literal = ipLiteral(url);
  if (literal !== null && embedsIpv4(literal)) return IPV4_EMBEDDING_PROBLEM;
  return null;
}

/** The addresses a delivery to `url` may connect to: an http endpoint only ever reaches loopback; none embeds an IPv4 address. */
export function allowedAddresses(url: URL, policy: WebhookDestinationPolicy): AddressCheck {
  if (url.protocol === 'http:') return (ip) => policy.allowLoopback && isLoopbackAddress(ip);
  if (policy.allowPrivate) return (ip) => !embedsIpv4(ip);
  return (ip) => isPublicAddress(ip) || (policy.allowLoopback && isLoopbackAddress(ip));
}

/**
 * Refuses an endpoint whose host resolves to an address the policy does not allow (SSRF: an
 * endpoint must not reach into our network). Registration checks here; every delivery checks again
 * on the connection's own DNS lookup (src/net/pinned-request.ts), since DNS can change.
 */
export async function assertAllowedDestination(raw: string, policy: WebhookDestinationPolicy): Promise<void> {
  const url = new URL(raw);
  const allowed = allowedAddresses(url, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  if (addresses.length === 0 || addresses.some((a) => !allowed(a))) throw new Error(`webhook endpoint ${host} resolves to a private or loopback address`);
}
