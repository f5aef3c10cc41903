import type { Account } from 'viem';
import type { ChainPublicClient, ChainWalletClient } from './clients.js';
import type { Deployment } from './deploy.js';
import type { NonceManager } from './nonce-manager.js';

/** What a call to the deployed contracts with the settler key needs. */
export interface ChainContext {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  account: Account;
  deployment: Deployment;
  /** The settler key's nonce manager, shared by everything in the process that sends with the key. */
  nonces?: NonceManager;
}

/** What read-only calls need. */
export type ChainReadContext = Pick<ChainContext, 'publicClient' | 'deployment'>;
