/**
 * The merchant ledger's write cost, store only: the batch end's `recordLedgerLines` for BATCHES
 * batches of 150 lines across 50 merchants, 3 s of capture time apart (one minute of pages),
 * against any Mongo-wire store, in a scratch database it drops afterwards. Prints the per-batch
 * latency (median, first and last five), the store commands per batch, and the time to read one
 * minute of a merchant's lines. It is how pages per writer were chosen (docs/scaling.md, "twelfth
 * round"). Usage: node dist/bench/ledger-store.js <mongodb-uri> [batches=20]
 */
import { randomUUID } from 'node:crypto';
import { minuteKey, type LedgerLine } from '../src/domain/payment-ledger.js';
import { collections } from '../src/store/collections.js';
import { newStoreClient } from '../src/store/mongo.js';
import { ledgerPage, recordLedgerLines } from '../src/store/payment-ledger.js';
import { percentile } from './stats.js';

const LINES = 150;
const MERCHANTS = 50;
const BATCH_EVERY_MS = 3_000;

function batchLines(batchId: string, at: Date): (LedgerLine & { merchantId: string })[] {
  return Array.from({ length: LINES }, (_, i) => ({
    merchantId: `m${i % MERCHANTS}`,
    paymentId: randomUUID(),
    capturedAt: new Date(at.getTime() - (i % 3) * 1000 - (i % 7) * 37).toISOString(),
    status: 'CONFIRMED' as const,
    payer: `b${i % MERCHANTS}`,
    amount: '1000',
    asset: `0x${'a'.repeat(40)}`,
    network: 'eip155:31337',
    orderRef: `order-${randomUUID()}`,
    batchId,
  }));
}

async function main(): Promise<void> {
  const [uri, batchesArg] = process.argv.slice(2);
  if (!uri) throw new Error('usage: ledger-store <mongodb-uri> [batches]');
  const batches = Number(batchesArg ?? 20);
  let commands = 0;
  const client = newStoreClient(uri, { onCommand: () => commands++ });
  await client.connect();
  const db = client.db(`ledger_check_${process.pid}`);
  try {
    const c = collections(db);
    const start = Date.UTC(2026, 0, 1, 12, 0, 5);
    const ms: number[] = [];
    const perBatch: number[] = [];
    for (let b = 0; b < batches; b++) {
      const batchId = randomUUID();
      const lines = batchLines(batchId, new Date(start + b * BATCH_EVERY_MS));
      const [t0, c0] = [performance.now(), commands];
      await recordLedgerLines(c, batchId, lines);
      ms.push(performance.now() - t0);
      perBatch.push(commands - c0);
    }
    const minute = minuteKey(new Date(start + BATCH_EVERY_MS));
    const t0 = performance.now();
    for (let m = 0; m < MERCHANTS; m++) await ledgerPage(c, `m${m}`, minute);
    const readMs = (performance.now() - t0) / MERCHANTS;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    console.log(
      `ledger step, ${batches} batches of ${LINES} lines for ${MERCHANTS} merchants: median ${percentile([...ms].sort((a, b) => a - b), 50).toFixed(1)} ms, ` +
        `first 5 ${mean(ms.slice(0, 5)).toFixed(1)} ms, last 5 ${mean(ms.slice(-5)).toFixed(1)} ms; ` +
        `store commands per batch ${perBatch.join(',')}; one merchant's minute read in ${readMs.toFixed(2)} ms`,
    );
  } finally {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
