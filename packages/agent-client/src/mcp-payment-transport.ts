import { PAYMENT_EXTENSION } from './mcp-payment-messages.js';

/** The private `_meta` key PaidMcpClient marks its own requests with; X402McpTransport removes it before sending. */
export const CALL_MARK_KEY = 'x402-credit.local/call';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
/** The first revision with result types, and so with the extension binding. */
const RESULT_TYPE_REVISION = '2026-07-28';
/** The methods x402's extension binding applies to. */
const PAID_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/** An MCP transport of either SDK generation (`Transport` of `@modelcontextprotocol/sdk` 1.x or `@modelcontextprotocol/client` 2.x). */
export interface McpTransportLike {
  start(): Promise<void>;
  send(message: any, options?: any): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
  setSupportedProtocolVersions?: ((versions: string[]) => void) | undefined;
  readonly hasPerRequestStream?: boolean;
}

type Json = Record<string, unknown>;
const record = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);

/**
 * Wraps the transport an MCP client connects through, so a PaidMcpClient gets x402's extension
 * binding from a stock client. On a 2026-07-28 connection it advertises `org.x402/payment` in the
 * per-request client capabilities of the PaidMcpClient's own requests (merged into the envelope the
 * SDK attached, never replacing it), and keeps their `resultType: "payment_required"` answers: the
 * v2 `Client` 2.4 rejects result types it does not know (`SdkError` UNSUPPORTED_RESULT_TYPE) before
 * any result schema runs, so the PaidMcpClient reads the answer here. Every other message passes
 * through unchanged; requests the application makes itself are not advertised.
 */
export class X402McpTransport implements McpTransportLike {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  readonly inner: McpTransportLike;
  #version: string | undefined;
  /** JSON-RPC id of an outstanding marked request → its mark. */
  readonly #marks = new Map<string | number, string>();
  /** Mark → the payment_required result its request got, until the PaidMcpClient takes it. */
  readonly #answers = new Map<string, Json>();

  constructor(inner: McpTransportLike) {
    this.inner = inner;
    inner.onmessage = (message: unknown, extra?: unknown) => {
      this.#observe(message);
      this.onmessage?.(message, extra);
    };
    inner.onerror = (error: Error) => this.onerror?.(error);
    inner.onclose = () => this.onclose?.();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  /** The revision the client negotiated (the SDK tells its transport). */
  get protocolVersion(): string | undefined {
    return this.#version;
  }

  setProtocolVersion(version: string): void {
    this.#version = version;
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    this.#marks.clear();
    this.#answers.clear();
    return this.inner.close();
  }

  send(message: any, options?: any): Promise<void> {
    const msg = record(message);
    const params = record(msg?.params);
    const meta = record(params?._meta);
    const mark = meta?.[CALL_MARK_KEY];
    if (!msg || !params || !meta || typeof mark !== 'string') return this.inner.send(message, options);

    const { [CALL_MARK_KEY]: _mark, ...rest } = meta;
    const outMeta: Json = rest;
    const version = typeof rest[VERSION_KEY] === 'string' ? rest[VERSION_KEY] : this.#version;
    if (typeof msg.method === 'string' && PAID_METHODS.has(msg.method) && version !== undefined && version >= RESULT_TYPE_REVISION) {
      const caps = record(rest[CAPABILITIES_KEY]) ?? {};
      outMeta[CAPABILITIES_KEY] = { ...caps, extensions: { ...record(caps.extensions), [PAYMENT_EXTENSION]: {} } };
    }
    if (typeof msg.id === 'string' || typeof msg.id === 'number') this.#marks.set(msg.id, mark);
    const { _meta: _old, ...otherParams } = params;
    return this.inner.send({ ...msg, params: Object.keys(outMeta).length > 0 ? { ...otherParams, _meta: outMeta } : otherParams }, options);
  }

  /** The `payment_required` result the request marked `mark` got, once; undefined when it got none. */
  takePaymentRequired(mark: string): Json | undefined {
    const answer = this.#answers.get(mark);
    this.#answers.delete(mark);
    return answer;
  }

  /** Drops whatever is kept for `mark` (its request ended). */
  forget(mark: string): void {
    this.#answers.delete(mark);
    for (const [id, m] of this.#marks) if (m === mark) this.#marks.delete(id);
  }

  #observe(message: unknown): void {
    const msg = record(message);
    const id = msg?.id;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const mark = this.#marks.get(id);
    if (mark === undefined || !('result' in msg! || 'error' in msg!)) return;
    this.#marks.delete(id);
    const result = record(msg!.result);
    if (result?.resultType === 'payment_required') this.#answers.set(mark, result);
  }
}
