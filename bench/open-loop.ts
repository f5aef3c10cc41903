/**
 * Open-loop load: captures leave at their scheduled times whatever the answers so far (only a cap
 * on requests in flight protects the client itself), and every accepted payment is polled once a
 * second by its merchant until CONFIRMED or FAILED, as a real merchant would. Bounded: whatever is
 * still open when the drain ends is aborted and reported, never waited for.
 * Reusable by a soak or fault suite: it knows nothing about the stack beyond its base URL.
 */
import { BenchHttp } from './http-client.js';
import { parseServerTiming } from './phases.js';

/** One signed capture ready to send: the merchant's key, the JSON body and its Idempotency-Key. */
export interface LoadVoucher {
  apiKey: string;
  body: string;
  idempotencyKey: string;
}

export type ArrivalKind = 'poisson' | 'even';

export type CaptureOutcome =
  /** 200 with a receipt. */
  | 'accepted'
  /** 503 UNAVAILABLE: the service shed the request. */
  | 'shed_unavailable'
  /** 429: rate limited. */
  | 'shed_rate_limited'
  /** Any other answer, or a network error. */
  | 'error'
  /** Sent, but no answer before the drain ended (aborted). */
  | 'unanswered'
  /** Never sent: the client's in-flight cap was reached at its scheduled time. */
  | 'not_sent';

export interface CaptureRecord {
  /** Offsets in ms from the start of the run. */
  scheduledMs: number;
  sentMs?: number;
  answeredMs?: number;
  latencyMs?: number;
  outcome: CaptureOutcome;
  status?: number;
  /** The error code of a non-200 answer (or the network error's message). */
  code?: string;
  paymentId?: string;
  /** Epoch ms of the capture's 200, to compare with the store's timestamps. */
  acceptedAtEpochMs?: number;
  serverTiming?: Record<string, number>;
  polls: number;
  /** The first poll answer that showed a terminal status. */
  terminal?: 'CONFIRMED' | 'FAILED';
  terminalSeenMs?: number;
  /** Seconds from the capture's 200 to the first poll answer that said CONFIRMED. */
  confirmSeconds?: number;
  /** Its merchant long-polls (`Prefer: wait`) instead of a GET every pollEveryMs. */
  longPoll?: boolean;
}

export interface OpenLoopOptions {
  /** {base_url}, e.g. http://127.0.0.1:8402/api/v1 */
  baseUrl: string;
  /** Offered captures per second. */
  rate: number;
  /** Length of the sending window. */
  seconds: number;
  /** One per arrival (at least as many as the schedule has arrivals). */
  vouchers: readonly LoadVoucher[];
  /** Offsets in ms, or how to draw them (default poisson). */
  arrivals?: readonly number[] | ArrivalKind;
  pollEveryMs?: number;
  /**
   * Merchants of two kinds: every other accepted payment is long-polled as the SDK's
   * waitForSettlement does (`Prefer: wait=N` right after the capture answers and again at once after
   * each non-terminal answer, docs/api.md), the others by a plain GET every pollEveryMs. Poll
   * latencies come from the plain ones (a long poll's time is its wait). Unset: all plain.
   */
  longPollSeconds?: number;
  /** The share of accepted payments long-polled when longPollSeconds is set: 1 (all) or 0.5 (every other, the default). */
  longPollShare?: 1 | 0.5;
  /** Requests (captures and polls) the client keeps open at most. */
  maxInFlight?: number;
  /** After the window: how long to wait for answers and terminal statuses at most. */
  drainSeconds?: number;
  /** Called once when the sending window closes (before the drain). */
  onWindowEnd?: () => void | Promise<void>;
  http?: BenchHttp;
}

