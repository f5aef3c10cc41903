import { MongoClient } from 'mongodb';
import { changeBorrower } from '../../src/store/borrower-changes.js';
import { collections } from '../../src/store/collections.js';

/**
 * Run as its own process: `node stalled-borrower-change.js <mongodb uri> <db> <borrowerId> <stallMs>`
 * reads the borrower, prints `read` (once), then blocks its event loop for stallMs (a long GC
 * pause, a frozen VM) before it writes a change computed from what it read: one more hold
 * 'stale-holder' of 1. Prints `wrote:<attempts>` (how many times it decided), or
 * `refused:<error name>`.
 */
export async function stalledBorrowerChange(uri: string, dbName: string, borrowerId: string, stallMs: number): Promise<string> {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const c = collections(client.db(dbName));
    let attempts = 0;
    await changeBorrower(c, borrowerId, (b) => {
      if (!b) throw new Error(`borrower ${borrowerId} not found`);
      if (++attempts === 1) process.stdout.write('read\n'); // synchronous on a pipe
      const until = Date.now() + stallMs;
      while (Date.now() < until) {
        // The whole process stalls here, between its read and its write.
      }
      return { result: undefined, change: { available: b.available - 1, holds: { ...b.holds, 'stale-holder': 1 } } };
    });
    return `wrote:${attempts}`;
  } catch (err) {
    return `refused:${err instanceof Error ? err.name : String(err)}`;
  } finally {
    await client.close();
  }
}

const [, script, uri, dbName, borrowerId, stallMs] = process.argv;
if (script?.endsWith('stalled-borrower-change.js') && uri && dbName && borrowerId && stallMs) {
  stalledBorrowerChange(uri, dbName, borrowerId, Number(stallMs)).then(
    (outcome) => {
      process.stdout.write(`${outcome}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
