/** Block explorers by chain id; a chain without one shows the hash alone. */
const EXPLORERS: Readonly<Record<number, string>> = {
  8453: 'https://basescan.org',
  84532: 'https://sepolia.basescan.org',
};

/** The explorer page of a transaction, or null for a chain we know no explorer of. */
export function explorerTxUrl(chainId: number, hash: string): string | null {
  const base = EXPLORERS[chainId];
  return base && /^0x[0-9a-fA-F]{64}$/.test(hash) ? `${base}/tx/${hash}` : null;
}
