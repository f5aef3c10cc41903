import Router from '@koa/router';
import { z } from 'zod';
import { baseUrl, type Env } from '../config/env.js';
import {
  CaptureBodySchema,
  PaymentListQuerySchema,
  RefundBodySchema,
  VerifyBodySchema,
  WebhookDeliveryListQuerySchema,
  WebhookEndpointBodySchema,
  WebhookEndpointUpdateSchema,
} from './facilitator/schemas.js';
import {
  BatchViewSchema,
  CaptureResponseSchema,
  ErrorBodySchema,
  PaymentListSchema,
  ReceiptKeysSchema,
  SignedReceiptSchema,
  VoidResponseSchema,
  RefundAuthorizationResponseSchema,
  RefundResponseSchema,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointDeletedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookEndpointSecretSchema,
  HealthResponseSchema,
  MeResponseSchema,
  ReceiptSchema,
  SupportedResponseSchema,
  VerifyResponseSchema,
} from './facilitator/response-schemas.js';

type JsonSchema = Record<string, unknown>;

/** OpenAPI 3.1 schemas are JSON Schema 2020-12, which zod emits directly. */
function schemaOf(s: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const json = (ref: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const errorResponse = (description: string) => ({ description, ...json('Error') });

const merchantErrors = {
  '401': errorResponse('UNAUTHENTICATED: no or invalid credential (WWW-Authenticate: Bearer)'),
  '403': errorResponse('FORBIDDEN (missing permission) or STEP_UP_REQUIRED'),
  '429': errorResponse('RATE_LIMITED, with Retry-After and RateLimit-* headers'),
  '503': errorResponse('UNAVAILABLE, with Retry-After'),
};

const bodyErrors = {
  '400': errorResponse('INVALID_REQUEST (with fields) or X402_AGENT_VOUCHER_REQUIRED'),
  '413': errorResponse('PAYLOAD_TOO_LARGE'),
  '415': errorResponse('UNSUPPORTED_MEDIA_TYPE: send application/json'),
};

/** The list route's query parameters, from the schema that validates them. */
function listParameters() {
  const shape = schemaOf(PaymentListQuerySchema, 'input') as { properties: Record<string, JsonSchema> };
  const what: Record<string, string> = {
    limit: '1 to 100, default 10',
    starting_after: 'a paymentId from the previous page: the page after it',
    status: 'only payments in this status',
    orderRef: 'only payments for this order',
    batchId: 'only payments settled in this batch',
    'created[gte]': 'captured at or after (ISO 8601)',
    'created[gt]': 'captured after (ISO 8601)',
    'created[lte]': 'captured at or before (ISO 8601)',
    'created[lt]': 'captured before (ISO 8601)',
  };
  return Object.entries(shape.properties).map(([name, schema]) => ({ name, in: 'query', required: false, description: what[name] ?? name, schema }));
}

/** The delivery log's query parameters, from the schema that validates them. */
function deliveryListParameters() {
  const shape = schemaOf(WebhookDeliveryListQuerySchema, 'input') as { properties: Record<string, JsonSchema> };
  const what: Record<string, string> = { limit: '1 to 100, default 10', starting_after: 'a delivery id from the previous page: the page after it' };
  return Object.entries(shape.properties).map(([name, schema]) => ({ name, in: 'query', required: false, description: what[name] ?? name, schema }));
}

const endpointIdParameter = { name: 'endpointId', in: 'path', required: true, schema: { type: 'string' } };

/** The REST contract of the facilitator, generated from the zod schemas the routes validate with. */
export function openApiDocument(env: Env) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'x402 credit facilitator',
      version: '1.0.0',
      description:
        'Merchants verify and capture x402 credit vouchers, then poll until CONFIRMED on-chain. A 200 from capture means queued for the next settleBatch, never settled.',
    },
    servers: [{ url: baseUrl(env) }],
    security: [{ bearer: [] }],
    paths: {
      '/facilitator/supported': {
        get: {
          operationId: 'getSupported',
          summary: 'Discovery: scheme, x402 version, network, asset, settler',
          security: [],
          responses: { '200': { description: 'Supported kinds', ...json('Supported') } },
        },
      },
      '/facilitator/health': {
        get: { operationId: 'getHealth', summary: 'Liveness', security: [], responses: { '200': { description: 'Alive', ...json('Health') } } },
      },
      '/facilitator/me': {
        get: {
          operationId: 'getMe',
          summary: 'Who this credential is: its merchant, permissions and limits (any valid merchant credential). Call it at start to fail fast on a wrong key',
          responses: {
            '200': { description: 'The merchant, the credential, its permissions and limits', ...json('Me') },
            '401': errorResponse('UNAUTHENTICATED: no, a revoked or an unknown credential, or a disabled merchant (WWW-Authenticate: Bearer)'),
            '503': errorResponse('UNAVAILABLE, with Retry-After'),
          },
        },
      },
      '/facilitator/verify': {
        post: {
          operationId: 'verify',
          summary: 'Gate check of a credit envelope (permission x402:settle:read); captures nothing',
          requestBody: { required: true, ...json('VerifyRequest') },
          responses: { '200': { description: 'Verdict; isValid false carries invalidReason', ...json('VerifyResponse') }, ...bodyErrors, ...merchantErrors },
        },
      },
      '/facilitator/capture': {
        post: {
          operationId: 'capture',
          summary: 'Capture a credit voucher: queues the payment for the next settleBatch (permission x402:settle:create)',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: true,
              description: 'UUID v4; the same key and body replays the first receipt, another body is 409',
              schema: { type: 'string', format: 'uuid' },
            },
          ],
          requestBody: { required: true, ...json('CaptureRequest') },
          responses: {
            '200': { description: 'Queued (not yet CONFIRMED)', ...json('CaptureResponse') },
            ...bodyErrors,
            '400': errorResponse('INVALID_REQUEST, X402_AGENT_VOUCHER_REQUIRED, IDEMPOTENCY_KEY_REQUIRED or IDEMPOTENCY_KEY_INVALID'),
            '409': errorResponse('IDEMPOTENCY_KEY_CONFLICT: the key was used with another body; IDEMPOTENCY_KEY_IN_USE: a request with the same key is in flight (retry after Retry-After)'),
            '422': errorResponse('PAYMENT_REJECTED, with invalidReason (the words verify uses)'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/payments': {
        get: {
          operationId: 'listPayments',
          summary: "The merchant's payments, newest first, a page at a time (permission x402:settle:read)",
          parameters: listParameters(),
          responses: {
            '200': { description: 'One page', ...json('PaymentList') },
            '400': errorResponse('INVALID_REQUEST (with fields): an unknown parameter, a bad value, or a starting_after that is not one of your payments'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/payments/{paymentId}/void': {
        post: {
          operationId: 'voidPayment',
          summary: 'Void a captured payment no settlement batch has claimed: it ends VOIDED and the credit hold is released (permission x402:settle:create)',
          parameters: [
            { name: 'paymentId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'Idempotency-Key', in: 'header', required: true, description: 'UUID v4; reused for another payment is 409', schema: { type: 'string', format: 'uuid' } },
          ],
          responses: {
            '200': { description: 'VOIDED (replayed: true when it already was)', ...json('VoidResponse') },
            '400': errorResponse('IDEMPOTENCY_KEY_REQUIRED or IDEMPOTENCY_KEY_INVALID'),
            '404': errorResponse('NOT_FOUND: no such payment of yours'),
            '409': errorResponse('PAYMENT_ALREADY_CLAIMED (a batch holds it, with batchId: refund it once CONFIRMED), PAYMENT_NOT_VOIDABLE, IDEMPOTENCY_KEY_CONFLICT or IDEMPOTENCY_KEY_IN_USE'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/payments/{paymentId}/refund-authorization': {
        get: {
          operationId: 'prepareRefundAuthorization',
          summary: "The EIP-3009 ReceiveWithAuthorization (EIP-712 typed data) the payout wallet signs to refund `amount` of a payment (permission x402:settle:read)",
          parameters: [
            { name: 'paymentId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'amount', in: 'query', required: true, description: 'Base units to refund', schema: { type: 'string', pattern: '^[1-9][0-9]{0,30}$' } },
            { name: 'valid_for', in: 'query', required: false, description: 'Seconds the authorization stays valid (900 to 604800, default 3600)', schema: { type: 'integer' } },
          ],
          responses: {
            '200': { description: 'Typed data with a fresh nonce bound to the payment', ...json('RefundAuthorization') },
            '400': errorResponse('INVALID_REQUEST (with fields)'),
            '404': errorResponse('NOT_FOUND: no such payment of yours'),
            '409': errorResponse('PAYMENT_NOT_CONFIRMED (with paymentStatus: QUEUED, SUBMITTED, VOIDED, FAILED), as the refund would answer; REFUND_EXCEEDS_PAYMENT, with refundable'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/payments/{paymentId}/refunds': {
        post: {
          operationId: 'refundPayment',
          summary:
            'Refund all or part of a CONFIRMED payment with an EIP-3009 ReceiveWithAuthorization signed by the payout wallet; the facilitator submits it on-chain and the poll shows it (permission x402:settle:create)',
          parameters: [
            { name: 'paymentId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'Idempotency-Key', in: 'header', required: true, description: 'UUID v4; the same key and body replays the first answer, another body is 409', schema: { type: 'string', format: 'uuid' } },
          ],
          requestBody: { required: true, ...json('RefundRequest') },
          responses: {
            '202': { description: 'Recorded PENDING; poll the payment for its progress', ...json('RefundResponse') },
            ...bodyErrors,
            '400': errorResponse('INVALID_REQUEST, REFUND_AUTHORIZATION_INVALID (with fields), IDEMPOTENCY_KEY_REQUIRED or IDEMPOTENCY_KEY_INVALID'),
            '404': errorResponse('NOT_FOUND: no such payment of yours'),
            '409': errorResponse('PAYMENT_NOT_CONFIRMED, REFUND_EXCEEDS_PAYMENT (with refundable), REFUND_AUTHORIZATION_USED, IDEMPOTENCY_KEY_CONFLICT or IDEMPOTENCY_KEY_IN_USE'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/batches/{batchId}': {
        get: {
          operationId: 'getBatch',
          summary: "A settlement batch with the caller's payments in it (permission x402:settle:read); a batch without any is 404",
          parameters: [{ name: 'batchId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The batch, its transaction and your payments in it', ...json('BatchView') },
            '404': errorResponse('NOT_FOUND'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/webhook-endpoints': {
        post: {
          operationId: 'createWebhookEndpoint',
          summary: 'Register an https endpoint for signed settlement events (permission x402:settle:create); the secret is shown once',
          requestBody: { required: true, ...json('WebhookEndpointRequest') },
          responses: {
            '201': { description: 'The endpoint and its secret', ...json('WebhookEndpointSecret') },
            ...bodyErrors,
            '400': errorResponse('INVALID_REQUEST: not https, a private address, an unknown event, or more than 10 endpoints'),
            ...merchantErrors,
          },
        },
        get: {
          operationId: 'listWebhookEndpoints',
          summary: "The merchant's endpoints, without secrets (permission x402:settle:read)",
          responses: { '200': { description: 'The endpoints', ...json('WebhookEndpointList') }, ...merchantErrors },
        },
      },
      '/facilitator/webhook-endpoints/{endpointId}/rotate-secret': {
        post: {
          operationId: 'rotateWebhookSecret',
          summary: 'A new secret, shown once; the previous one keeps signing for 24 h (permission x402:settle:create)',
          parameters: [{ name: 'endpointId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'The new secret', ...json('WebhookEndpointSecret') }, '404': errorResponse('NOT_FOUND'), ...merchantErrors },
        },
      },
      '/facilitator/webhook-endpoints/{endpointId}/test': {
        post: {
          operationId: 'sendWebhookTestEvent',
          summary:
            'Send a signed webhook.test event (data.test is true; no payment behind it) through the same delivery path as payment events, whatever the endpoint subscribed to (permission x402:settle:create)',
          parameters: [endpointIdParameter],
          responses: { '202': { description: 'The delivery, in the log at once; follow it in the deliveries list', ...json('WebhookDelivery') }, '404': errorResponse('NOT_FOUND'), ...merchantErrors },
        },
      },
      '/facilitator/webhook-endpoints/{endpointId}/deliveries': {
        get: {
          operationId: 'listWebhookDeliveries',
          summary: "The endpoint's deliveries, newest first: attempts, last status code and latency, next retry, outcome (permission x402:settle:read)",
          parameters: [endpointIdParameter, ...deliveryListParameters()],
          responses: {
            '200': { description: 'A page of deliveries', ...json('WebhookDeliveryList') },
            '400': errorResponse('INVALID_REQUEST (with fields): an unknown parameter, a bad value, or a starting_after that is not a delivery to this endpoint'),
            '404': errorResponse('NOT_FOUND: no endpoint of yours has this id'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/resend': {
        post: {
          operationId: 'resendWebhookDelivery',
          summary: "Send a delivery's event again: a new delivery with its own attempts and the same event id, so the receiver deduplicates (permission x402:settle:create)",
          parameters: [endpointIdParameter, { name: 'deliveryId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '202': { description: 'The new delivery', ...json('WebhookDelivery') }, '404': errorResponse('NOT_FOUND'), ...merchantErrors },
        },
      },
      '/facilitator/webhook-endpoints/{endpointId}': {
        patch: {
          operationId: 'updateWebhookEndpoint',
          summary: 'Change which payment events the endpoint receives; deliveries already started are unchanged (permission x402:settle:create)',
          parameters: [endpointIdParameter],
          requestBody: { required: true, ...json('WebhookEndpointUpdate') },
          responses: {
            '200': { description: 'The endpoint', ...json('WebhookEndpoint') },
            ...bodyErrors,
            '404': errorResponse('NOT_FOUND'),
            ...merchantErrors,
          },
        },
        delete: {
          operationId: 'deleteWebhookEndpoint',
          summary: 'Stop sending events to the endpoint; deliveries in progress stop (permission x402:settle:create)',
          parameters: [{ name: 'endpointId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'Deleted', ...json('WebhookEndpointDeleted') }, '404': errorResponse('NOT_FOUND'), ...merchantErrors },
        },
      },
      '/facilitator/payments/{paymentId}/receipt': {
        get: {
          operationId: 'getSignedReceipt',
          summary: 'The CONFIRMED receipt signed by the facilitator (ES256 JWS), to prove settlement without asking us (permission x402:settle:read)',
          parameters: [{ name: 'paymentId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': { description: 'The signed receipt', ...json('SignedReceipt') },
            '404': errorResponse('NOT_FOUND'),
            '409': errorResponse('PAYMENT_NOT_CONFIRMED, with paymentStatus'),
            ...merchantErrors,
          },
        },
      },
      '/facilitator/receipt-keys': {
        get: {
          operationId: 'getReceiptKeys',
          summary: 'Public: the JWKS that verifies signed receipts',
          security: [],
          responses: { '200': { description: 'JWKS', ...json('ReceiptKeys') } },
        },
      },
      '/facilitator/payments/{paymentId}': {
        get: {
          operationId: 'getPayment',
          summary: 'Status poll by receipt.paymentId (permission x402:settle:read); another merchant\'s payment is 404',
          description:
            'With `Prefer: wait=N` (RFC 7240) the poll is a long poll: the answer is held until the payment is final (CONFIRMED, FAILED, VOIDED), through every step it takes meanwhile, or N seconds pass (the status then), and carries `Preference-Applied: wait=N`. A final status (CONFIRMED, FAILED, VOIDED) answers at once. An answer that was not held (no or a malformed `wait`, or the API process already holds PAYMENT_WAIT_MAX_WAITERS polls) has no `Preference-Applied` and, while the payment still moves, a `Retry-After`.',
          parameters: [
            { name: 'paymentId', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'Prefer',
              in: 'header',
              required: false,
              description: '`wait=N`: hold the answer up to N seconds (whole seconds; above 30 is taken as 30) until the payment is final. A malformed value is ignored (a plain poll), as are other preferences.',
              schema: { type: 'string', examples: ['wait=25'] },
            },
          ],
          responses: {
            '200': {
              description: 'The receipt with its settlement status',
              headers: {
                'Preference-Applied': {
                  description: 'wait=N (N after clamping) when the poll was held or its payment was already final; absent on an answer that was not held',
                  schema: { type: 'string', pattern: '^wait=[0-9]+$' },
                },
                'Retry-After': {
                  description:
                    'Seconds before asking again, on a QUEUED or SUBMITTED answer that was not held: the batch window (BATCH_MAX_WAIT_MS rounded up, at least 1) while QUEUED, 1 while SUBMITTED',
                  schema: { type: 'integer', minimum: 1 },
                },
              },
              ...json('Receipt'),
            },
            '404': errorResponse('NOT_FOUND'),
            ...merchantErrors,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A merchant API key (sk_live_...) or a merchant user JWT' },
      },
      schemas: {
        VerifyRequest: schemaOf(VerifyBodySchema, 'input'),
        CaptureRequest: schemaOf(CaptureBodySchema, 'input'),
        VerifyResponse: schemaOf(VerifyResponseSchema, 'output'),
        CaptureResponse: schemaOf(CaptureResponseSchema, 'output'),
        Receipt: schemaOf(ReceiptSchema, 'output'),
        PaymentList: schemaOf(PaymentListSchema, 'output'),
        VoidResponse: schemaOf(VoidResponseSchema, 'output'),
        RefundRequest: schemaOf(RefundBodySchema, 'input'),
        RefundResponse: schemaOf(RefundResponseSchema, 'output'),
        RefundAuthorization: schemaOf(RefundAuthorizationResponseSchema, 'output'),
        BatchView: schemaOf(BatchViewSchema, 'output'),
        SignedReceipt: schemaOf(SignedReceiptSchema, 'output'),
        ReceiptKeys: schemaOf(ReceiptKeysSchema, 'output'),
        WebhookEndpointRequest: schemaOf(WebhookEndpointBodySchema, 'input'),
        WebhookEndpointSecret: schemaOf(WebhookEndpointSecretSchema, 'output'),
        WebhookEndpointList: schemaOf(WebhookEndpointListSchema, 'output'),
        WebhookEndpointDeleted: schemaOf(WebhookEndpointDeletedSchema, 'output'),
        WebhookEndpointUpdate: schemaOf(WebhookEndpointUpdateSchema, 'input'),
        WebhookEndpoint: schemaOf(WebhookEndpointSchema, 'output'),
        WebhookDelivery: schemaOf(WebhookDeliverySchema, 'output'),
        WebhookDeliveryList: schemaOf(WebhookDeliveryListSchema, 'output'),
        Supported: schemaOf(SupportedResponseSchema, 'output'),
        Health: schemaOf(HealthResponseSchema, 'output'),
        Me: schemaOf(MeResponseSchema, 'output'),
        Error: schemaOf(ErrorBodySchema, 'output'),
      },
    },
  };
}

/** Public: GET {base_url}/openapi.json. */
export function openApiRouter(env: Env): Router {
  const router = new Router({ prefix: '/api/v1' });
  const doc = openApiDocument(env);
  router.get('/openapi.json', (ctx) => {
    ctx.body = doc;
  });
  return router;
}
