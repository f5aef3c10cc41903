import { randomUUID } from 'node:crypto';
import { fingerprint } from '@credit-facilitator/wire/canonical';

/**
 * A tool call's order reference names the call it prices: `mcp.<digest>.<uuid>`, the digest a
 * SHA-256 of the tool's name and arguments. A voucher signs its orderRef, so it pays for that
 * one call: sent again with the same call it is a retry (the capture replays, one payment), sent
 * with other arguments or to another tool it is refused, without the server keeping any state.
 */
const PREFIX = 'mcp.';
const DIGEST_HEX = 32;

export function callDigest(tool: string, args: unknown): string {
  return fingerprint({ tool, arguments: args ?? {} }).slice(0, DIGEST_HEX);
}

export function orderRefForCall(tool: string, args: unknown): string {
  return `${PREFIX}${callDigest(tool, args)}.${randomUUID()}`;
}

export function orderRefMatchesCall(orderRef: string, tool: string, args: unknown): boolean {
  return orderRef.startsWith(`${PREFIX}${callDigest(tool, args)}.`);
}
