import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { collections, type Collections } from '../../src/store/collections.js';
import type { World } from './world.js';

export interface StoreCommand {
  name: string;
  collection: string;
  /** The filters the command selects documents with (none for an insert). */
  filters: Document[];
}

const DATA_COMMANDS = new Set(['find', 'insert', 'update', 'delete', 'findAndModify', 'aggregate', 'count', 'distinct']);

function describe(e: CommandStartedEvent): StoreCommand {
  const cmd = e.command;
  const collection = String(cmd[e.commandName]);
  const filters: Document[] =
    e.commandName === 'update'
      ? (cmd.updates as Document[]).map((u) => u.q as Document)
      : e.commandName === 'delete'
        ? (cmd.deletes as Document[]).map((d) => d.q as Document)
        : e.commandName === 'findAndModify'
          ? [cmd.query as Document]
          : e.commandName === 'insert'
            ? []
            : [(cmd.filter ?? cmd.query ?? {}) as Document];
  return { name: e.commandName, collection, filters };
}

/** Runs `work` on the test stack's store through a client that records every data command sent. */
export async function recordStoreCommands(w: World, work: (c: Collections) => Promise<unknown>): Promise<StoreCommand[]> {
  const client = new MongoClient(w.env.MONGODB_URI as string, { monitorCommands: true });
  const seen: StoreCommand[] = [];
  client.on('commandStarted', (e) => {
    if (DATA_COMMANDS.has(e.commandName)) seen.push(describe(e));
  });
  await client.connect();
  try {
    await work(collections(client.db(w.store.db.databaseName)));
  } finally {
    await client.close();
  }
  return seen;
}

/**
 * A write whose filter is `_id` plus plain equalities (a compare-and-set: a lease release, a fenced
 * write): our FerretDB launcher resolves it by _id under its write lock (tools/ferretdb/idfilter.go).
 */
export function isCompareAndSetById(cmd: StoreCommand, filter: Document): boolean {
  if (cmd.name !== 'update' && cmd.name !== 'delete') return false;
  if (typeof filter._id !== 'string') return false;
  return Object.entries(filter).every(
    ([k, v]) => k === '_id' || (!k.startsWith('$') && !k.includes('.') && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof Date)),
  );
}

/** True for `{_id: "<string>"}` alone: the only filter FerretDB v1 answers without a table scan. */
export function isByIdOnly(filter: Document): boolean {
  const keys = Object.keys(filter);
  return keys.length === 1 && keys[0] === '_id' && typeof filter._id === 'string';
}

/** A find by `{_id: {$in: [<strings>]}}` alone: our launcher looks each id up (tools/ferretdb/idsfind.go takes up to 1000). */
export function isFindByIds(cmd: StoreCommand, filter: Document): boolean {
  if (cmd.name !== 'find' || Object.keys(filter).length !== 1) return false;
  const cond = filter._id as Document | undefined;
  if (!cond || typeof cond !== 'object' || Object.keys(cond).length !== 1) return false;
  const ids: unknown = cond.$in;
  return Array.isArray(ids) && ids.length <= 1000 && ids.every((id) => typeof id === 'string');
}
