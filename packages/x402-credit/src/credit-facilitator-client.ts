import { FacilitatorResponseError, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { componentLogger, silentLogger, type ClientLogger } from './logger.js';
import { FacilitatorCredentialError, forbiddenHelp, identityProblem, MerchantIdentitySchema, unauthenticatedHelp, type MerchantIdentity } from './credential-check.js';
import {
  captureIdempotencyKey,
  captureOutcomeFrom,
  facilitatorBody,
  isFinalStatus,
  receiptFrom,
  settleFailure,
  settleFromFinalReceipt,
  settleSuccess,
  supportedFrom,
  UnusableAnswer,
  verifyResponseFrom,
  type CaptureOutcome,
  type Receipt,
} from './facilitator-mapping.js';

export interface CreditFacilitatorClientOptions {
  /** The facilitator's {base_url}, ending in /api/v1. */
  baseUrl: string;
  /** The merchant's sk_live_ API key (x402:settle:create and x402:settle:read). */
  apiKey: string;
  /**
   * confirmed (default): settle() answers success only once the payment is CONFIRMED on chain.
   * captured: success as soon as the capture is queued (the merchant accepts the settlement risk;
   * `transaction` is then usually empty and `extra.status` says QUEUED).
   */
  waitFor?: 'confirmed' | 'captured';
  confirmTimeoutMs?: number;
  /**
   * The longest a status request asks the facilitator to hold it until the payment's status
   * changes (`Prefer: wait=N`, 1 to 30, default 25; 0 turns long polls off).
   */
  longPollSeconds?: number;
  /** The pause between status requests the facilitator answered at once (no `Preference-Applied`): an older facilitator, or one holding all the waits it takes. */
  pollIntervalMs?: number;
  /** Per HTTP request. */
  requestTimeoutMs?: number;
  fetch?: typeof fetch;
  logger?: ClientLogger;
  /**
   * The merchant the key should belong to (the merchantId your offers name): the start check
   * refuses a key of another merchant.
   */
  merchantId?: string;
  /**
   * true (default): the first getSupported (x402ResourceServer.initialize, at start) also asks
   * GET /facilitator/me, logs an error naming the fix and fails when the key is refused, lacks a
   * permission or belongs to another merchant. Call checkCredential() yourself to check earlier.
   */
  checkCredentialOnStart?: boolean;
}

/** One facilitator answer, as #request reads it. */
interface Answer {
  status: number;
  json: unknown;
  retryAfter: string | null;
  preferenceApplied: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The facilitator holds a status request at most this long (it clamps longer waits). */
const MAX_LONG_POLL_SECONDS = 30;
/** A held answer that comes back sooner with the same status is paced like an unheld one (no request loop). */
const HELD_AT_LEAST_MS = 250;

/**
 * @x402/core's FacilitatorClient over our facilitator API, for the reference resource-server
 * middleware (x402ResourceServer / paymentMiddleware): verify → POST /facilitator/verify,
 * settle → POST /facilitator/capture (then polls the payment), getSupported → GET /facilitator/supported.
 */
export class CreditFacilitatorClient implements FacilitatorClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #log: Required<ClientLogger>;
  readonly #waitFor: 'confirmed' | 'captured';
  readonly #confirmTimeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #longPollSeconds: number;
  readonly #requestTimeoutMs: number;
  readonly #merchantId: string | undefined;
  readonly #checkOnStart: boolean;
  #credentialChecked: Promise<MerchantIdentity | null> | null = null;

  constructor(opts: CreditFacilitatorClientOptions) {
    if (!/^sk_live_[A-Za-z0-9_-]{20,}$/.test(opts.apiKey)) throw new Error('CreditFacilitatorClient: apiKey must be a merchant sk_live_ API key');
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#apiKey = opts.apiKey;
    this.#fetch = opts.fetch ?? fetch;
    this.#log = componentLogger(opts.logger ?? silentLogger, 'credit-facilitator-client');
    this.#waitFor = opts.waitFor ?? 'confirmed';
    this.#confirmTimeoutMs = opts.confirmTimeoutMs ?? 30_000;
    this.#pollIntervalMs = opts.pollIntervalMs ?? 500;
    this.#longPollSeconds = Math.max(0, Math.min(MAX_LONG_POLL_SECONDS, Math.floor(opts.longPollSeconds ?? 25)));
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 15_000;
    this.#merchantId = opts.merchantId;
    this.#checkOnStart = opts.checkCredentialOnStart ?? true;
  }

  async getSupported(): Promise<SupportedResponse> {
    if (this.#checkOnStart) await this.#checkOnce();
    const { status, json } = await this.#request('GET', '/facilitator/supported', undefined, {}, false);
    return this.#usable(() => supportedFrom(status, json));
  }

  /**
   * GET /facilitator/me: the key's merchant, permissions and limits. Throws
   * FacilitatorCredentialError (after logging an error that names the fix) when the key is
   * refused, lacks a permission or belongs to another merchant than `merchantId`; null when the
   * facilitator cannot say (unreachable, or too old to have the route), after a warning.
   */
  async checkCredential(): Promise<MerchantIdentity | null> {
    let answer: Answer;
    try {
      answer = await this.#request('GET', '/facilitator/me');
    } catch (err) {
      this.#log.warn('could not check the merchant API key', { error: (err as Error).message });
      return null;
    }
    if (answer.status === 401 || answer.status === 403) throw new FacilitatorCredentialError(this.#refusalHelp(answer.status, answer.json));
    const me = MerchantIdentitySchema.safeParse(answer.json);
    if (answer.status !== 200 || !me.success) {
      this.#log.warn('could not check the merchant API key', { status: answer.status, hint: 'GET /facilitator/me is missing: an older facilitator?' });
      return null;
    }
    const problem = identityProblem(me.data, this.#merchantId);
    if (problem) {
      this.#log.error('merchant API key unusable', { merchantId: me.data.merchantId, fix: problem });
      throw new FacilitatorCredentialError(`CreditFacilitatorClient: ${problem}`);
    }
    this.#log.info('merchant API key accepted', { merchantId: me.data.merchantId, keyId: me.data.credential.id, permissions: me.data.permissions });
    return me.data;
  }

  /** One start check at a time; a failed one is asked again on the next call (the operator may have fixed the key). */
  async #checkOnce(): Promise<void> {
    this.#credentialChecked ??= this.checkCredential();
    try {
      await this.#credentialChecked;
    } catch (err) {
      this.#credentialChecked = null;
      throw err;
    }
  }

  /** Logs what a 401 or 403 means and how to fix it; the message for the error thrown with it. */
  #refusalHelp(status: number, json: unknown): string {
    const required = (json as { error?: { requiredPermission?: unknown } } | null)?.error?.requiredPermission;
    const help = status === 401 ? unauthenticatedHelp(this.baseUrl) : forbiddenHelp(typeof required === 'string' ? required : undefined);
    this.#log.error(status === 401 ? 'merchant API key refused' : 'merchant API key lacks a permission', { status, fix: help });
    return `CreditFacilitatorClient: ${help}`;
  }


  async verify(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<VerifyResponse> {
    const { status, json } = await this.#request('POST', '/facilitator/verify', facilitatorBody(paymentPayload, paymentRequirements));
    const result = this.#usable(() => verifyResponseFrom(status, json));
    if (result.isValid || result.invalidReason !== 'voucher_already_used') return result;
    return this.#resumedCapture(paymentPayload, paymentRequirements, result);
  }

  async settle(paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements): Promise<SettleResponse> {
    const network = paymentRequirements.network;
    const outcome = await this.capture(paymentPayload, paymentRequirements);
    switch (outcome.kind) {
      case 'rejected':
        this.#log.info('capture rejected', { reason: outcome.reason });
        return settleFailure(network, outcome.reason, outcome.message);
      case 'busy':
        return settleFailure(network, 'facilitator_busy', `the facilitator is rate limiting or unavailable; retry in ${outcome.retryAfterSeconds} s`);
      case 'captured':
        break;
    }
    const receipt = outcome.receipt;
    this.#log.info('payment captured', { paymentId: receipt.paymentId, status: receipt.status, replayed: outcome.replayed });
    if (this.#waitFor === 'captured') {
      return receipt.status === 'FAILED' || receipt.status === 'VOIDED' ? settleFromFinalReceipt(receipt, 0) : settleSuccess(receipt);
    }
    const started = Date.now();
    const last = await this.waitForSettlement(receipt);
    const answer = settleFromFinalReceipt(last, Date.now() - started);
    if (!answer.success) this.#log.warn('payment not confirmed', { paymentId: last.paymentId, status: last.status, reason: answer.errorReason });
    return answer;
  }

  /** The current receipt of a payment this merchant captured, or null. */
  async payment(paymentId: string): Promise<Receipt | null> {
    try {
      const { status, json } = await this.#request('GET', `/facilitator/payments/${encodeURIComponent(paymentId)}`);
      return receiptFrom(status, json);
    } catch {
      return null;
    }
  }

  /**
   * Verify refuses a voucher that is already captured. When it was captured by this merchant for
   * this very payload (an earlier attempt whose settle timed out or whose answer was lost), a
   * capture with the same derived key replays the receipt without side effects: let the request
   * through so settle() resumes that payment instead of refusing a paid order.
   */
  async #resumedCapture(paymentPayload: PaymentPayload, requirements: PaymentRequirements, refused: VerifyResponse): Promise<VerifyResponse> {
    const replay = await this.capture(paymentPayload, requirements).catch(() => null);
    if (replay?.kind !== 'captured' || !replay.replayed) return refused;
    this.#log.info('resuming an earlier capture', { paymentId: replay.receipt.paymentId });
    return { isValid: true, payer: replay.receipt.payer, extra: { paymentId: replay.receipt.paymentId, resumed: true } };
  }

  /**
   * POST /facilitator/capture for a payment, for merchants that drive the facilitator themselves
   * instead of through x402ResourceServer (the demo merchant). The Idempotency-Key defaults to the
   * one derived from the voucher (captureIdempotencyKey); pass the agent's own when the request
   * carried one. Throws FacilitatorResponseError when the facilitator cannot be reached or answers
   * something unusable (401/403/5xx): a configuration or service problem, not the payment's.
   */
  async capture(paymentPayload: PaymentPayload, requirements: PaymentRequirements, opts: { idempotencyKey?: string } = {}): Promise<CaptureOutcome> {
    const { status, json, retryAfter } = await this.#request('POST', '/facilitator/capture', facilitatorBody(paymentPayload, requirements), {
      'idempotency-key': opts.idempotencyKey ?? captureIdempotencyKey(paymentPayload),
    });
    return this.#usable(() => captureOutcomeFrom(status, json, retryAfter));
  }

  /**
   * Waits until a captured payment is CONFIRMED, FAILED or VOIDED, or confirmTimeoutMs passes; the
   * last receipt seen. Each status request is a long poll (`Prefer: wait=N`): the facilitator holds
   * it until the payment is final (or the wait ends), so a payment costs a request or two, not one per
   * interval. An answer without `Preference-Applied` was not held (a facilitator without long
   * polls, or one already holding all it takes): the next request waits pollIntervalMs, or the
   * answer's Retry-After when that is longer.
   */
  async waitForSettlement(first: Receipt): Promise<Receipt> {
    const deadline = Date.now() + this.#confirmTimeoutMs;
    let last = first;
    while (!isFinalStatus(last.status) && Date.now() < deadline) {
      const waitSeconds = Math.min(this.#longPollSeconds, Math.floor((deadline - Date.now()) / 1000));
      const asked = Date.now();
      const before = last.status;
      const answer = await this.#poll(first.paymentId, waitSeconds);
      last = answer.receipt ?? last;
      if (isFinalStatus(last.status)) break;
      const held = answer.receipt !== null && answer.held && (last.status !== before || Date.now() - asked >= HELD_AT_LEAST_MS);
      if (held) continue;
      const pause = Math.max(this.#pollIntervalMs, answer.retryAfterSeconds * 1000);
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    }
    return last;
  }

  /** One status request, held up to waitSeconds (0: a plain one); whether the facilitator held it. */
  async #poll(paymentId: string, waitSeconds: number): Promise<{ receipt: Receipt | null; held: boolean; retryAfterSeconds: number }> {
    try {
      const { status, json, retryAfter, preferenceApplied } = await this.#request(
        'GET',
        `/facilitator/payments/${encodeURIComponent(paymentId)}`,
        undefined,
        waitSeconds > 0 ? { prefer: `wait=${waitSeconds}` } : {},
        true,
        waitSeconds * 1000 + this.#requestTimeoutMs,
      );
      const seconds = Number(retryAfter);
      return {
        receipt: receiptFrom(status, json),
        held: waitSeconds > 0 && /^\s*wait\s*=/i.test(preferenceApplied ?? ''),
        retryAfterSeconds: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_LONG_POLL_SECONDS) : 0,
      };
    } catch {
      return { receipt: null, held: false, retryAfterSeconds: 0 };
    }
  }

  #usable<T>(map: () => T): T {
    try {
      return map();
    } catch (err) {
      if (err instanceof UnusableAnswer) throw new FacilitatorResponseError(err.message);
      throw err;
    }
  }

  async #request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    authenticated = true,
    timeoutMs = this.#requestTimeoutMs,
  ): Promise<Answer> {
    let res: Response;
    try {
      res = await this.#fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          ...(authenticated ? { authorization: `Bearer ${this.#apiKey}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      // Never echo the request (it carries the key); the cause's name is enough to act on.
      throw new FacilitatorResponseError(`cannot reach the facilitator for ${method} ${path} (${(err as Error).name})`);
    }
    const text = await res.text().catch(() => '');
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    // A refused credential is the merchant's configuration, not the payment's: say so in its log (the payer only sees a 502).
    if (authenticated && (res.status === 401 || res.status === 403) && path !== '/facilitator/me') this.#refusalHelp(res.status, json);
    return { status: res.status, json, retryAfter: res.headers.get('retry-after'), preferenceApplied: res.headers.get('preference-applied') };
  }
}
