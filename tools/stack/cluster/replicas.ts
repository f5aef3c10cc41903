import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { creditSettlementAbi } from '../../../src/chain/abi.js';
import { makeChainClients } from '../../../src/chain/clients.js';
import { projectRoot } from '../../../src/config/paths.js';
import { ANVIL_DEV_PRIVATE_KEY } from '../deployment.js';
import { processEntry } from '../entries.js';
import { rpcCall } from '../probes.js';
import { spawnManaged, waitForHttp, type ManagedProcess } from '../processes.js';
import type { StackHandle } from '../stack.js';

/**
 * The second API and the second worker of the cluster topology: the stack's own are the first.
 * Each worker settles with a key of its own (both allowed by the contract), as two workers on two
 * machines would; the APIs share everything but their port.
 */
export interface Replicas {
  apiBaseUrl: string;
  api: ManagedProcess;
  worker: ManagedProcess;
  settlerAddress: Address;
  stop(): Promise<void>;
}

export interface ReplicaOptions {
  apiPort: number;
  quiet: boolean;
  timeoutMs?: number;
}

/** The second worker's key, made once under <dataDir>/cluster (mode 0600) so a restart keeps its settler. */
function secondSettlerKey(dataDir: string): Hex {
  const file = join(dataDir, 'cluster', 'settler-2.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim() as Hex;
  const key = generatePrivateKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * Funds the key for gas and allows it on the contract, signed by the contract's owner (anvil's dev
 * key, which deployed it). Only on our own anvil: elsewhere the owner's key is not ours to hold.
 */
export async function authoriseSettler(stack: StackHandle, key: Hex): Promise<Address> {
  if (!stack.infra.ownsAnvil) throw new Error('a second settler is allowed on the contract by its owner: only done here on the stack\'s own anvil');
  const address = privateKeyToAddress(key);
  const rpcUrl = stack.urls.rpcUrl;
  const owner = makeChainClients({ rpcUrl, chainId: stack.config.CHAIN_ID, privateKey: ANVIL_DEV_PRIVATE_KEY });
  const settlement = getAddress(stack.chain.settlement);
  const allowed = await owner.publicClient.readContract({ address: settlement, abi: creditSettlementAbi, functionName: 'isSettler', args: [address] });
  await rpcCall(rpcUrl, 'anvil_setBalance', [address, `0x${(10n ** 21n).toString(16)}`]);
  if (allowed) return address;
  const hash = await owner.walletClient!.writeContract({ address: settlement, abi: creditSettlementAbi, functionName: 'setSettler', args: [address, true] });
  const receipt = await owner.publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
  if (receipt.status !== 'success') throw new Error(`setSettler for ${address} reverted (${hash})`);
  return address;
}

/** Starts api-2 on `apiPort` and worker-2 with its own settler key; resolves once both are ready. */
export async function startReplicas(stack: StackHandle, o: ReplicaOptions): Promise<Replicas> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const key = secondSettlerKey(stack.dataDir);
  const settlerAddress = await authoriseSettler(stack, key);
  const logFile = (name: string) => (o.quiet ? join(stack.dataDir, 'logs', `${name}.log`) : undefined);
  const { SETTLER_PRIVATE_KEY: _key, ...apiEnv } = stack.env;
  const api = spawnManaged({
    name: 'api-2',
    command: process.execPath,
    args: [processEntry('api')],
    env: { ...apiEnv, API_PORT: String(o.apiPort) },
    cwd: projectRoot(),
    logFile: logFile('api-2'),
  });
  // The stack's worker holds WORKER_METRICS_PORT: the second one serves none.
  const worker = spawnManaged({
    name: 'worker-2',
    command: process.execPath,
    args: [processEntry('worker')],
    env: { ...stack.env, SETTLER_PRIVATE_KEY: key, SETTLER_ADDRESS: settlerAddress, WORKER_METRICS_PORT: '0' },
    cwd: projectRoot(),
    logFile: logFile('worker-2'),
  });
  const host = stack.config.API_HOST === '0.0.0.0' ? '127.0.0.1' : stack.config.API_HOST;
  const origin = `http://${host}:${o.apiPort}`;
  try {
    await Promise.all([
      waitForHttp(`${origin}/api/v1/facilitator/health`, { proc: api, timeoutMs, what: 'api-2 health' }),
      worker.waitForLine('worker ready', timeoutMs),
    ]);
  } catch (err) {
    await Promise.all([api.stop(10_000), worker.stop(10_000)]);
    throw err;
  }
  return {
    apiBaseUrl: `${origin}/api/v1`,
    api,
    worker,
    settlerAddress,
    async stop() {
      await Promise.all([api.stop(15_000), worker.stop(15_000)]);
    },
  };
}
