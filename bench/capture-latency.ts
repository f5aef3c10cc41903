/**
 * Capture latency and capture -> CONFIRMED time on a real stack of its own (free ports, temp dir,
 * rate limits raised). Prints figures; asserts nothing. `npm run bench`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { freePort } from '../src/stack/processes.js';
import { startStack } from '../src/stack/stack.js';
import { connectWorld, newBorrower, newMerchant, newVoucher } from '../test/helpers/world.js';

const N = Number(process.env.BENCH_CAPTURES ?? '200');
const CONCURRENCY = [1, 10];

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'cf-bench-'));
  const source = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: dir,
    API_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
    MONGODB_PORT: String(await freePort()),
    ANVIL_PORT: String(await freePort()),
    RATE_LIMIT_CAPTURE_PER_MIN: '1000000',
    RATE_LIMIT_CAPTURE_BURST: '100000',
  };
  for (const k of ['MONGODB_URI', 'RPC_URL', 'SETTLEMENT_CONTRACT_ADDRESS', 'ASSET_ADDRESS', 'SETTLER_PRIVATE_KEY']) delete (source as Record<string, unknown>)[k];
  const stack = await startStack({ source, quiet: true, headless: true });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => void stack.stop().finally(() => process.exit(130)));
  }
  const w = await connectWorld(stack.env);
  const store = w.store;
  try {
    const m = await newMerchant(w, 'Bench');
    // Onboarded through the real agent flow; every voucher below comes from prepare_x402_payment.
    const b = await newBorrower(w, { perPaymentLimit: '1000', dailyLimit: String(N * CONCURRENCY.length * 1000) });
    const url = `${stack.urls.baseUrl}/facilitator/capture`;
    console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}; ${N} captures per run; stack: Temporal dev server, FerretDB, anvil`);
    console.log('concurrency | p50 ms | p95 ms | p99 ms | captures/s | capture->CONFIRMED p50 s');
    for (const c of CONCURRENCY) {
      const bodies: string[] = [];
      for (let i = 0; i < N; i++) {
        const v = await newVoucher(w, m, b, '1000');
        bodies.push(JSON.stringify(v.captureBody));
      }
      const latencies: number[] = [];
      const ids: { id: string; at: number }[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (next < bodies.length) {
            const body = bodies[next++] as string;
            const t0 = performance.now();
            const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${m.apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body });
            const json = (await res.json()) as { receipt?: { paymentId: string } };
            latencies.push(performance.now() - t0);
            if (res.status !== 200 || !json.receipt) throw new Error(`capture failed: ${res.status} ${JSON.stringify(json)}`);
            ids.push({ id: json.receipt.paymentId, at: Date.now() });
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const confirmTimes: number[] = [];
      for (const { id, at } of ids) {
        for (;;) {
          const doc = await store.c.payments.findOne({ _id: id });
          if (doc?.status === 'CONFIRMED' && doc.confirmedAt) {
            confirmTimes.push((doc.updatedAt.getTime() - at) / 1000);
            break;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      latencies.sort((a, b) => a - b);
      confirmTimes.sort((a, b) => a - b);
      console.log(
        `${String(c).padStart(11)} | ${pct(latencies, 50).toFixed(1).padStart(6)} | ${pct(latencies, 95).toFixed(1).padStart(6)} | ${pct(latencies, 99).toFixed(1).padStart(6)} | ${(N / seconds).toFixed(1).padStart(10)} | ${pct(confirmTimes, 50).toFixed(2)}`,
      );
    }
    console.log('baseline: none yet (first measurement; issue 4 sets the bars: p50 <= 10 ms, p99 <= 50 ms at 10 concurrent, >= 300/s)');
  } finally {
    await store.close();
    await w.temporal.connection.close();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
