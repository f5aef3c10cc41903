import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isPublicAddress } from '../net/special-use-address.js';

/** Why an endpoint URL is refused, or null. `allowPrivate` is for dev stacks and tests only. */
export function endpointUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a URL';
  }
  // The URL parser forgives a lot ("https:x/y" is https://x/y): ask for the plain form.
  if (url.protocol !== 'https:' || !/^https:\/\/[^/]/i.test(raw)) return 'must be https';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash) return 'must not have a fragment';
  if (raw.length > 2048) return 'longer than 2048 characters';
  return null;
}

/**
 * Refuses delivery to loopback, private, link-local and multicast addresses (SSRF: an endpoint
 * must not reach into our network). Checked at every delivery, since DNS can change.
 */
export async function assertPublicDestination(raw: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  if (addresses.some((a) => !isPublicAddress(a))) throw new Error(`webhook endpoint ${host} resolves to a private or loopback address`);
}
