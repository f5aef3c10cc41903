import { awaitBatchConfirmation, findBatchSettlement, type ConfirmationProgress } from '../chain/settlement.js';
import type { ConfirmationResult, SettlementDeps } from './settings.js';

/**
 * Polls the chain until the batch is confirmed at depth, reverted or dropped (see
 * src/chain/settlement.ts), reporting progress through onProgress; records the batch metrics.
 */
export async function confirmOnChain(
  deps: Pick<SettlementDeps, 'chain' | 'settings' | 'metrics'>,
  batchId: string,
  transaction: string | null,
  opts: { sent?: { sentAt: number; payments: number }; pollMs?: number; onProgress: (progress: ConfirmationProgress) => void },
): Promise<ConfirmationResult> {
  let txHash = transaction as `0x${string}` | null;
  if (txHash === null) {
    const found = await findBatchSettlement(deps.chain, batchId);
    if (!found) return { status: 'dropped' };
    txHash = found.txHash;
  }
  const r = await awaitBatchConfirmation(deps.chain, {
    batchId,
    txHash,
    confirmations: deps.settings.confirmations,
    pollMs: opts.pollMs ?? 500,
    timeoutMs: 10 * 60_000,
    onProgress: opts.onProgress,
    currentHash: deps.chain.nonces && ((h) => deps.chain.nonces!.currentHash(h)),
  });
  deps.metrics?.batches.inc({ outcome: r.status });
  if (r.status === 'confirmed') {
    if (opts.sent) {
      deps.metrics?.settleLatency.observe((Date.now() - opts.sent.sentAt) / 1000);
      deps.metrics?.paymentsSettled.inc(opts.sent.payments);
    }
    deps.metrics?.gasUsed.inc(Number(r.gasUsed));
    deps.metrics?.chain.gasCost.inc(Number(r.gasUsed * r.effectiveGasPrice));
    return {
      status: 'confirmed',
      transaction: r.txHash,
      blockNumber: r.blockNumber.toString(),
      confirmedAt: new Date(r.confirmedAt * 1000).toISOString(),
      gasUsed: r.gasUsed.toString(),
    };
  }
  if (r.status === 'dropped') deps.metrics?.chain.txDropped.inc({ purpose: 'settlement' });
  return r.status === 'reverted' ? { status: 'reverted', transaction: r.txHash } : { status: 'dropped' };
}
