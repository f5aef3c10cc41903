import type { PaymentCreationContext } from '@x402/core/client';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayloadContext, PaymentPayloadResult, PaymentRequired, PaymentRequirements, SchemeClientHooks, SchemeNetworkClient } from '@x402/core/types';
import type { PrepareX402Args } from './tool-types.js';
import { signPreparedPayment } from './voucher-signer.js';
import type { WorkloadKey } from './workload-key.js';
import { PaymentRequiredSchema } from './x402-messages.js';

export interface CreditSchemeClientOptions {
  /** prepare_x402_payment: CreditAgent.prepareX402Payment, or anything with its contract. */
  prepare: (args: PrepareX402Args) => Promise<unknown>;
  /** The workload key's Ed25519 private key; it signs locally and is never sent. */
  privateKey: Uint8Array;
  /** Required when the borrower has several terminals. */
  operationalAgentId?: string;
  /** Refuse to sign for more than this (base units), whatever the service allows. */
  maxAmount?: string;
  now?: () => number;
}

/** What the plug-in needs from a CreditAgent. */
export interface PreparingAgent {
  prepareX402Payment(args: PrepareX402Args): Promise<unknown>;
  readonly operationalAgentId: string | undefined;
}

export class CreditSchemeClientError extends Error {
  override readonly name = 'CreditSchemeClientError';
}

/** Payments signed but not yet sent, by voucherId → Idempotency-Key; bounded so a long-lived agent does not grow it. */
const MAX_REMEMBERED_KEYS = 256;

/**
 * The `credit` scheme for @x402/core's x402Client (and so for wrapFetchWithPayment from
 * @x402/fetch). On a 402 that offers `credit`, it asks the service to prepare the voucher
 * (prepare_x402_payment), re-checks every term against the merchant's own 402 and the signing
 * string against the voucher (voucher-signer.ts), signs with the workload key and
 * returns `{voucher, signature}` as the PaymentPayload's `payload`.
 */
export class CreditSchemeClient implements SchemeNetworkClient {
  readonly scheme = 'credit';
  readonly schemeHooks: SchemeClientHooks;
  readonly #opts: CreditSchemeClientOptions;
  /**
   * createPaymentPayload() only receives the chosen requirements, but the voucher must be checked
   * against the whole 402 (its resource URL) and prepare needs it too. x402Client runs this
   * scheme's beforePaymentCreation hook with the 402 and the very requirements object it then
   * passes to createPaymentPayload(), so the hook hands the 402 over through this map.
   */
  readonly #pending = new WeakMap<PaymentRequirements, PaymentRequired>();
  readonly #idempotencyKeys = new Map<string, string>();

  constructor(opts: CreditSchemeClientOptions) {
    this.#opts = opts;
    this.schemeHooks = {
      onBeforePaymentCreation: async (ctx: PaymentCreationContext) => {
        if (ctx.selectedRequirements.scheme === this.scheme) this.#pending.set(ctx.selectedRequirements, ctx.paymentRequired);
      },
    };
  }

  /** The plug-in for a connected CreditAgent; pass the same workload key the agent registered. */
  static forAgent(agent: PreparingAgent, workloadKey: Pick<WorkloadKey, 'privateKey'>, opts: { maxAmount?: string } = {}): CreditSchemeClient {
    return new CreditSchemeClient({
      prepare: (args) => agent.prepareX402Payment(args),
      privateKey: workloadKey.privateKey,
      ...(agent.operationalAgentId ? { operationalAgentId: agent.operationalAgentId } : {}),
      ...opts,
    });
  }

  async createPaymentPayload(x402Version: number, requirements: PaymentRequirements, context?: PaymentPayloadContext): Promise<PaymentPayloadResult> {
    if (x402Version !== 2) throw new CreditSchemeClientError(`credit: x402 version ${x402Version} is not supported (v2 only)`);
    const whole = this.#pending.get(requirements);
    if (!whole) {
      throw new CreditSchemeClientError('credit: no PaymentRequired for these requirements (use the scheme through x402Client, which runs its beforePaymentCreation hook)');
    }
    this.#pending.delete(requirements);
    // Only the entry x402Client chose, so the service prepares exactly the offer this client picked.
    const chosen = PaymentRequiredSchema.safeParse({ ...whole, accepts: [requirements] });
    if (!chosen.success) throw new CreditSchemeClientError(`credit: the 402 is not an x402 v2 PaymentRequired: ${chosen.error.issues[0]?.message ?? 'invalid'}`);
    const accepted = chosen.data.accepts[0]!;
    const orderRef = typeof accepted.extra.orderRef === 'string' ? accepted.extra.orderRef : undefined;
    const { operationalAgentId } = this.#opts;

    const prepared = await this.#opts.prepare({
      payment_required: { ...whole, accepts: [requirements] } as unknown as Record<string, unknown>,
      ...(orderRef !== undefined ? { order_ref: orderRef } : {}),
      ...(operationalAgentId ? { operational_agent_id: operationalAgentId } : {}),
    });
    const maxAmount = smaller(this.#opts.maxAmount, context?.maxAmountPerPayment);
    const signed = signPreparedPayment(
      prepared,
      {
        paymentRequired: chosen.data,
        accepted,
        ...(maxAmount !== undefined ? { maxAmount } : {}),
        ...(operationalAgentId ? { operationalAgentId } : {}),
        ...(this.#opts.now ? { nowSeconds: Math.floor(this.#opts.now() / 1000) } : {}),
      },
      this.#opts.privateKey,
    );
    this.#remember(signed.voucher.voucherId, signed.idempotencyKey);
    return { x402Version: 2, payload: signed.paymentPayload.payload };
  }

  /** The Idempotency-Key prepare_x402_payment issued for a voucher this client signed. */
  idempotencyKeyFor(voucherId: string): string | undefined {
    return this.#idempotencyKeys.get(voucherId.toLowerCase());
  }

  /**
   * wrapFetchWithPayment sets only the PAYMENT-SIGNATURE header. Wrap the fetch it calls with this
   * to add the Idempotency-Key prepare issued to paid requests (merchants built on our API, like
   * the demo merchant, capture under it). Other requests pass through untouched.
   */
  withIdempotencyKey(inner: typeof fetch = fetch): typeof fetch {
    return async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const request = new Request(input, init);
      const signature = request.headers.get('payment-signature');
      if (!signature || request.headers.has('idempotency-key')) return inner(request);
      const key = this.#keyForHeader(signature);
      if (key) request.headers.set('Idempotency-Key', key);
      return inner(request);
    };
  }

  #keyForHeader(header: string): string | undefined {
    try {
      const voucher = (decodePaymentSignatureHeader(header).payload as { voucher?: { voucherId?: unknown } }).voucher;
      return typeof voucher?.voucherId === 'string' ? this.idempotencyKeyFor(voucher.voucherId) : undefined;
    } catch {
      return undefined;
    }
  }

  #remember(voucherId: string, key: string): void {
    this.#idempotencyKeys.delete(voucherId);
    this.#idempotencyKeys.set(voucherId, key);
    while (this.#idempotencyKeys.size > MAX_REMEMBERED_KEYS) {
      const oldest = this.#idempotencyKeys.keys().next().value;
      if (oldest === undefined) break;
      this.#idempotencyKeys.delete(oldest);
    }
  }
}

function smaller(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BigInt(a) <= BigInt(b) ? a : b;
}
