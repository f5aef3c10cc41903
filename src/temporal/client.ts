import { Client, Connection } from '@temporalio/client';
import { tracingClientInterceptors } from './tracing.js';

export async function connectTemporal(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address, connectTimeout: '10s' });
  const interceptors = await tracingClientInterceptors();
  return new Client({ connection, namespace, ...(interceptors ? { interceptors } : {}) });
}
