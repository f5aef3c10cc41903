import { MongoClient, MongoServerError, type Db } from 'mongodb';
import type { Collections } from './collections.js';
import { collections, ensureIndexes } from './collections.js';

export interface Store {
  client: MongoClient;
  db: Db;
  c: Collections;
  close(): Promise<void>;
}

export async function connectStore(uri: string, dbName: string): Promise<Store> {
  const client = new MongoClient(uri, { maxPoolSize: 50, serverSelectionTimeoutMS: 5000, appName: 'credit-facilitator' });
  await client.connect();
  const db = client.db(dbName);
  const c = collections(db);
  await ensureIndexes(c);
  return { client, db, c, close: () => client.close() };
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}
