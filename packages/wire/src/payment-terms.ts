/** What a payment is for: who pays whom, how much, in what, for which order. Spend intents and vouchers share it. */
export interface PaymentTerms {
  borrowerId: string;
  operationalAgentId: string;
  merchantId: string;
  payTo: string;
  amount: string;
  asset: string;
  network: string;
  orderRef: string;
}
