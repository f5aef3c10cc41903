import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { FacilitatorResponseError } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { isUuidV4 } from '@credit-facilitator/wire/ids';
import { CreditFacilitatorClient, settleFromFinalReceipt, settleSuccess, type CaptureOutcome, type Receipt } from '@credit-facilitator/x402-credit';
import type { DemoMerchantConfig } from './config.js';
import { demoLogger, type DemoLogger } from './logger.js';
import { creditRequirements, paymentRequired, settlementTarget, type Offer, type PricingTerms, type SettlementTarget } from './payment-required.js';

export interface DemoMerchant {
  /** Origin the server listens on, e.g. http://127.0.0.1:8410. */
  readonly url: string;
  readonly target: SettlementTarget;
  readonly app: Koa;
  close(): Promise<void>;
}

export interface DemoMerchantOptions {
  logger?: DemoLogger;
  fetch?: typeof fetch;
}

const ItemSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/);
const OrderRefSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/);

/** Just what the merchant reads from a PAYMENT-SIGNATURE before the facilitator judges the rest. */
const PaidEnvelopeSchema = z.looseObject({
  payload: z.looseObject({
    voucher: z.looseObject({ orderRef: z.string().min(1).max(128), resource: z.string().min(1).max(2048) }),
  }),
});

