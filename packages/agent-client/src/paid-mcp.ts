import { randomUUID } from 'node:crypto';
import type { PrepareX402Args } from './tool-types.js';
import { McpBudget, type McpBudgetLimits } from './mcp-budget.js';
import { CALL_MARK_KEY, type X402McpTransport } from './mcp-payment-transport.js';
import { PAYMENT_EXTENSION, PAYMENT_META_KEY, paymentBindingOf, paymentRequiredOf, type PaymentBinding, paymentResponseOf, toolErrorCodeOf } from './mcp-payment-messages.js';
import { signPreparedPayment } from './voucher-signer.js';
import { PaymentFlowError } from './x402-fetch.js';
import { creditOffer, type PaymentRequiredMessage, type Requirements, type SettleResponseMessage } from './x402-messages.js';

export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** An MCP client of either SDK generation: v1 `Client.callTool(params, resultSchema?, options?)`, v2 `Client.callTool(params, options?)`. */
export interface ToolCaller {
  callTool(params: ToolCallParams, ...rest: never[]): Promise<unknown>;
}

/** What the approval hook is asked before a call is paid. */
export interface PaymentApproval {
  tool: string;
  arguments: Record<string, unknown> | undefined;
  paymentRequired: PaymentRequiredMessage;
  offer: Requirements;
  /** Base units of offer.asset. */
  amount: string;
}

export interface PaidMcpOptions {
  /** prepare_x402_payment (CreditAgent.prepareX402Payment, or anything with its contract). */
  prepare: (args: PrepareX402Args) => Promise<unknown>;
  /** The workload key's Ed25519 private key; it signs locally and is never sent. */
  privateKey: Uint8Array;
  operationalAgentId?: string;
  budget?: McpBudgetLimits;
  /** Asked before each payment; false declines it (PaymentDeclinedError). */
  approve?: (request: PaymentApproval) => boolean | Promise<boolean>;
  /**
   * The X402McpTransport the client is connected through. On a 2026-07-28 connection it advertises
   * org.x402/payment on this client's calls and hands their `payment_required` answers back (the
   * stock v2 `Client` rejects that result type itself), so the server uses the extension binding.
   * Without it, answers come in the tool-result binding.
   */
  transport?: Pick<X402McpTransport, 'takePaymentRequired' | 'forget'>;
  /**
   * For a `ToolCaller` that speaks 2026-07-28 itself and returns any result as it came (not an SDK
   * `Client`; use `transport` for those): put org.x402/payment in each call's
   * `_meta["io.modelcontextprotocol/clientCapabilities"]`.
   */
  advertiseExtension?: boolean;
  /** How long to keep re-sending the same payment while the server says settlement is pending or the facilitator busy. */
  waitForSettlementMs?: number;
}

export interface PaidToolResult<R = Record<string, unknown>> {
  /** The server's final answer. */
  result: R;
  /** False when the first answer asked for no payment. */
  paid: boolean;
  /** `result._meta["x402/payment-response"]`. */
  paymentResponse: SettleResponseMessage | null;
  /** The server's PaymentRequired, when it asked for one. */
  paymentRequired?: PaymentRequiredMessage;
  /** The binding the server asked for payment in. */
  binding?: PaymentBinding;
  paymentId?: string;
  voucherId?: string;
  orderRef?: string;
  spendIntentId?: string;
}

export class PaymentDeclinedError extends Error {
  override readonly name = 'PaymentDeclinedError';
}