export interface OpenLoopResult {
  startEpochMs: number;
  windowMs: number;
  /** Offset of the run's end (the drain's end, or earlier when everything was terminal). */
  endMs: number;
  records: CaptureRecord[];
  pollLatenciesMs: number[];
  /** Poll answers other than 200, by `status code` (or network error). */
  pollFailures: Record<string, number>;
  /** Requests still open when the run ended, aborted. */
  abortedAtEnd: number;
  /** How late captures left against their schedule (client lag), ms. */
  sendLagMs: number[];
  maxInFlightSeen: number;
}

/** Arrival offsets (ms) in [0, seconds): a Poisson process of `rate`, or evenly spaced. */
export function planArrivals(rate: number, seconds: number, kind: ArrivalKind = 'poisson', random: () => number = Math.random): number[] {
  const windowMs = seconds * 1000;
  const out: number[] = [];
  if (rate <= 0) return out;
  if (kind === 'even') {
    for (let t = 0; t < windowMs; t += 1000 / rate) out.push(t);
    return out;
  }
  for (let t = -Math.log(1 - random()) * (1000 / rate); t < windowMs; t += -Math.log(1 - random()) * (1000 / rate)) out.push(t);
  return out;
}

function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

const header = (h: Record<string, string | string[] | undefined>, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? null);
};

