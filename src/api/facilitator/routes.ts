import Router from '@koa/router';
import type { z } from 'zod';
import type { Context, Next } from 'koa';
import { PERMISSIONS } from '../../auth/permissions.js';
import { fieldIssues, isV1PaymentIntent } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../../domain/errors.js';
import { capturePayment } from '../../payments/capture.js';
import { paymentStatus } from '../../payments/status.js';
import { batchView } from '../../payments/batch-view.js';
import { listPayments, type PaymentListQuery } from '../../payments/list-payments.js';
import { voidPayment } from '../../payments/void-payment.js';
import { prepareRefundAuthorization, refundPayment } from '../../payments/refund-payment.js';
import { statusWaitersFor } from '../../payments/status-watch.js';
import { paymentPoll } from './payment-poll.js';
import { signedReceipt } from '../../settlement/signed-receipt.js';
import { baseUrl } from '../../config/env.js';
import { keyFromPaymentIdentifier } from '../../payments/payment-identifier.js';
import { createEndpoint, listEndpoints, removeEndpoint, rotateEndpointSecret, updateEndpointEvents } from '../../webhooks/endpoints.js';
import { listDeliveries } from '../../webhooks/deliveries.js';
import { resendDelivery, sendTestEvent } from '../../webhooks/send-now.js';
import { verifyPayment } from '../../payments/verify.js';
import { readJsonBody } from '../../http/body.js';
import { parseQuery } from '../../http/query.js';
import { FACILITATOR_PREFIX } from '../../http/mount-points.js';
import type { ApiDeps } from '../deps.js';
import { merchantOf, requireMerchant } from '../merchant-auth.js';
import { rateLimit } from '../rate-limit.js';
import { phaseTimerOf, serverTiming } from '../../observability/phase-timer.js';
import {
  CaptureBodySchema,
  IdempotencyKeySchema,
  PaymentListQuerySchema,
  RefundAuthorizationQuerySchema,
  RefundBodySchema,
  VerifyBodySchema,
  WebhookDeliveryListQuerySchema,
  WebhookEndpointBodySchema,
  WebhookEndpointUpdateSchema,
} from './schemas.js';
import { supportedBody } from './supported.js';
import { meBody } from './me.js';
import { errorCodeLabel, invalidReasonLabel } from '../../observability/labels.js';
import { isShedRefusal } from '../capture-admission.js';
import { tracingOn } from '../../observability/tracing.js';
import { traceRoute } from '../../http/trace-route.js';

/** The list query as the service takes it; `gt` and `lte` become the equivalent millisecond bounds. */
function listQuery(raw: unknown): PaymentListQuery {
  const q = parseQuery(PaymentListQuerySchema, raw);
  const plusMs = (iso: string) => new Date(new Date(iso).getTime() + 1).toISOString();
  const from = [q['created[gte]'], q['created[gt]'] && plusMs(q['created[gt]'])].filter((x): x is string => !!x).sort().at(-1);
  const before = [q['created[lt]'], q['created[lte]'] && plusMs(q['created[lte]'])].filter((x): x is string => !!x).sort()[0];
  return {
    limit: q.limit ?? 10,
    ...(q.starting_after ? { startingAfter: q.starting_after } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.orderRef ? { orderRef: q.orderRef } : {}),
    ...(q.batchId ? { batchId: q.batchId } : {}),
    ...(from ? { createdFrom: from } : {}),
    ...(before ? { createdBefore: before } : {}),
  };
}

/** The Idempotency-Key header, a UUID v4, lowercased. */
function idempotencyKeyOf(ctx: Context): string {
  const raw = ctx.get('idempotency-key');
  if (!raw) throw ApiError.idempotencyKeyRequired();
  const key = IdempotencyKeySchema.safeParse(raw);
  if (!key.success) throw ApiError.idempotencyKeyInvalid();
  return key.data.toLowerCase();
}

/** Without the header, the x402 payment-identifier extension is the key (same rules: same id and body replays). */
function keyOfPayload(paymentPayload: Record<string, unknown>): string {
  const found = keyFromPaymentIdentifier(paymentPayload);
  if (found.kind === 'absent') throw ApiError.idempotencyKeyRequired();
  if (found.kind === 'invalid') throw ApiError.idempotencyKeyInvalid();
  return found.key;
}

function answerReceipt(ctx: Context, result: { receipt: { paymentId: string }; replayed: boolean }): void {
  if (result.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.state.workflowId = result.receipt.paymentId;
  ctx.body = result;
}

function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  if (isV1PaymentIntent(body)) throw ApiError.voucherRequired();
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw ApiError.invalidRequest(fieldIssues(parsed.error));
  return parsed.data;
}

