import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from './args.js';
import { pingStore } from '../../src/store/mongo.js';

const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
const GRPC_NOT_FOUND = 5;

/**
 * True once the namespace answers and carries our search attributes. Registers a missing
 * namespace or attribute: start-dev only applies its flags to a fresh database file.
 */
export async function temporalReady(address: string, namespace: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    const svc = connection.workflowService;
    try {
      await svc.describeNamespace({ namespace });
    } catch (err) {
      if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
      await svc.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('7 days') });
      return false;
    }
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const have = new Set(Object.keys(listed.customAttributes ?? {}));
    const missing = Object.keys(SEARCH_ATTRIBUTES).filter((n) => !have.has(n));
    if (missing.length === 0) return true;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((n) => [n, KEYWORD])),
    });
    return false;
  } finally {
    await connection.close();
  }
}

export function mongoPing(uri: string): Promise<boolean> {
  return pingStore(uri, 1500);
}

export async function rpcCall<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(3000),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

export async function chainId(rpcUrl: string): Promise<number> {
  return Number.parseInt(await rpcCall<string>(rpcUrl, 'eth_chainId'), 16);
}