export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const windowMs = o.seconds * 1000;
  const arrivals = Array.isArray(o.arrivals) ? (o.arrivals as readonly number[]) : planArrivals(o.rate, o.seconds, (o.arrivals as ArrivalKind | undefined) ?? 'poisson');
  const pollEveryMs = o.pollEveryMs ?? 1000;
  const longPolls = o.longPollSeconds !== undefined && o.longPollSeconds > 0;
  let acceptedSoFar = 0;
  const pollHeaders = (rec: CaptureRecord, apiKey: string): Record<string, string> => (rec.longPoll ? { authorization: `Bearer ${apiKey}`, prefer: `wait=${o.longPollSeconds}` } : { authorization: `Bearer ${apiKey}` });
  const maxInFlight = o.maxInFlight ?? 2000;
  const drainMs = (o.drainSeconds ?? 15) * 1000;
  const http = o.http ?? new BenchHttp();
  const captureUrl = new URL(`${o.baseUrl}/facilitator/capture`);
  const statusUrl = (id: string) => new URL(`${o.baseUrl}/facilitator/payments/${id}`);

  const t0 = performance.now();
  const startEpochMs = performance.timeOrigin + t0;
  const now = () => performance.now() - t0;
  const records: CaptureRecord[] = arrivals.map((scheduledMs) => ({ scheduledMs, outcome: 'not_sent', polls: 0 }));
  const pollLatenciesMs: number[] = [];
  const pollFailures: Record<string, number> = {};
  const sendLagMs: number[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let maxInFlightSeen = 0;
  let answered = 0;
  let sent = 0;
  let pollingOpen = 0;

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, Math.max(0, ms));
    timers.add(t);
  };
  const noteInFlight = () => {
    if (http.inFlight > maxInFlightSeen) maxInFlightSeen = http.inFlight;
  };

  const poll = (rec: CaptureRecord, apiKey: string) => {
    if (stopped) return;
    if (http.inFlight >= maxInFlight) return later(pollEveryMs, () => poll(rec, apiKey));
    const started = now();
    rec.polls++;
    // A held long poll asks again at once; after an error, an answer not held (the API holds only
    // so many), or when polling plainly, once per pollEveryMs (as the SDK's waitForSettlement does).
    const next = (pause = false) => later(rec.longPoll && !pause ? 0 : started + pollEveryMs - now(), () => poll(rec, apiKey));
    http.send(statusUrl(rec.paymentId as string), 'GET', pollHeaders(rec, apiKey)).then(
      (ans) => {
        if (stopped) return;
        const at = now();
        if (!rec.longPoll) pollLatenciesMs.push(at - started); // a long poll's time is its wait, not the API's
        if (ans.status === 200) {
          const status = (JSON.parse(ans.body) as { status?: string }).status;
          if (status === 'CONFIRMED' || status === 'FAILED') {
            rec.terminal = status;
            rec.terminalSeenMs = at;
            if (status === 'CONFIRMED') rec.confirmSeconds = (at - (rec.answeredMs as number)) / 1000;
            pollingOpen--;
            return;
          }
        } else {
          const k = `${ans.status} ${errorCode(ans.body) ?? ''}`.trim();
          pollFailures[k] = (pollFailures[k] ?? 0) + 1;
          return next(true);
        }
        next(rec.longPoll === true && header(ans.headers, 'preference-applied') === null);
      },
      (err: Error) => {
        if (stopped) return;
        const k = `network: ${err.message}`;
        pollFailures[k] = (pollFailures[k] ?? 0) + 1;
        next(true);
      },
    );
    noteInFlight();
  };

  const fire = (i: number) => {
    const rec = records[i] as CaptureRecord;
    const v = o.vouchers[i];
    if (!v) {
      rec.code = 'no voucher prepared';
      return;
    }
    if (http.inFlight >= maxInFlight) {
      rec.code = `client in-flight cap (${maxInFlight})`;
      return;
    }
    const sentAt = now();
    rec.sentMs = sentAt;
    sendLagMs.push(sentAt - rec.scheduledMs);
    sent++;
    rec.outcome = 'unanswered';
    http.send(captureUrl, 'POST', { authorization: `Bearer ${v.apiKey}`, 'content-type': 'application/json', 'idempotency-key': v.idempotencyKey, 'x-sent-at': String(performance.timeOrigin + performance.now()) }, v.body).then(
      (ans) => {
        if (stopped) return;
        const at = now();
        answered++;
        rec.answeredMs = at;
        rec.latencyMs = at - sentAt;
        rec.status = ans.status;
        rec.serverTiming = parseServerTiming(header(ans.headers, 'server-timing'));
        if (ans.status === 200) {
          const paymentId = (JSON.parse(ans.body) as { receipt?: { paymentId?: string } }).receipt?.paymentId;
          if (paymentId) {
            rec.outcome = 'accepted';
            rec.paymentId = paymentId;
            rec.acceptedAtEpochMs = startEpochMs + at;
            pollingOpen++;
            rec.longPoll = longPolls && (o.longPollShare === 1 || acceptedSoFar++ % 2 === 0);
            later(rec.longPoll ? 0 : pollEveryMs, () => poll(rec, v.apiKey));
            return;
          }
          rec.outcome = 'error';
          rec.code = '200 without a receipt';
          return;
        }
        const code = errorCode(ans.body);
        if (code !== undefined) rec.code = code;
        rec.outcome = ans.status === 503 && code === 'UNAVAILABLE' ? 'shed_unavailable' : ans.status === 429 ? 'shed_rate_limited' : 'error';
      },
      (err: Error) => {
        if (stopped) return;
        answered++;
        rec.answeredMs = now();
        rec.outcome = 'error';
        rec.code = `network: ${err.message}`;
      },
    );
    noteInFlight();
  };

  // The scheduler: one timer at a time, firing every arrival that is due (late ones included).
  await new Promise<void>((resolve) => {
    let i = 0;
    const tick = () => {
      const t = now();
      while (i < arrivals.length && (arrivals[i] as number) <= t) fire(i++);
      if (i < arrivals.length) later((arrivals[i] as number) - now(), tick);
      else later(windowMs - now(), resolve);
    };
    tick();
  });
  await o.onWindowEnd?.();

  const deadline = windowMs + drainMs;
  while (now() < deadline && (answered < sent || pollingOpen > 0)) await new Promise((r) => setTimeout(r, 100));
  stopped = true;
  for (const t of timers) clearTimeout(t);
  timers.clear();
  const abortedAtEnd = http.abortAll();
  if (!o.http) http.close();
  return { startEpochMs, windowMs, endMs: now(), records, pollLatenciesMs, pollFailures, abortedAtEnd, sendLagMs, maxInFlightSeen };
}
