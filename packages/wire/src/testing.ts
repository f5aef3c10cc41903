import type { Voucher } from './voucher.js';

/**
 * Fixtures for tests of code that handles vouchers (ours and an integrator's): a fixed, schema-valid
 * voucher whose ids and addresses are easy to recognise in a failure. Not signed; sign it with
 * `signVoucher` from `@credit-facilitator/wire/voucher` where a test needs a signature.
 */
export const SAMPLE = {
  borrowerId: '33333333-3333-4333-8333-333333333333',
  operationalAgentId: '44444444-4444-4444-8444-444444444444',
  merchantId: '55555555-5555-4555-8555-555555555555',
  payTo: '0x00000000000000000000000000000000000000aa',
  asset: '0x00000000000000000000000000000000000000bb',
} as const;

export const sampleVoucher = (patch: Partial<Voucher> = {}): Voucher => ({
  v: 1,
  voucherId: '11111111-1111-4111-8111-111111111111',
  spendIntentId: '22222222-2222-4222-8222-222222222222',
  ...SAMPLE,
  amount: '1500000',
  network: 'eip155:84532',
  resource: 'https://merchant.example/report/42',
  orderRef: 'order-42',
  nonce: `0x${'ab'.repeat(32)}`,
  issuedAt: 1_700_000_000,
  expiresAt: 1_700_000_300,
  ...patch,
});
