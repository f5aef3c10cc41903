import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { Hex } from 'viem';
import type { MerchantRateLimits } from '../../src/store/documents.js';
import { setMerchantRateLimits } from '../../src/store/merchants.js';
import { createMerchant } from '../cli/merchant-commands.js';
import type { World } from './world.js';

/** A merchant created the way an operator creates one (the CLI's merchant create), with its API key. */
export interface ProvisionedMerchant {
  merchantId: string;
  apiKey: string;
  keyId: string;
  payoutAddress: Hex;
  /** The payout wallet's key: it signs refunds. */
  payoutKey: Hex;
}

/** Limits high enough that a run firing many requests at once is never throttled by accident. */
export const UNTHROTTLED: MerchantRateLimits = { verify: { perMinute: 1_000_000, burst: 100_000 }, capture: { perMinute: 1_000_000, burst: 100_000 } };

export async function newMerchant(w: World, name = 'Test Merchant', opts: { rateLimits?: MerchantRateLimits } = {}): Promise<ProvisionedMerchant> {
  const payoutKey = generatePrivateKey();
  const payout = privateKeyToAddress(payoutKey);
  const m = await createMerchant(w.cli, name, payout);
  if (opts.rateLimits) await setMerchantRateLimits(w.store.c, m.merchantId, opts.rateLimits);
  return { merchantId: m.merchantId, apiKey: m.apiKey, keyId: m.keyId, payoutAddress: payout, payoutKey };
}
