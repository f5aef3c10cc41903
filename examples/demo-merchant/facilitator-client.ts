import { z } from 'zod';
import { CaptureAnswerSchema, ErrorAnswerSchema, ReceiptAnswerSchema, retryAfterSeconds, type ReceiptAnswer } from '@credit-facilitator/wire/facilitator-answers';

/** What the demo merchant needs from GET /facilitator/supported. */
export interface SettlementTarget {
  network: `${string}:${string}`;
  asset: string;
}

const SupportedSchema = z.object({
  kinds: z
    .array(
      z.looseObject({
        x402Version: z.literal(2),
        scheme: z.literal('credit'),
        network: z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9-]+$/),
        extra: z.looseObject({ asset: z.string().regex(/^0x[0-9a-fA-F]{40}$/) }),
      }),
    )
    .min(1),
});

export type CaptureOutcome =
  | { kind: 'captured'; receipt: ReceiptAnswer; replayed: boolean }
  | { kind: 'rejected'; status: number; reason: string }
  | { kind: 'busy'; retryAfterSeconds: number }
  | { kind: 'failed'; status: number; code: string };

export class FacilitatorError extends Error {}

/** The merchant's side of the facilitator API. The API key never leaves this object. */
export class FacilitatorClient {
  readonly #apiKey: string;

  constructor(
    readonly baseUrl: string,
    apiKey: string,
    private readonly fetchFn: typeof fetch = fetch,
  ) {
    this.#apiKey = apiKey;
  }

  async supported(): Promise<SettlementTarget> {
    const res = await this.fetchFn(`${this.baseUrl}/facilitator/supported`, { signal: AbortSignal.timeout(10_000) }).catch(() => {
      throw new FacilitatorError(`cannot reach the facilitator at ${this.baseUrl} (is the stack running?)`);
    });
    if (!res.ok) throw new FacilitatorError(`GET /facilitator/supported answered ${res.status}`);
    const parsed = SupportedSchema.safeParse(await res.json());
    if (!parsed.success) throw new FacilitatorError('GET /facilitator/supported: no credit kind with a network and asset');
    const kind = parsed.data.kinds[0]!;
    return { network: kind.network as `${string}:${string}`, asset: kind.extra.asset.toLowerCase() };
  }

  async capture(body: unknown, idempotencyKey: string): Promise<CaptureOutcome> {
    const res = await this.fetchFn(`${this.baseUrl}/facilitator/capture`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.#apiKey}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const json: unknown = await res.json().catch(() => null);
    if (res.status === 200) {
      const ok = CaptureAnswerSchema.safeParse(json);
      if (!ok.success) return { kind: 'failed', status: 502, code: 'UNEXPECTED_CAPTURE_RESPONSE' };
      return { kind: 'captured', receipt: ok.data.receipt, replayed: ok.data.replayed };
    }
    const err = ErrorAnswerSchema.safeParse(json);
    const code = err.success ? err.data.error.code : `HTTP_${res.status}`;
    if (res.status === 422 || res.status === 400 || res.status === 409) {
      const reason = err.success ? (err.data.error.invalidReason ?? err.data.error.code.toLowerCase()) : 'payment_rejected';
      return { kind: 'rejected', status: res.status, reason };
    }
    if (res.status === 429 || res.status === 503) {
      return { kind: 'busy', retryAfterSeconds: retryAfterSeconds(res.headers.get('retry-after')) };
    }
    return { kind: 'failed', status: res.status, code };
  }

  /** The payment's current receipt, or null when the facilitator does not answer with one. */
  async payment(paymentId: string): Promise<ReceiptAnswer | null> {
    const res = await this.fetchFn(`${this.baseUrl}/facilitator/payments/${encodeURIComponent(paymentId)}`, {
      headers: { authorization: `Bearer ${this.#apiKey}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    const parsed = ReceiptAnswerSchema.safeParse(await res.json().catch(() => null));
    return parsed.success ? parsed.data : null;
  }
}
