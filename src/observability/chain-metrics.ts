import { Counter, Gauge, type Registry } from 'prom-client';

/** The JSON-RPC methods the worker calls; any other is counted as `other`. */
export const RPC_METHODS = [
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockByNumber',
  'eth_getLogs',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_maxPriorityFeePerGas',
  'eth_sendRawTransaction',
] as const;
const KNOWN_METHODS = new Set<string>(RPC_METHODS);

/** How a call to the node failed: no answer in time, no connection, an HTTP error, a JSON-RPC error, a revert (often expected: a simulation). */
export const RPC_ERROR_KINDS = ['timeout', 'network', 'http', 'rpc', 'reverted', 'other'] as const;
export type RpcErrorKind = (typeof RPC_ERROR_KINDS)[number];

export const rpcMethodLabel = (method: string): string => (KNOWN_METHODS.has(method) ? method : 'other');

/** What a settler transaction was for, on the dropped counter. */
export const TX_PURPOSES = ['settlement', 'refund', 'repayment'] as const;
export type TxPurpose = (typeof TX_PURPOSES)[number];

/** The chain as the worker sees it: its calls to the node, its settler's money and transactions. */
export function chainMetrics(registry: Registry) {
  const m = {
    rpcRequests: new Counter({ name: 'x402_chain_rpc_requests_total', help: 'JSON-RPC calls to the node (after the client\'s own retries), by method', labelNames: ['method'], registers: [registry] }),
    rpcErrors: new Counter({
      name: 'x402_chain_rpc_errors_total',
      help: 'JSON-RPC calls that failed after the client\'s retries, by method and kind (timeout, network, http, rpc, reverted, other)',
      labelNames: ['method', 'kind'],
      registers: [registry],
    }),
    settlerBalance: new Gauge({ name: 'x402_settler_balance_wei', help: "The settler account's native (gas) balance, sampled", registers: [registry] }),
    poolBalance: new Gauge({ name: 'x402_settlement_pool_balance_base_units', help: "The settlement asset's balance of the settlement contract (the credit pool), in the asset's smallest unit, sampled", registers: [registry] }),
    gasCost: new Counter({ name: 'x402_settlement_gas_cost_wei_total', help: 'Fees paid for confirmed settleBatch transactions (gas used times its effective price)', registers: [registry] }),
    txPending: new Gauge({ name: 'x402_chain_transactions_pending', help: 'Settler transactions sent by this process and not yet mined', registers: [registry] }),
    txReplaced: new Counter({ name: 'x402_chain_transactions_replaced_total', help: 'Stuck settler transactions re-sent with the same nonce and higher fees', registers: [registry] }),
    txDropped: new Counter({ name: 'x402_chain_transactions_dropped_total', help: 'Settler transactions the node forgot before they were mined, by purpose', labelNames: ['purpose'], registers: [registry] }),
    nonceGap: new Gauge({
      name: 'x402_settler_nonce_gap',
      help: "Nonces this process used that the node does not know of (its next nonce minus the node's pending count; above 0 means later transactions wait behind a lost one), sampled",
      registers: [registry],
    }),
    headBlock: new Gauge({ name: 'x402_chain_head_block_number', help: "The node's latest block number, sampled", registers: [registry] }),
    confirmationDepth: new Gauge({ name: 'x402_settlement_confirmation_depth_blocks', help: 'Confirmations the batch being confirmed has reached, by shard (0 when none is waiting)', labelNames: ['shard'], registers: [registry] }),
    confirmationsRequired: new Gauge({ name: 'x402_settlement_confirmations_required_blocks', help: 'CONFIRMATIONS: the depth at which a batch is CONFIRMED', registers: [registry] }),
  };
  for (const method of [...RPC_METHODS, 'other']) {
    m.rpcRequests.inc({ method }, 0);
    for (const kind of RPC_ERROR_KINDS) m.rpcErrors.inc({ method, kind }, 0);
  }
  for (const purpose of TX_PURPOSES) m.txDropped.inc({ purpose }, 0);
  return m;
}
export type ChainMetrics = ReturnType<typeof chainMetrics>;
