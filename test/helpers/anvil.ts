import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestClient, http, type TestClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { projectRoot } from '../../src/config/paths.js';
import { freePort } from '../../tools/stack/processes.js';
import { makeChainClients, type ChainClients } from '../../src/chain/clients.js';
import { deployContracts, type Deployment } from '../../src/chain/deploy.js';
import type { ChainContext } from '../../src/chain/context.js';

// anvil's first dev account (public, test-only).
export const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const CHAIN_ID = 84532;

export interface OwnAnvil {
  rpcUrl: string;
  /** A fresh settler key's clients, funded with ether. */
  settler: Required<ChainClients>;
  test: TestClient;
  deployment: Deployment;
  /** A chain context for the settler, without a nonce manager. */
  ctx: ChainContext;
  stop(): Promise<void>;
}

/** An anvil of the test's own, with our contracts deployed and a fresh settler registered. */
export async function startOwnAnvil(opts: { poolFunding: bigint }): Promise<OwnAnvil> {
  const port = await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const bin = join(projectRoot(), 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil');
  const anvil: ChildProcess = spawn(bin, ['--port', String(port), '--chain-id', String(CHAIN_ID), '--silent'], { stdio: 'ignore' });
  const stop = async () => {
    if (anvil.exitCode !== null) return;
    const exited = new Promise((resolve) => anvil.once('exit', resolve));
    anvil.kill('SIGTERM');
    await exited;
  };
  try {
    const clients = makeChainClients({ rpcUrl, chainId: CHAIN_ID, privateKey: generatePrivateKey(), retryCount: 0 });
    for (let i = 0; ; i++) {
      try {
        await clients.publicClient.getChainId();
        break;
      } catch (err) {
        if (i > 100 || anvil.exitCode !== null) throw err;
        await sleep(100);
      }
    }
    const settler = clients as Required<ChainClients>;
    const test = createTestClient({ mode: 'anvil', chain: clients.chain, transport: http(rpcUrl) });
    await test.setBalance({ address: settler.account.address, value: 10n ** 21n });
    const deployment = await deployContracts({
      rpcUrl,
      chainId: CHAIN_ID,
      deployerPrivateKey: DEPLOYER_KEY,
      settlerAddress: settler.account.address,
      poolFunding: opts.poolFunding,
    });
    const ctx = { publicClient: settler.publicClient, walletClient: settler.walletClient, account: settler.account, deployment };
    return { rpcUrl, settler, test, deployment, ctx, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
