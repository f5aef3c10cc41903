import { z } from 'zod';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 0x-prefixed 20-byte hex address');
const Uint256 = z.string().regex(/^(0|[1-9][0-9]{0,77})$/, 'a decimal integer string').refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) < 2n ** 256n, 'exceeds uint256'); // zod runs refinements after a failed regex too
export const BaseUnits = z.string().regex(/^[1-9][0-9]{0,30}$/, 'a positive decimal string of base units');

/** The EIP-3009 ReceiveWithAuthorization the merchant's payout wallet signed (values as decimal strings). */
export const RefundAuthorizationSchema = z.strictObject({
  from: Address,
  to: Address,
  value: Uint256,
  validAfter: Uint256,
  validBefore: Uint256,
  nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a 0x-prefixed 32-byte hex nonce'),
});

/** A refund request's body, as every merchant edge (REST, the merchant console) validates it before refundPayment. */
export const RefundBodySchema = z.strictObject({
  amount: BaseUnits.describe('Base units to refund; at most what is left of the payment'),
  authorization: RefundAuthorizationSchema,
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, 'a 65-byte hex signature'),
});