const RESEND_CODES = new Set(['settlement_pending', 'facilitator_busy', 'facilitator_unavailable']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An MCP client that pays x402 tool calls with credit: on a payment-required answer (either
 * binding) it checks the budget and the approval hook, prepares the voucher through
 * prepare_x402_payment, checks and signs it with the workload key, and calls again with the
 * payment in `params._meta["x402/payment"]`.
 */
export class PaidMcpClient {
  readonly budget: McpBudget;
  readonly #client: ToolCaller;
  readonly #opts: PaidMcpOptions;

  constructor(client: ToolCaller, opts: PaidMcpOptions) {
    this.#client = client;
    this.#opts = opts;
    this.budget = new McpBudget(opts.budget);
  }

  /** Base units reserved by paid calls so far. */
  get spent(): string {
    return this.budget.spent;
  }

  async callTool<R = Record<string, unknown>>(params: ToolCallParams, ...rest: never[]): Promise<PaidToolResult<R>> {
    const first = await this.#call(params, undefined, rest);
    const required = paymentRequiredOf(first);
    if (!required) return { result: first as R, paid: false, paymentResponse: paymentResponseOf(first) };

    const offer = creditOffer(required);
    if (!offer) throw new PaymentFlowError(`${params.name}: the server does not accept the credit scheme`);
    const approval: PaymentApproval = { tool: params.name, arguments: params.arguments, paymentRequired: required, offer, amount: offer.amount };
    this.budget.reserve(offer.amount);
    let sent = false;
    try {
      if (this.#opts.approve && !(await this.#opts.approve(approval))) throw new PaymentDeclinedError(`${params.name}: the payment of ${offer.amount} was not approved`);
      const orderRef = typeof offer.extra.orderRef === 'string' ? offer.extra.orderRef : undefined;
      const { operationalAgentId } = this.#opts;
      const prepared = await this.#opts.prepare({
        payment_required: { ...required, accepts: [offer] } as Record<string, unknown>,
        ...(orderRef !== undefined ? { order_ref: orderRef } : {}),
        ...(operationalAgentId ? { operational_agent_id: operationalAgentId } : {}),
      });
      const signed = signPreparedPayment(
        prepared,
        {
          paymentRequired: required,
          accepted: offer,
          ...(this.#opts.budget?.maxPerCall !== undefined ? { maxAmount: this.#opts.budget.maxPerCall } : {}),
          ...(operationalAgentId ? { operationalAgentId } : {}),
        },
        this.#opts.privateKey,
      );
      sent = true;
      const result = await this.#sendPaid(params, signed.paymentPayload, rest);
      const paymentResponse = paymentResponseOf(result);
      const refusal = paymentRequiredOf(result);
      // Refused before any capture (no settlement response): nothing was charged.
      if (refusal && !paymentResponse) this.budget.release(offer.amount);
      const paymentId = paymentResponse?.extra?.paymentId;
      return {
        result: result as R,
        paid: true,
        paymentResponse,
        paymentRequired: refusal ?? required,
        binding: paymentBindingOf(first) ?? 'tool-result',
        ...(typeof paymentId === 'string' ? { paymentId } : {}),
        voucherId: signed.voucher.voucherId,
        orderRef: signed.voucher.orderRef,
        spendIntentId: signed.spendIntentId,
      };
    } catch (err) {
      if (!sent) this.budget.release(offer.amount);
      throw err;
    }
  }

  /** The paid call; the same payment again while settlement is pending (the server's capture replays, so this never pays twice). */
  async #sendPaid(params: ToolCallParams, payment: unknown, rest: never[]): Promise<unknown> {
    const deadline = Date.now() + (this.#opts.waitForSettlementMs ?? 60_000);
    let result = await this.#call(params, payment, rest);
    while (RESEND_CODES.has(toolErrorCodeOf(result) ?? '') && Date.now() < deadline) {
      await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
      result = await this.#call(params, payment, rest);
    }
    return result;
  }

  async #call(params: ToolCallParams, payment: unknown, rest: never[]): Promise<unknown> {
    const meta: Record<string, unknown> = { ...params._meta };
    if (payment !== undefined) meta[PAYMENT_META_KEY] = payment;
    if (this.#opts.advertiseExtension) {
      const key = 'io.modelcontextprotocol/clientCapabilities';
      const caps = (meta[key] ?? {}) as { extensions?: Record<string, unknown> };
      meta[key] = { ...caps, extensions: { ...caps.extensions, [PAYMENT_EXTENSION]: {} } };
    }
    const transport = this.#opts.transport;
    if (!transport) return this.#client.callTool({ ...params, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) }, ...rest);

    // Marked, so the transport advertises the extension on it and keeps a payment_required answer.
    const mark = randomUUID();
    try {
      return await this.#client.callTool({ ...params, _meta: { ...meta, [CALL_MARK_KEY]: mark } }, ...rest);
    } catch (err) {
      // The SDK refused the extension binding's result type; the transport saw the answer itself.
      const answer = transport.takePaymentRequired(mark);
      if (answer) return answer;
      throw err;
    } finally {
      transport.forget(mark);
    }
  }
}
