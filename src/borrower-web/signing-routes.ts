import Router from '@koa/router';
import { z } from 'zod';
import type { BorrowerWebDeps } from './deps.js';
import { readJsonBody } from '../http/body.js';
import { getSigningRequestView, submitSignature } from '../agents/signing.js';
import { ToolError } from '../domain/tool-errors.js';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import { errorPage, newNonce, sendHtml } from '../http/html.js';
import { signingPage } from './signing-page.js';

const SigningRequestId = z.uuid();
const SignatureBody = z.strictObject({ signature: z.string().regex(/^0x[0-9a-fA-F]{2,1024}$/, 'must be 0x-prefixed hex') });

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.invalidRequest(fieldIssues(r.error));
  return r.data;
}

function requestId(raw: unknown): string {
  if (!SigningRequestId.safeParse(raw).success) throw ApiError.notFound('signing request');
  return String(raw).toLowerCase();
}

/** A ToolError in the API's error shape; the tool code travels as `reason`. */
export function toolErrorToApiError(err: ToolError): ApiError {
  const extra = { reason: err.code, ...err.details };
  switch (err.code) {
    case 'NOT_FOUND':
      return new ApiError('NOT_FOUND', err.message, { extra });
    case 'SIGNING_REQUEST_CLOSED':
      return new ApiError('INVALID_REQUEST', err.message, { status: 409, extra });
    case 'UNAVAILABLE':
      return ApiError.unavailable();
    default:
      return new ApiError('INVALID_REQUEST', err.message, { extra });
  }
}

async function mapToolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ToolError) throw toolErrorToApiError(err);
    throw err;
  }
}

/** The signing link page and its JSON API: the borrower's own wallet signs one pending request. */
export function signingRouter(deps: BorrowerWebDeps): Router {
  const router = new Router({ prefix: '/borrower' });

  router.get('/sign/:id', (ctx) => {
    if (!SigningRequestId.safeParse(ctx.params.id).success) {
      return sendHtml(ctx, errorPage('Unknown signing link', 'This signing link is not valid. Ask your agent for a new one.'), null, 404);
    }
    const nonce = newNonce();
    sendHtml(ctx, signingPage(String(ctx.params.id).toLowerCase(), deps.env.CHAIN_ID, nonce), nonce);
  });

  router.get('/api/signing-requests/:id', async (ctx) => {
    const id = requestId(ctx.params.id);
    const view = await mapToolErrors(() => getSigningRequestView(deps, id));
    if (!view) throw ApiError.notFound('signing request');
    ctx.body = {
      kind: view.kind,
      status: view.status,
      wallet: view.wallet,
      typed_data: view.typed_data,
      expires_at: view.expires_at,
      summary: view.summary,
      ...(view.result !== undefined ? { result: view.result } : {}),
      ...(view.failure_reason !== undefined ? { failure_reason: view.failure_reason } : {}),
    };
  });

  router.post('/api/signing-requests/:id/signature', async (ctx) => {
    const id = requestId(ctx.params.id);
    const { signature } = parse(SignatureBody, await readJsonBody(ctx));
    const outcome = await mapToolErrors(() => submitSignature(deps, id, signature));
    ctx.body = { status: outcome.status, ...(outcome.result !== undefined ? { result: outcome.result } : {}) };
  });

  return router;
}
