import { MongoClient } from 'mongodb';
import { collections } from '../../src/store/collections.js';
import { withLease } from '../../src/store/lease-lock.js';

/**
 * Run as its own process: `node lease-increments.js <mongodb uri> <db> <key> <n>` adds 1 to the
 * counter `key` n times at once, each a read then a write under the lease `key`, then exits.
 * Several of these beside the test process contend for one lease across processes.
 */
export async function leaseIncrements(uri: string, dbName: string, key: string, n: number): Promise<void> {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const db = client.db(dbName);
    const c = collections(db);
    const counters = db.collection<{ _id: string; n: number }>('lease_test_counters');
    await Promise.all(
      Array.from({ length: n }, () =>
        withLease(c, key, async () => {
          const doc = await counters.findOne({ _id: key });
          await new Promise((r) => setTimeout(r, 2));
          await counters.updateOne({ _id: key }, { $set: { n: (doc?.n ?? 0) + 1 } });
        }),
      ),
    );
  } finally {
    await client.close();
  }
}

const [, script, uri, dbName, key, n] = process.argv;
if (script?.endsWith('lease-increments.js') && uri && dbName && key && n) {
  leaseIncrements(uri, dbName, key, Number(n)).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
