import { z } from 'zod';
import { mcpHttpError, type McpHttpError, type McpHttpErrorCode } from '../../http/mcp-errors.js';

const METHOD_NOT_FOUND = -32601;

/**
 * What the v2 server answers with a non-2xx status: its validation ladder (-32020 header/body
 * mismatch, -32022 unsupported version, -32602 envelope, -32600 shape) and 404 -32601.
 */
const LadderAnswer = z.object({
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    data: z
      .object({
        supported: z.array(z.string().max(40)).max(20).optional().catch(undefined),
        requested: z.string().optional().catch(undefined),
        mismatch: z.object({ header: z.string(), body: z.string() }).optional().catch(undefined),
        envelope: z
          .object({ key: z.string().max(100).optional(), problem: z.string().max(300).optional(), missing: z.array(z.string().max(100)).max(10).optional() })
          .optional()
          .catch(undefined),
      })
      .optional()
      .catch(undefined),
  }),
});

const CODE_BY_STATUS: Readonly<Record<number, McpHttpErrorCode>> = {
  400: 'INVALID_REQUEST',
  404: 'METHOD_NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

const clip = (s: string, n: number) => s.split('\n')[0]!.slice(0, n);

/**
 * The v2 server's refusal in the /mcp error shape: its JSON-RPC code, the request's id and the
 * data a client acts on (the supported versions, the mismatching header) kept; `code` and
 * `requestId` added. A 5xx or an answer we cannot read becomes our plain 500.
 */
export function modernRefusal(status: number, body: unknown, requestId: string): McpHttpError {
  const parsed = LadderAnswer.safeParse(body);
  const code = CODE_BY_STATUS[status];
  if (status >= 500 || !parsed.success || !code) {
    return mcpHttpError(500, 'INTERNAL', 'An internal error occurred. Retry later; quote the requestId if it persists.', requestId);
  }
  const { id, error } = parsed.data;
  const d = error.data ?? {};
  const data = {
    ...(d.supported ? { supported: d.supported } : {}),
    ...(d.requested !== undefined ? { requested: clip(d.requested, 40) } : {}),
    ...(d.mismatch ? { mismatch: { header: clip(d.mismatch.header, 200), body: clip(d.mismatch.body, 300) } } : {}),
    ...(d.envelope !== undefined ? { envelope: d.envelope } : {}),
  };
  return mcpHttpError(status, code, clip(error.message, 300), requestId, { id: id ?? null, rpcCode: error.code, data });
}

/** 404 -32601: a method the 2026-07-28 revision does not define, or one this server does not serve. */
export function methodNotFound(method: string, requestId: string, id: string | number | null): McpHttpError {
  return mcpHttpError(404, 'METHOD_NOT_FOUND', `Method not found: ${clip(method, 64)}.`, requestId, { id, rpcCode: METHOD_NOT_FOUND });
}
