/**
 * The store's write contention check: single-document inserts (a capture's writes) beside update
 * commands of 50 statements by _id (a batch end's), against any Mongo-wire store, in a scratch
 * database it drops afterwards. Prints the inserts' latency percentiles and the update commands'.
 * It is how the launcher's backend lock and 5-statement parts were chosen (docs/scaling.md,
 * "seventh round"). Usage: node dist/bench/store-contention.js <mongodb-uri> [seconds=15] [updaters=2]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { newStoreClient } from '../src/store/mongo.js';
import { percentile, summarize } from './stats.js';

const DOCS = 5_000;
const STATEMENTS = 50;

async function main(): Promise<void> {
  const [uri, secondsArg, updatersArg] = process.argv.slice(2);
  if (!uri) throw new Error('usage: store-contention <mongodb-uri> [seconds] [updaters]');
  const seconds = Number(secondsArg ?? 15);
  const updaters = Number(updatersArg ?? 2);
  const client = newStoreClient(uri);
  await client.connect();
  const db = client.db(`contention_check_${process.pid}`);
  try {
    const payments = db.collection<{ _id: string; status: string; pad: string; at?: Date }>('payments');
    const keys = db.collection<{ _id: string; v: string }>('keys');
    for (let i = 0; i < DOCS; i += 500) await payments.insertMany(Array.from({ length: 500 }, (_, k) => ({ _id: `p${i + k}`, status: 'QUEUED', pad: 'x'.repeat(600) })));
    // Not what is timed: the collections' creation, and the launcher's _id indexes on new collections (built within 2 s).
    await keys.insertOne({ _id: 'warm-up', v: '' });
    await sleep(3_000);
    const end = Date.now() + seconds * 1000;
    const inserts: number[] = [];
    const updates: number[] = [];
    const updater = async (offset: number) => {
      for (let base = offset; Date.now() < end; base += STATEMENTS) {
        const ops = Array.from({ length: STATEMENTS }, (_, k) => ({ updateOne: { filter: { _id: `p${(base + k) % DOCS}` }, update: { $set: { status: 'CONFIRMED', at: new Date() } } } }));
        const t = performance.now();
        await payments.bulkWrite(ops, { ordered: false });
        updates.push(performance.now() - t);
        await sleep(100);
      }
    };
    const inserter = async (id: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const t = performance.now();
        await keys.insertOne({ _id: `k${id}-${i}`, v: 'y'.repeat(300) });
        inserts.push(performance.now() - t);
        await sleep(20 + Math.random() * 20);
      }
    };
    await Promise.all([...Array.from({ length: updaters }, (_, u) => updater(u * 1_000)), ...Array.from({ length: 4 }, (_, i) => inserter(i))]);
    const sorted = inserts.sort((a, b) => a - b);
    const at = (p: number) => percentile(sorted, p).toFixed(1);
    const u = summarize(updates);
    console.log(`inserts ${sorted.length}: p50 ${at(50)} p90 ${at(90)} p99 ${at(99)} max ${at(100)} ms; update commands of ${STATEMENTS} (${updaters} writers) ${updates.length}: p50 ${u.p50.toFixed(1)} p99 ${u.p99.toFixed(1)} ms`);
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