/** Capture outcomes for /metrics: queued, replayed, or the error code (and the invalidReason of a rejection); a shed capture counts in x402_captures_shed_total only. */
function countCaptures(deps: ApiDeps) {
  return async (ctx: Context, next: Next) => {
    const m = deps.metrics?.api;
    try {
      await next();
      m?.captures.inc({ outcome: (ctx.body as { replayed?: boolean } | undefined)?.replayed ? 'replayed' : 'queued' });
    } catch (err) {
      if (isShedRefusal(err)) throw err;
      const code = err instanceof ApiError ? err.code : 'INTERNAL';
      m?.captures.inc({ outcome: errorCodeLabel(code) });
      const reason = err instanceof ApiError ? err.extra?.invalidReason : undefined;
      if (typeof reason === 'string') m?.captureRejections.inc({ reason: invalidReasonLabel(reason) });
      throw err;
    }
  };
}

/** Reads the whole JSON body into ctx.state.body before capture admission: a slow body holds a connection, never a capture slot. */
async function readBodyBeforeAdmission(ctx: Context, next: Next): Promise<void> {
  ctx.state.body = await readJsonBody(ctx);
  phaseTimerOf(ctx)?.mark('body');
  await next();
}

export function facilitatorRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: FACILITATOR_PREFIX });
  const env = deps.env;
  // Reads (verify, list, batch view) share the verify bucket; writes (capture, void) the capture bucket.
  const readLimit = rateLimit(deps, 'verify', { perMinute: env.RATE_LIMIT_VERIFY_PER_MIN, burst: env.RATE_LIMIT_VERIFY_BURST });
  const writeLimit = rateLimit(deps, 'capture', { perMinute: env.RATE_LIMIT_CAPTURE_PER_MIN, burst: env.RATE_LIMIT_CAPTURE_BURST });

  router.get('/supported', (ctx) => {
    ctx.body = supportedBody(deps.settlement);
  });

  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  // Any valid credential may ask who it is: a merchant's start-up check, before it has taken a payment.
  router.get('/me', requireMerchant(deps, null), (ctx) => {
    ctx.body = meBody(deps, merchantOf(ctx));
  });

  router.post(
    '/verify',
    requireMerchant(deps, PERMISSIONS.settleRead),
    readLimit,
    async (ctx) => {
      const body = parseBody(VerifyBodySchema, await readJsonBody(ctx));
      const outcome = await verifyPayment(deps, merchantOf(ctx).merchantId, body.x402Version, body.paymentPayload, body.paymentRequirements);
      deps.metrics?.api.verifyResults.inc({ result: outcome.isValid ? 'valid' : (outcome.invalidReason === undefined ? 'invalid' : invalidReasonLabel(outcome.invalidReason)) });
      ctx.body = outcome;
    },
  );

  const admission = deps.captureAdmission?.middleware() ?? ((_ctx: Context, next: Next) => next());
  const markAdmitted = (ctx: Context, next: Next) => {
    phaseTimerOf(ctx)?.mark('admission');
    return next();
  };
  // The slot is taken only once the merchant is known (its share) and the body is in (issue 42).
  const traceCapture = tracingOn() ? [traceRoute(`${FACILITATOR_PREFIX}/capture`)] : [];
  router.post(
    '/capture',
    ...traceCapture,
    serverTiming(env.SERVER_TIMING),
    requireMerchant(deps, PERMISSIONS.settleCreate),
    countCaptures(deps),
    readBodyBeforeAdmission,
    admission,
    markAdmitted,
    writeLimit,
    async (ctx) => {
      const headerKey = ctx.get('idempotency-key') ? idempotencyKeyOf(ctx) : undefined;
      const body = parseBody(CaptureBodySchema, ctx.state.body);
      const idempotencyKey = headerKey ?? keyOfPayload(body.paymentPayload);
      const result = await capturePayment(deps, {
        merchantId: merchantOf(ctx).merchantId,
        payoutAddress: merchantOf(ctx).payoutAddress,
        idempotencyKey,
        timer: phaseTimerOf(ctx),
        body: body.paymentRequirements ? body : { x402Version: body.x402Version, paymentPayload: body.paymentPayload },
      });
      answerReceipt(ctx, result);
    },
  );

  router.get(
    '/payments',
    requireMerchant(deps, PERMISSIONS.settleRead),
    readLimit,
    async (ctx) => {
      ctx.body = await listPayments(deps, merchantOf(ctx).merchantId, listQuery(ctx.query));
    },
  );

  router.get(
    '/batches/:batchId',
    requireMerchant(deps, PERMISSIONS.settleRead),
    readLimit,
    async (ctx) => {
      ctx.body = await batchView(deps, merchantOf(ctx).merchantId, ctx.params.batchId ?? '');
    },
  );

  router.post(
    '/payments/:paymentId/void',
    requireMerchant(deps, PERMISSIONS.settleCreate),
    writeLimit,
    async (ctx) => {
      const idempotencyKey = idempotencyKeyOf(ctx);
      answerReceipt(ctx, await voidPayment(deps, { merchantId: merchantOf(ctx).merchantId, paymentId: ctx.params.paymentId ?? '', idempotencyKey }));
    },
  );

  router.post('/payments/:paymentId/refunds', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    const idempotencyKey = idempotencyKeyOf(ctx);
    const body = parseBody(RefundBodySchema, await readJsonBody(ctx));
    const result = await refundPayment(deps, { merchantId: merchantOf(ctx).merchantId, paymentId: ctx.params.paymentId ?? '', idempotencyKey, body });
    if (result.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.state.workflowId = `refund-${result.refund.refundId}`;
    ctx.status = 202;
    ctx.body = result;
  });

  router.get('/payments/:paymentId/refund-authorization', requireMerchant(deps, PERMISSIONS.settleRead), readLimit, async (ctx) => {
    const q = parseQuery(RefundAuthorizationQuerySchema, ctx.query);
    ctx.body = await prepareRefundAuthorization(deps, {
      merchantId: merchantOf(ctx).merchantId,
      paymentId: ctx.params.paymentId ?? '',
      amount: q.amount,
      ...(q.valid_for ? { validForSeconds: q.valid_for } : {}),
    });
  });

  router.post('/webhook-endpoints', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    const body = parseBody(WebhookEndpointBodySchema, await readJsonBody(ctx));
    ctx.status = 201;
    ctx.body = await createEndpoint(deps, merchantOf(ctx).merchantId, body.url, body.events);
  });
  router.get('/webhook-endpoints', requireMerchant(deps, PERMISSIONS.settleRead), readLimit, async (ctx) => {
    ctx.body = await listEndpoints(deps, merchantOf(ctx).merchantId);
  });
  router.post('/webhook-endpoints/:endpointId/rotate-secret', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    ctx.body = await rotateEndpointSecret(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '');
  });
  router.patch('/webhook-endpoints/:endpointId', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    const body = parseBody(WebhookEndpointUpdateSchema, await readJsonBody(ctx));
    ctx.body = await updateEndpointEvents(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '', body.events);
  });
  router.delete('/webhook-endpoints/:endpointId', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    ctx.body = await removeEndpoint(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '');
  });
  router.post('/webhook-endpoints/:endpointId/test', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    ctx.status = 202;
    ctx.body = await sendTestEvent(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '');
  });
  router.get('/webhook-endpoints/:endpointId/deliveries', requireMerchant(deps, PERMISSIONS.settleRead), readLimit, async (ctx) => {
    const parsed = WebhookDeliveryListQuerySchema.safeParse(ctx.query);
    if (!parsed.success) throw ApiError.invalidRequest(fieldIssues(parsed.error), 'The query is invalid; see fields.');
    const q = { limit: parsed.data.limit ?? 10, ...(parsed.data.starting_after ? { startingAfter: parsed.data.starting_after } : {}) };
    ctx.body = await listDeliveries(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '', q);
  });
  router.post('/webhook-endpoints/:endpointId/deliveries/:deliveryId/resend', requireMerchant(deps, PERMISSIONS.settleCreate), writeLimit, async (ctx) => {
    ctx.status = 202;
    ctx.body = await resendDelivery(deps, merchantOf(ctx).merchantId, ctx.params.endpointId ?? '', ctx.params.deliveryId ?? '');
  });

  router.get('/receipt-keys', (ctx) => {
    if (!deps.receiptSigner) throw ApiError.unavailable();
    ctx.body = deps.receiptSigner.publicJwks;
  });
  router.get('/payments/:paymentId/receipt', requireMerchant(deps, PERMISSIONS.settleRead), async (ctx) => {
    if (!deps.receiptSigner) throw ApiError.unavailable();
    const receipt = await paymentStatus(deps, merchantOf(ctx).merchantId, ctx.params.paymentId ?? '');
    ctx.body = await signedReceipt(deps.receiptSigner, baseUrl(env), receipt);
  });

  router.get('/payments/:paymentId', requireMerchant(deps, PERMISSIONS.settleRead), paymentPoll(deps, deps.statusWaiters ?? statusWaitersFor(deps, deps.logger)));

  router.post('/settle', () => {
    throw ApiError.notFound('route (there is no settle route: capture, then poll the payment until CONFIRMED)');
  });

  return router;
}
