import {
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type Account,
  type Chain,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { rpcErrorKind } from './rpc-error-kind.js';
import type { RpcErrorKind } from '../observability/chain-metrics.js';

export type ChainPublicClient = PublicClient<Transport, Chain>;
export type ChainWalletClient = WalletClient<Transport, Chain, Account>;

export interface ChainClients {
  chain: Chain;
  publicClient: ChainPublicClient;
  walletClient?: ChainWalletClient;
  account?: Account;
}

export interface ChainClientOptions {
  rpcUrl: string;
  chainId: number;
  privateKey?: `0x${string}`;
  /** Per-request timeout; default 15 s. */
  timeoutMs?: number;
  /** Retries of a failed request (with backoff) before the call throws; default 3. */
  retryCount?: number;
  /** How often viem's watchers and waitForTransactionReceipt poll; default 1 s on a local node, 2 s otherwise. */
  pollingIntervalMs?: number;
  /** Told of every JSON-RPC call once the transport's retries are over: its method and, when it failed, how. */
  onRpc?: (method: string, failed?: RpcErrorKind) => void;
}

/** The transport, with every call's end reported to `onRpc`. */
function observed(transport: Transport, onRpc: NonNullable<ChainClientOptions['onRpc']>): Transport {
  return ((params: Parameters<Transport>[0]) => {
    const t = transport(params);
    const request = (async (args: { method: string }, options?: unknown) => {
      try {
        const result: unknown = await (t.request as (a: unknown, o?: unknown) => Promise<unknown>)(args, options);
        onRpc(args.method);
        return result;
      } catch (err) {
        onRpc(args.method, rpcErrorKind(err));
        throw err;
      }
    }) as typeof t.request;
    return { ...t, request };
  }) as Transport;
}

export function isLocalRpc(rpcUrl: string): boolean {
  const host = new URL(rpcUrl).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '::1' || host === '[::1]';
}

export function makeChain(rpcUrl: string, chainId: number): Chain {
  const local = isLocalRpc(rpcUrl);
  const known = chainId === 84532 ? 'Base Sepolia' : `Chain ${chainId}`;
  return defineChain({
    id: chainId,
    name: local ? `${known} (local)` : known,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    testnet: local || chainId === 84532,
  });
}

export function makeChainClients(opts: ChainClientOptions): ChainClients {
  const chain = makeChain(opts.rpcUrl, opts.chainId);
  const base = http(opts.rpcUrl, {
    timeout: opts.timeoutMs ?? 15_000,
    retryCount: opts.retryCount ?? 3,
    retryDelay: 200,
  });
  const transport = opts.onRpc ? observed(base, opts.onRpc) : base;
  const pollingInterval = opts.pollingIntervalMs ?? (isLocalRpc(opts.rpcUrl) ? 1_000 : 2_000);
  const publicClient = createPublicClient({ chain, transport, pollingInterval });
  if (opts.privateKey === undefined) return { chain, publicClient };
  const account = privateKeyToAccount(opts.privateKey);
  const walletClient = createWalletClient({ chain, transport, account, pollingInterval });
  return { chain, publicClient, walletClient, account };
}
