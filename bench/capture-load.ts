import type { TestBorrower, TestMerchant, World } from '../test/helpers/world.js';
import { prepareAndSign } from '../test/helpers/onboarding.js';
import { parseServerTiming } from './phases.js';
import { mapPool, summarize, type LatencySummary } from './stats.js';

interface PreparedCapture {
  merchant: TestMerchant;
  body: string;
  idempotencyKey: string;
}

export interface CaptureLevelResult {
  merchants: number;
  captures: number;
  latencyMs: LatencySummary;
  perSecond: number;
  /** Each capture's paymentId and when its 200 arrived (epoch ms). */
  accepted: { paymentId: string; at: number }[];
  /** Server-Timing phases of each answer (empty when the API does not send them). */
  timings: Record<string, number>[];
}

/**
 * Vouchers through the real prepare_x402_payment (policy, holds, spend intents), `perMerchant` for
 * each merchant, borrowers taken in turn. Prepared before the clock starts: this is the agent's cost.
 */
export async function prepareCaptures(w: World, merchants: readonly TestMerchant[], borrowers: readonly TestBorrower[], perMerchant: number, amount: string) {
  const jobs = merchants.flatMap((merchant, mi) => Array.from({ length: perMerchant }, (_, i) => ({ merchant, borrower: borrowers[(mi * perMerchant + i) % borrowers.length] as TestBorrower })));
  const prepared = await mapPool(jobs, 8, async ({ merchant, borrower }) => {
    const signed = await prepareAndSign(w, borrower, merchant, amount);
    return { merchant, body: JSON.stringify(signed.body), idempotencyKey: signed.idempotencyKey } satisfies PreparedCapture;
  });
  const byMerchant = new Map<TestMerchant, PreparedCapture[]>();
  for (const p of prepared) byMerchant.set(p.merchant, [...(byMerchant.get(p.merchant) ?? []), p]);
  return [...byMerchant.values()];
}

/** Closed loop: each merchant sends its captures one after another, all merchants at once. */
export async function runCaptureLevel(baseUrl: string, queues: PreparedCapture[][]): Promise<CaptureLevelResult> {
  const url = `${baseUrl}/facilitator/capture`;
  const latencies: number[] = [];
  const accepted: { paymentId: string; at: number }[] = [];
  const timings: Record<string, number>[] = [];
  const started = performance.now();
  await Promise.all(
    queues.map(async (queue) => {
      for (const c of queue) {
        const t0 = performance.now();
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${c.merchant.apiKey}`, 'content-type': 'application/json', 'idempotency-key': c.idempotencyKey },
          body: c.body,
        });
        const json = (await res.json()) as { receipt?: { paymentId: string } };
        latencies.push(performance.now() - t0);
        timings.push(parseServerTiming(res.headers.get('server-timing')));
        if (res.status !== 200 || !json.receipt) throw new Error(`capture answered ${res.status}: ${JSON.stringify(json)}`);
        accepted.push({ paymentId: json.receipt.paymentId, at: Date.now() });
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { merchants: queues.length, captures: accepted.length, latencyMs: summarize(latencies), perSecond: accepted.length / seconds, accepted, timings };
}

/** Seconds from each capture's 200 to the store recording CONFIRMED (the workflow's projection). */
export async function confirmationLatency(w: World, accepted: readonly { paymentId: string; at: number }[], timeoutMs: number): Promise<LatencySummary> {
  const deadline = Date.now() + timeoutMs;
  const ids = accepted.map((a) => a.paymentId);
  for (;;) {
    const done = await w.store.c.payments.countDocuments({ _id: { $in: ids }, status: 'CONFIRMED' });
    if (done === ids.length) break;
    if (Date.now() > deadline) throw new Error(`${ids.length - done} of ${ids.length} payments not CONFIRMED within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const docs = await w.store.c.payments.find({ _id: { $in: ids } }, { projection: { updatedAt: 1 } }).toArray();
  const confirmedAt = new Map(docs.map((d) => [d._id, d.updatedAt.getTime()]));
  return summarize(accepted.map((a) => ((confirmedAt.get(a.paymentId) ?? Number.NaN) - a.at) / 1000));
}
