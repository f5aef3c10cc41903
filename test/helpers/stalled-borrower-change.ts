import { MongoClient } from 'mongodb';
import { changeBorrower } from '../../src/store/borrower-changes.js';
import { collections } from '../../src/store/collections.js';

/**
 * Run as its own process: `node stalled-borrower-change.js <mongodb uri> <db> <borrowerId> <leaseMs> <stallMs>`
 * takes the borrower's lease with a short lease, reads the borrower, then blocks its event loop for
 * stallMs (a long GC pause, a frozen VM) before it writes a change computed from that stale read.
 * Prints `wrote`, or `refused:<error name>` when the store refused the late write.
 */
export async function stalledBorrowerChange(uri: string, dbName: string, borrowerId: string, leaseMs: number, stallMs: number): Promise<string> {
  const client = new MongoClient(uri);
  await client.connect();
  try {
    const c = collections(client.db(dbName));
    await changeBorrower(
      c,
      borrowerId,
      (b) => {
        if (!b) throw new Error(`borrower ${borrowerId} not found`);
        const until = Date.now() + stallMs;
        while (Date.now() < until) {
          // The whole process stalls here, past its lease.
        }
        return { result: undefined, change: { available: b.available - 1, holds: { ...b.holds, 'stale-holder': 1 } } };
      },
      { leaseMs },
    );
    return 'wrote';
  } catch (err) {
    return `refused:${err instanceof Error ? err.name : String(err)}`;
  } finally {
    await client.close();
  }
}

const [, script, uri, dbName, borrowerId, leaseMs, stallMs] = process.argv;
if (script?.endsWith('stalled-borrower-change.js') && uri && dbName && borrowerId && leaseMs && stallMs) {
  stalledBorrowerChange(uri, dbName, borrowerId, Number(leaseMs), Number(stallMs)).then(
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