/** Starts the demo merchant: reads the facilitator's network and asset, then listens. */
export async function createDemoMerchant(config: DemoMerchantConfig, opts: DemoMerchantOptions = {}): Promise<DemoMerchant> {
  const logger = opts.logger ?? demoLogger(config.logLevel, { service: 'demo-merchant' });
  const facilitator = new CreditFacilitatorClient({
    baseUrl: config.facilitatorUrl,
    apiKey: config.apiKey,
    confirmTimeoutMs: config.confirmTimeoutMs,
    pollIntervalMs: config.pollIntervalMs,
    logger,
    // The start check (getSupported below) refuses a key of another merchant than the offers name.
    merchantId: config.merchantId,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const target = settlementTarget(await facilitator.getSupported());
  let url = config.publicUrl ?? '';
  const app = demoMerchantApp(config, target, facilitator, logger, () => url);
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url ||= `http://${config.host}:${port}`;
  logger.info('demo merchant listening', { url, merchantId: config.merchantId, price: config.price, delivery: config.delivery });
  return { url, target, app, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** `origin` is where agents reach this server: resource URLs are built from it, never from the Host header. */
export function demoMerchantApp(
  config: DemoMerchantConfig,
  target: SettlementTarget,
  facilitator: CreditFacilitatorClient,
  logger: DemoLogger,
  origin: () => string,
): Koa {
  const terms: PricingTerms = {
    merchantId: config.merchantId,
    payTo: config.payTo,
    price: config.price,
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    facilitatorUrl: config.facilitatorUrl,
    target,
  };
  const app = new Koa({ proxy: false });
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      logger.error('request failed', { path: ctx.path, error: err });
      ctx.status = 500;
      ctx.body = { error: 'internal_error' };
    }
  });

  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/premium/:item', async (ctx) => {
    const item = ItemSchema.safeParse(ctx.params.item);
    if (!item.success) {
      ctx.status = 404;
      ctx.body = { error: 'no such item' };
      return;
    }
    const orderQuery = ctx.query.order;
    const order = orderQuery === undefined ? { success: true as const, data: undefined } : OrderRefSchema.safeParse(orderQuery);
    if (!order.success) {
      ctx.status = 400;
      ctx.body = { error: 'order must be 1-128 characters of A-Z a-z 0-9 . _ : -' };
      return;
    }
    const offer: Offer = {
      resourceUrl: `${origin()}${ctx.path}`,
      description: `Premium item "${item.data}"`,
      mimeType: 'application/json',
      orderRef: order.data ?? `order-${randomUUID()}`,
    };
    const signature = ctx.get('payment-signature');
    if (!signature) return answerPaymentRequired(ctx, terms, offer, 'payment required');
    await sellItem(ctx, { config, terms, facilitator, logger }, item.data, offer, signature, order.data);
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

interface SaleDeps {
  config: DemoMerchantConfig;
  terms: PricingTerms;
  facilitator: CreditFacilitatorClient;
  logger: DemoLogger;
}

async function sellItem(ctx: Context, d: SaleDeps, item: string, offer: Offer, signature: string, orderQuery: string | undefined): Promise<void> {
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(signature);
  } catch {
    return answerPaymentRequired(ctx, d.terms, offer, 'invalid_payment_signature_header');
  }
  const envelope = PaidEnvelopeSchema.safeParse(decoded);
  if (!envelope.success) return answerPaymentRequired(ctx, d.terms, offer, 'invalid_payload');
  const voucher = envelope.data.payload.voucher;
  if (orderQuery !== undefined && voucher.orderRef !== orderQuery) return answerPaymentRequired(ctx, d.terms, offer, 'order_mismatch');
  const paidOffer: Offer = { ...offer, orderRef: voucher.orderRef };
  // The voucher is single-use, but binding it to the URL keeps one order from paying for another item.
  if (voucher.resource !== offer.resourceUrl) return answerPaymentRequired(ctx, d.terms, paidOffer, 'resource_mismatch');

  const rawKey = ctx.get('idempotency-key');
  const idempotencyKey = isUuidV4(rawKey) ? rawKey.toLowerCase() : randomUUID();
  let outcome: CaptureOutcome;
  try {
    outcome = await d.facilitator.capture(decoded as PaymentPayload, creditRequirements(d.terms, voucher.orderRef), { idempotencyKey });
  } catch (err) {
    if (!(err instanceof FacilitatorResponseError)) throw err;
    d.logger.error('capture failed', { orderRef: voucher.orderRef, error: err });
    ctx.status = 502;
    ctx.body = { error: 'facilitator_unavailable' };
    return;
  }
  switch (outcome.kind) {
    case 'rejected':
      d.logger.info('capture rejected', { orderRef: voucher.orderRef, reason: outcome.reason });
      return answerPaymentRequired(ctx, d.terms, paidOffer, outcome.reason);
    case 'busy':
      ctx.status = 503;
      ctx.set('Retry-After', String(outcome.retryAfterSeconds));
      ctx.body = { error: 'facilitator_busy', retryAfterSeconds: outcome.retryAfterSeconds };
      return;
    case 'captured':
      break;
  }
  const captured = outcome.receipt;
  d.logger.info('payment captured', { orderRef: voucher.orderRef, paymentId: captured.paymentId, replayed: outcome.replayed });
  if (d.config.delivery === 'captured') return deliver(ctx, item, captured);

  const settled = await d.facilitator.waitForSettlement(captured);
  if (settled.status === 'CONFIRMED') return deliver(ctx, item, settled);
  if (settled.status === 'FAILED' || settled.status === 'VOIDED') {
    ctx.set('PAYMENT-RESPONSE', encodePaymentResponseHeader(settleFromFinalReceipt(settled, 0)));
    return answerPaymentRequired(ctx, d.terms, paidOffer, settled.status === 'FAILED' ? `settlement_failed: ${settled.failureReason ?? 'unknown'}` : 'payment_voided');
  }
  ctx.status = 202;
  ctx.set('Retry-After', '2');
  ctx.body = {
    status: 'pending',
    paymentId: settled.paymentId,
    paymentStatus: settled.status,
    orderRef: settled.orderRef,
    message: 'payment captured, settlement not confirmed yet: resend the same request with the same PAYMENT-SIGNATURE and Idempotency-Key',
  };
}

function deliver(ctx: Context, item: string, r: Receipt): void {
  ctx.status = 200;
  ctx.set('PAYMENT-RESPONSE', encodePaymentResponseHeader(settleSuccess(r)));
  ctx.set('Cache-Control', 'private, no-store');
  ctx.body = {
    item,
    content: `The premium content of "${item}". Thank you for your order.`,
    orderRef: r.orderRef,
    paymentId: r.paymentId,
    paymentStatus: r.status,
  };
}

function answerPaymentRequired(ctx: Context, terms: PricingTerms, offer: Offer, error: string): void {
  const required = paymentRequired(terms, offer, error);
  ctx.status = 402;
  ctx.set('PAYMENT-REQUIRED', encodePaymentRequiredHeader(required));
  ctx.set('Cache-Control', 'private, no-store');
  ctx.body = required;
}
