import { ClientRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { mcpHttpError, type McpHttpError, type McpHttpErrorCode } from '../http/mcp-errors.js';

/**
 * What the SDK transport answers is cleaned here before it leaves /mcp:
 * - its own HTTP refusals (406 Accept, 400 unsupported protocol version or a body that is no
 *   JSON-RPC message...) take our /mcp error shape, without the SDK's `data` (which can hold an
 *   exception's text);
 * - a request whose params do not match its method's schema comes back from the SDK as -32603
 *   Internal error with the schema library's issue dump as message (Protocol.setRequestHandler
 *   throws the parse error). It becomes -32602 Invalid params naming the fields; any other -32603
 *   loses its text and is returned for the server log.
 */

const CODE_BY_STATUS: Readonly<Record<number, McpHttpErrorCode>> = {
  400: 'INVALID_REQUEST',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** The SDK's non-2xx answer in the /mcp error shape. */
export function transportRefusal(status: number, body: unknown, requestId: string): McpHttpError {
  const error = isObj(body) && isObj(body.error) ? body.error : {};
  const message = typeof error.message === 'string' && error.message !== '' ? error.message.split('\n')[0]!.slice(0, 300) : 'The request was refused.';
  const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_REQUEST');
  return mcpHttpError(status >= 500 ? 500 : status, code, message, requestId, { ...(Number.isInteger(error.code) ? { rpcCode: error.code as number } : {}) });
}

function paramsProblem(request: Obj): string | undefined {
  const schema = ClientRequestSchema.options.find((o) => o.shape.method.value === request.method);
  const parsed = schema?.safeParse(request);
  if (!parsed || parsed.success) return undefined;
  return parsed.error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(request)'}: ${i.message}`).join('; ');
}

/** `responseBody` with every -32603 replaced (see above), and the replaced internal errors. */
export function cleanRpcErrors(requestBody: unknown, responseBody: unknown, requestId: string): { body: unknown; internal: unknown[] } {
  const requests = new Map<unknown, Obj>();
  for (const m of asList(requestBody)) if (isObj(m) && (typeof m.id === 'string' || typeof m.id === 'number')) requests.set(m.id, m);
  const internal: unknown[] = [];
  const clean = (r: unknown): unknown => {
    if (!isObj(r) || !isObj(r.error) || r.error.code !== ErrorCode.InternalError) return r;
    const request = requests.get(r.id);
    const problem = request ? paramsProblem(request) : undefined;
    if (problem !== undefined) {
      return { jsonrpc: '2.0', id: r.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problem}`, data: { code: 'INVALID_REQUEST', requestId } } };
    }
    internal.push(r.error);
    return { jsonrpc: '2.0', id: r.id, error: { code: ErrorCode.InternalError, message: 'Internal error; quote the requestId if it persists.', data: { code: 'INTERNAL', requestId } } };
  };
  return { body: Array.isArray(responseBody) ? responseBody.map(clean) : clean(responseBody), internal };
}
