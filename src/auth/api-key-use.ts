import { Lru } from '@credit-facilitator/wire/lru';
import type { Collections } from '../store/collections.js';
import { touchApiKey } from '../store/merchants.js';

/** An API key's last use is recorded at most once a minute (the console shows it to the minute). */
export const API_KEY_USE_INTERVAL_MS = 60_000;

/** Keys this process recorded lately, by hash: the time it last wrote. */
const written = new Lru<number>(10_000);

/**
 * Notes a successful use of an API key, off the request's path: most calls only read a map; once a
 * minute per key a write is sent and not awaited, and a failed write is forgotten (the next use
 * after the interval tries again). The store's filter keeps it to one write a minute across processes.
 */
export function noteApiKeyUse(c: Collections, hash: string, nowMs: number): void {
  const last = written.get(hash);
  if (last !== undefined && nowMs - last < API_KEY_USE_INTERVAL_MS) return;
  written.set(hash, nowMs);
  touchApiKey(c, hash, new Date(nowMs), API_KEY_USE_INTERVAL_MS).catch(() => written.delete(hash));
}
