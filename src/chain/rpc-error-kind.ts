import { HttpRequestError, TimeoutError } from 'viem';
import type { RpcErrorKind } from '../observability/chain-metrics.js';

/** How a call to the node failed, for x402_chain_rpc_errors_total{kind}. */
export function rpcErrorKind(err: unknown): RpcErrorKind {
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof HttpRequestError) return err.status === undefined ? 'network' : 'http';
  const e = err as { code?: unknown; message?: unknown; details?: unknown } | null;
  const text = `${String(e?.message ?? '')} ${String(e?.details ?? '')}`;
  if (e?.code === 3 || /revert/i.test(text)) return 'reverted';
  if (typeof e?.code === 'number') return 'rpc';
  return 'other';
}
