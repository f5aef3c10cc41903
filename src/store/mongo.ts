import { MongoClient, MongoServerError, type Db } from 'mongodb';
import type { Collections } from './collections.js';
import { collections, ensureIndexes } from './collections.js';

export interface Store {
  readonly client: MongoClient;
  readonly db: Db;
  /** Stable across replaceClient: each collection forwards to the current client's. */
  readonly c: Collections;
  /** Swaps in a freshly connected client (see store-watchdog.ts) and closes the old one. */
  replaceClient(fresh: MongoClient): void;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Called with the name and collection of every command sent (for the store-commands metric). */
  onCommand?: (commandName: string, collection: string) => void;
  /** Called with the name of every command answered or failed and how long it took (the store latency metric). */
  onCommandDone?: (commandName: string, seconds: number) => void;
  /**
   * How long to keep trying when the store does not answer at start (a process started while the
   * store restarts); default 0: the first failure throws (the CLI should say so at once).
   */
  waitMs?: number;
  onRetry?: (err: unknown) => void;
}

/** The collection a command addresses, with a shard's queue number dropped so the label stays bounded. */
function collectionOf(target: unknown): string {
  return typeof target === 'string' ? target.replace(/_\d+$/, '') : '';
}

/** A client with the product's options; `connect` is the caller's. */
export function newStoreClient(uri: string, opts: Pick<StoreOptions, 'onCommand' | 'onCommandDone'> = {}): MongoClient {
  const monitorCommands = opts.onCommand !== undefined || opts.onCommandDone !== undefined;
  const client = new MongoClient(uri, { maxPoolSize: 50, serverSelectionTimeoutMS: 5000, appName: 'credit-facilitator', monitorCommands });
  if (opts.onCommand) {
    const count = opts.onCommand;
    client.on('commandStarted', (e) => count(e.commandName, collectionOf(e.command[e.commandName])));
  }
  if (opts.onCommandDone) {
    const done = opts.onCommandDone;
    client.on('commandSucceeded', (e) => done(e.commandName, e.duration / 1000));
    client.on('commandFailed', (e) => done(e.commandName, e.duration / 1000));
  }
  return client;
}

/** Whether a store answers at `uri` within `timeoutMs` (the stack tooling's readiness probe). */
export async function pingStore(uri: string, timeoutMs: number): Promise<boolean> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: timeoutMs, connectTimeoutMS: timeoutMs });
  try {
    await client.connect();
    const res = await client.db('admin').command({ ping: 1 });
    return res.ok === 1;
  } finally {
    await client.close();
  }
}

export async function connectStore(uri: string, dbName: string, opts: StoreOptions = {}): Promise<Store> {
  const deadline = Date.now() + (opts.waitMs ?? 0);
  for (;;) {
    const client = newStoreClient(uri, opts);
    try {
      await client.connect();
      const store = swappableStore(client, dbName);
      await ensureIndexes(store.c);
      return store;
    } catch (err) {
      await client.close().catch(() => undefined);
      if (Date.now() >= deadline) throw err;
      opts.onRetry?.(err);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

function swappableStore(first: MongoClient, dbName: string): Store {
  let client = first;
  let db = client.db(dbName);
  const current = () => db;
  return {
    get client() {
      return client;
    },
    get db() {
      return db;
    },
    c: collections(current),
    replaceClient(fresh: MongoClient) {
      const old = client;
      client = fresh;
      db = fresh.db(dbName);
      void old.close(true).catch(() => undefined);
    },
    close: () => client.close(),
  };
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}
