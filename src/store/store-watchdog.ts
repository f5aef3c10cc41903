import type { Logger } from '../observability/logger.js';
import { newStoreClient, type Store } from './mongo.js';

export interface StoreWatchdogOptions {
  uri: string;
  logger: Logger;
  onCommand?: (commandName: string, collection: string) => void;
  onCommandDone?: (commandName: string, seconds: number) => void;
  /** How often the store is pinged through the process's client. */
  intervalMs?: number;
  /** How long pings must have failed before a fresh client is tried. */
  wedgedAfterMs?: number;
}

/**
 * Keeps a long-running process's store client from staying broken after the store restarts.
 * Seen under load (docs/reliability.md): after a store SIGKILL and restart, one worker's client
 * kept failing server selection with the error of a connection from before the restart for eight
 * minutes, while other processes (and a new client in the same process) reached the store at
 * once. When pings through the process's client have failed for `wedgedAfterMs`, a fresh client
 * is connected; if it reaches the store, it replaces the old one (every holder of `store.c`
 * follows). If the store itself is down, nothing changes until it is back.
 */
export function startStoreWatchdog(store: Store, opts: StoreWatchdogOptions): { stop(): void } {
  const intervalMs = opts.intervalMs ?? 5_000;
  const wedgedAfterMs = opts.wedgedAfterMs ?? 30_000;
  let failingSince: number | undefined;
  let busy = false;
  let stopped = false;

  const check = async () => {
    try {
      await store.db.command({ ping: 1 });
      failingSince = undefined;
      return;
    } catch {
      failingSince ??= Date.now();
    }
    if (Date.now() - failingSince < wedgedAfterMs) return;
    const fresh = newStoreClient(opts.uri, { ...(opts.onCommand ? { onCommand: opts.onCommand } : {}), ...(opts.onCommandDone ? { onCommandDone: opts.onCommandDone } : {}) });
    try {
      await fresh.connect();
      await fresh.db('admin').command({ ping: 1 });
    } catch {
      await fresh.close().catch(() => undefined);
      return; // the store is down for everyone: wait for it
    }
    if (stopped) {
      await fresh.close().catch(() => undefined);
      return;
    }
    opts.logger.warn('store client replaced: it failed for longer than a fresh client needed to reach the store', {
      failingForMs: Date.now() - failingSince,
    });
    store.replaceClient(fresh);
    failingSince = undefined;
  };

  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    void check().finally(() => {
      busy = false;
    });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
