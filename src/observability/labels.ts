/**
 * Metric label values, bounded. A label value a caller can choose (a tool name in a JSON-RPC
 * body, an HTTP method, an error code relayed from elsewhere) would let one client add series
 * without limit; every such value goes through one of these and falls back to a fixed word.
 */
import { TOOL_ERROR_CODES } from '../domain/tool-errors.js';
import { ERROR_STATUS } from '../domain/errors.js';
import { INVALID_REASONS } from '@credit-facilitator/wire/invalid-reasons';
import { TOOL_SCOPES } from '@credit-facilitator/wire/onboarding';

const oneOf = (known: ReadonlySet<string>, fallback: string) => (value: unknown): string =>
  typeof value === 'string' && known.has(value) ? value : fallback;

/** The tool label: one of the eight tool names, else `unknown`. */
export const toolLabel = oneOf(new Set(Object.keys(TOOL_SCOPES)), 'unknown');

/** JSON-RPC 2.0 error codes the SDK answers with (parse, request, method, params, internal). */
const RPC_ERROR_CODES = new Set(['-32700', '-32600', '-32601', '-32602', '-32603', '-32000', '-32001']);
const OUTCOME_WORDS = new Set<string>([
  'ok',
  'tool_error',
  'internal_error',
  'invalid_call',
  'rpc_error',
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'INTERNAL',
  ...TOOL_ERROR_CODES,
  ...RPC_ERROR_CODES,
]);

/** The outcome label of a tool call: ok, one of our error codes or a JSON-RPC error code, else `other`. */
export const toolOutcomeLabel = (value: unknown): string =>
  oneOf(OUTCOME_WORDS, 'other')(typeof value === 'number' ? String(value) : value);

/** Error codes of the REST API (capture outcomes), else `other`. */
export const errorCodeLabel = oneOf(new Set(Object.keys(ERROR_STATUS)), 'other');

/** invalidReason values (verify verdicts, capture rejections), else `other`. */
export const invalidReasonLabel = oneOf(new Set<string>(INVALID_REASONS), 'other');

/** HTTP methods worth a series of their own; any other verb is `OTHER`. */
export const httpMethodLabel = oneOf(new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']), 'OTHER');

/** HTTP status: a three-digit code, else `other`. */
export const httpStatusLabel = (status: number): string => (Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : 'other');
