import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements, Price, SettleResponse, SupportedKind } from '@x402/core/types';
import { parseVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import type { CreditFacilitatorClient } from './credit-facilitator-client.js';
import { CreditSchemeServer } from './credit-scheme-server.js';
import { settleFailure, settleFromFinalReceipt, settleSuccess, type Receipt } from './facilitator-mapping.js';
import { componentLogger, silentLogger, type ClientLogger } from './logger.js';
import { paymentFromMeta, type McpPaymentPayload, type RequestEnvelope } from './mcp-meta.js';
import { orderRefForCall, orderRefMatchesCall } from './mcp-order-ref.js';
import { errorResult, paidResult, paymentRequiredResult, type McpToolResult } from './mcp-results.js';

/** When a paid tool runs: once the capture is accepted (the merchant carries the settlement risk), or once the payment is CONFIRMED on chain. */
export type RunAfter = 'captured' | 'confirmed';

/** What the paywall needs of a CreditFacilitatorClient. */
export type PaywallFacilitator = Pick<CreditFacilitatorClient, 'baseUrl' | 'getSupported' | 'verify' | 'capture' | 'waitForSettlement'>;

export interface McpPaywallOptions {
  facilitator: PaywallFacilitator;
  /** The merchant's id at the facilitator. */
  merchantId: string;
  /** The merchant's payout address. */
  payTo: string;
  /** Default: the network of the facilitator's `credit` kind. */
  network?: Network;
  /** Default for tools that do not say: confirmed. */
  runAfter?: RunAfter;
  /** The resource a tool's vouchers name; default `mcp://tool/<name>`. */
  resourceUrl?: (tool: string) => string;
  maxTimeoutSeconds?: number;
  logger?: ClientLogger;
}

export interface ToolPrice {
  /** "$0.25" (USD in the settlement asset) or `{ amount, asset }` in base units. */
  price: Price;
  description?: string;
  mimeType?: string;
  runAfter?: RunAfter;
}

/** One tools/call as the paywall sees it, whichever SDK generation received it. */
export interface PaidCall {
  tool: string;
  args: unknown;
  /** The request's `params._meta`. */
  meta: Record<string, unknown> | undefined;
  envelope: RequestEnvelope;
}

/** A payment the paywall refused before charging anything: the client gets a fresh PaymentRequired naming why. */
class Refusal {
  constructor(
    readonly reason: string,
    readonly message: string,
  ) {}
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Prices MCP tool calls in the `credit` scheme (x402's MCP transport): answers an unpaid call with
 * PaymentRequired, checks a paid one against the call it claims to pay, verifies and captures it
 * at the facilitator, and runs the tool only once the payment is captured (or CONFIRMED). Settlement
 * problems never return the tool's content.
 */
export class McpPaywall {
  readonly #opts: McpPaywallOptions;
  readonly #scheme: CreditSchemeServer;
  readonly #log: Required<ClientLogger>;
  #kind: Promise<SupportedKind> | null = null;

  constructor(opts: McpPaywallOptions) {
    this.#opts = { ...opts, payTo: opts.payTo.toLowerCase(), merchantId: opts.merchantId.toLowerCase() };
    this.#scheme = new CreditSchemeServer({ merchantId: opts.merchantId, facilitatorUrl: opts.facilitator.baseUrl });
    this.#log = componentLogger(opts.logger ?? silentLogger, 'mcp-paywall');
  }

  /** Reads the facilitator's `credit` kind (asset, decimals, network); the first call does it when you do not. */
  async initialize(): Promise<void> {
    await this.#creditKind();
  }

  resourceUrl(tool: string): string {
    return this.#opts.resourceUrl?.(tool) ?? `mcp://tool/${encodeURIComponent(tool)}`;
  }

  /** The requirements of one call of `tool` under `orderRef`. */
  async requirements(tool: string, price: ToolPrice, orderRef: string): Promise<PaymentRequirements> {
    const kind = await this.#creditKind();
    const { amount, asset } = await this.#scheme.parsePrice(price.price, kind.network);
    const base: PaymentRequirements = {
      scheme: 'credit',
      network: kind.network,
      amount,
      asset,
      payTo: this.#opts.payTo,
      maxTimeoutSeconds: this.#opts.maxTimeoutSeconds ?? 300,
      extra: { orderRef },
    };
    return this.#scheme.enhancePaymentRequirements(base, kind);
  }

  /** The PaymentRequired for a call: a new order bound to this tool and these arguments. */
  async paymentRequired(call: Pick<PaidCall, 'tool' | 'args'>, price: ToolPrice, error: string): Promise<PaymentRequired> {
    const accepts = await this.requirements(call.tool, price, orderRefForCall(call.tool, call.args));
    return {
      x402Version: 2,
      error,
      resource: { url: this.resourceUrl(call.tool), ...(price.description ? { description: price.description } : {}), mimeType: price.mimeType ?? 'application/json' },
      accepts: [accepts],
    };
  }

  /** Runs one tools/call behind the paywall; `run` is the tool and is called at most once. */
  async handle(call: PaidCall, price: ToolPrice, run: () => McpToolResult | Promise<McpToolResult>): Promise<McpToolResult> {
    const found = paymentFromMeta(call.meta);
    if (found.kind === 'none') return this.#required(call, price, `Payment required to call ${call.tool}`);
    if (found.kind === 'invalid') return this.#required(call, price, `invalid_payment: ${found.detail}`);

    let checked: { voucher: Voucher; requirements: PaymentRequirements };
    try {
      checked = await this.#check(call, price, found.payload);
    } catch (err) {
      if (err instanceof Refusal) return this.#required(call, price, `${err.reason}: ${err.message}`);
      throw err;
    }
    const payload = found.payload as unknown as PaymentPayload;
    const { requirements, voucher } = checked;

    let settled: { ok: true; response: SettleResponse } | { ok: false; result: McpToolResult };
    try {
      const verdict = await this.#opts.facilitator.verify(payload, requirements);
      if (!verdict.isValid) {
        this.#log.info('payment refused at verify', { tool: call.tool, reason: verdict.invalidReason, voucherId: voucher.voucherId });
        return this.#required(call, price, `${verdict.invalidReason ?? 'invalid_payment'}${verdict.invalidMessage ? `: ${verdict.invalidMessage}` : ''}`);
      }
      settled = await this.#settle(call, price, payload, requirements);
    } catch (err) {
      this.#log.error('facilitator unusable', { tool: call.tool, error: (err as Error).message });
      return errorResult('facilitator_unavailable', 'the payment could not be checked now; retry the call with the same payment', call.envelope);
    }
    if (!settled.ok) return settled.result;

    let result: McpToolResult;
    try {
      result = await run();
    } catch (err) {
      // Paid, so the receipt goes back even though the tool failed.
      this.#log.warn('paid tool failed', { tool: call.tool, paymentId: settled.response.extra?.paymentId, error: (err as Error).message });
      return errorResult('tool_failed', err instanceof Error ? err.message : String(err), call.envelope, settled.response);
    }
    return paidResult(result, settled.response, call.envelope);
  }

  /** Everything the paywall can tell about the voucher before the facilitator sees it. */
  async #check(call: PaidCall, price: ToolPrice, payload: McpPaymentPayload): Promise<{ voucher: Voucher; requirements: PaymentRequirements }> {
    if (payload.accepted.scheme !== 'credit') throw new Refusal('unsupported_scheme', `this server takes "credit", not "${payload.accepted.scheme}"`);
    const parsed = parseVoucher(payload.payload.voucher);
    if (!parsed.ok) throw new Refusal('invalid_voucher', parsed.detail);
    const v = parsed.voucher;
    // The order is the voucher's: the requirements the facilitator checks it against name it.
    const requirements = await this.requirements(call.tool, price, v.orderRef);
    if (v.amount !== requirements.amount) throw new Refusal('amount_mismatch', `the voucher pays ${v.amount}; ${call.tool} costs ${requirements.amount}`);
    if (!same(v.payTo, requirements.payTo)) throw new Refusal('recipient_mismatch', 'the voucher pays another payee');
    if (!same(v.merchantId, this.#opts.merchantId)) throw new Refusal('merchant_mismatch', 'the voucher is for another merchant');
    if (!same(v.asset, requirements.asset) || v.network !== requirements.network) throw new Refusal('asset_mismatch', 'the voucher pays another asset or network');
    if (v.resource !== this.resourceUrl(call.tool)) throw new Refusal('resource_mismatch', `the voucher pays for ${v.resource}, not ${this.resourceUrl(call.tool)}`);
    if (!orderRefMatchesCall(v.orderRef, call.tool, call.args)) throw new Refusal('call_mismatch', 'the voucher pays for another call (other tool or arguments)');
    return { voucher: v, requirements };
  }

  /** Capture (a retried call replays the same capture), then wait for CONFIRMED when the tool asks for it. */
  async #settle(call: PaidCall, price: ToolPrice, payload: PaymentPayload, requirements: PaymentRequirements): Promise<{ ok: true; response: SettleResponse } | { ok: false; result: McpToolResult }> {
    const f = this.#opts.facilitator;
    const outcome = await f.capture(payload, requirements);
    if (outcome.kind === 'rejected') {
      this.#log.info('capture rejected', { tool: call.tool, reason: outcome.reason });
      const response = settleFailure(requirements.network as Network, outcome.reason, outcome.message);
      return { ok: false, result: await this.#required(call, price, `${outcome.reason}${outcome.message ? `: ${outcome.message}` : ''}`, response) };
    }
    if (outcome.kind === 'busy') {
      const response = settleFailure(requirements.network as Network, 'facilitator_busy', `retry in ${outcome.retryAfterSeconds} s`);
      return { ok: false, result: errorResult('facilitator_busy', `the facilitator is busy; retry the call with the same payment in ${outcome.retryAfterSeconds} s`, call.envelope, response) };
    }
    const receipt = outcome.receipt;
    this.#log.info('payment captured', { tool: call.tool, paymentId: receipt.paymentId, status: receipt.status, replayed: outcome.replayed });
    const runAfter = price.runAfter ?? this.#opts.runAfter ?? 'confirmed';
    const started = Date.now();
    const last: Receipt = runAfter === 'confirmed' ? await f.waitForSettlement(receipt) : receipt;
    const response = runAfter === 'captured' && last.status !== 'FAILED' && last.status !== 'VOIDED' ? settleSuccess(last) : settleFromFinalReceipt(last, Date.now() - started);
    if (response.success) return { ok: true, response };
    if (response.errorReason === 'settlement_timeout') {
      // Not failed, just slow: the same payment sent again resumes it; a new one would pay twice.
      return { ok: false, result: errorResult('settlement_pending', `${response.errorMessage ?? 'not confirmed yet'}; retry the call with the same payment`, call.envelope, response) };
    }
    this.#log.warn('payment not settled', { tool: call.tool, paymentId: last.paymentId, status: last.status });
    return { ok: false, result: await this.#required(call, price, `${response.errorReason}: ${response.errorMessage ?? 'settlement failed'}`, response) };
  }

  async #required(call: PaidCall, price: ToolPrice, error: string, response?: SettleResponse): Promise<McpToolResult> {
    return paymentRequiredResult(await this.paymentRequired(call, price, error), call.envelope, response);
  }

  async #creditKind(): Promise<SupportedKind> {
    this.#kind ??= (async () => {
      const supported = await this.#opts.facilitator.getSupported();
      const kind = supported.kinds.find((k) => k.scheme === 'credit' && k.x402Version === 2 && (this.#opts.network === undefined || k.network === this.#opts.network));
      if (!kind) throw new Error(`the facilitator offers no credit payments${this.#opts.network ? ` on ${this.#opts.network}` : ''}`);
      const problem = this.#scheme.validateFacilitatorSupport(kind.network, kind);
      if (problem) throw new Error(problem);
      return kind;
    })();
    try {
      return await this.#kind;
    } catch (err) {
      this.#kind = null;
      throw err;
    }
  }
}
