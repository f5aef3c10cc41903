/** What the facilitator serves about the chain side: from the deployment, never from a request. */
export interface SettlementInfo {
  network: string;
  asset: string;
  assetDecimals: number;
  assetName: string;
  assetVersion: string;
  settlementContract: string;
  settler: string;
}
