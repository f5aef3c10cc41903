import type { SettlementInfo } from '../../domain/settlement-info.js';

export function supportedBody(s: SettlementInfo) {
  return {
    kinds: [
      {
        x402Version: 2,
        scheme: 'credit',
        network: s.network,
        extra: {
          asset: s.asset,
          name: s.assetName,
          version: s.assetVersion,
          decimals: s.assetDecimals,
          settlement: 'batch',
          settlementContract: s.settlementContract,
        },
      },
    ],
    // x402 extensions this facilitator honours: payment-identifier is the capture's idempotency key when no header is sent.
    extensions: ['payment-identifier'],
    signers: { 'eip155:*': [s.settler] },
  };
}
