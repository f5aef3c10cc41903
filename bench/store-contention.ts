/**
 * The store's write contention check: single-document inserts (a capture's writes) beside update
 * commands of 50 statements by _id (a batch end's), against any Mongo-wire store, in a scratch
 * database it drops afterwards. Prints the inserts' latency percentiles and the update commands'.
 * It is how the launcher's backend lock and 5-statement parts were chosen (docs/scaling.md,
 * "seventh round"). Usage: node dist/bench/store-contention.js <mongodb-uri> [seconds=15] [updaters=2]
 */
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
    await new Promise((r) => setTimeout(r, 3_000));
    const end = Date.now() + seconds * 1000;
    const inserts: number[] = [];
    const updates: number[] = [];
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const updater = async (offset: number) => {
      for (let base = offset; Date.now() < end; base += STATEMENTS) {
        const ops = Array.from({ length: STATEMENTS }, (_, k) => ({ updateOne: { filter: { _id: `p${(base + k) % DOCS}` }, update: { $set: { status: 'CONFIRMED', at: new Date() } } } }));
        const t = performance.now();
        await payments.bulkWrite(ops, { ordered: false });
        updates.push(performance.now() - t);
        await pause(100);
      }
    };
    const inserter = async (id: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const t = performance.now();
        await keys.insertOne({ _id: `k${id}-${i}`, v: 'y'.repeat(300) });
        inserts.push(performance.now() - t);
        await pause(20 + Math.random() * 20);
      }
    };
    await Promise.all([...Array.from({ length: updaters }, (_, u) => updater(u * 1_000)), ...Array.from({ length: 4 }, (_, i) => inserter(i))]);
    const i = summarize(inserts);
    const u = summarize(updates);
    const f = (x: number) => x.toFixed(1);
    console.log(`inserts ${inserts.length}: p50 ${f(i.p50)} p90 ${f(percentile([...inserts].sort((a, b) => a - b), 90))} p99 ${f(i.p99)} max ${f(i.max)} ms; update commands of ${STATEMENTS} (${updaters} writers) ${updates.length}: p50 ${f(u.p50)} p99 ${f(u.p99)} ms`);
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
