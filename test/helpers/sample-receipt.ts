import type { Receipt } from '../../src/domain/payment.js';

/** A CONFIRMED receipt with placeholder ids, for tests of what is built from a receipt (webhook events, signatures). */
export const sampleReceipt: Receipt = {
  paymentId: '0b6a4c53-8a4e-4b7e-9a7c-1f0d2c3b4a59',
  status: 'CONFIRMED',
  merchantId: 'm',
  payer: 'b',
  amount: '100',
  asset: '0xa',
  network: 'eip155:84532',
  orderRef: 'o',
  capturedAt: '2026-11-24T00:00:00.000Z',
};
