import type { SettlementInfo } from '../deps.js';

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
    extensions: [],
    signers: { 'eip155:*': [s.settler] },
  };
}
