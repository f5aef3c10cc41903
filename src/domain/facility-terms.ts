import { keccak256, stringToHex } from 'viem';

/**
 * The credit facility terms a borrower accepts; FacilityAcceptance signs their keccak256, so a
 * change of wording needs a new version string and a new signature.
 */
export const FACILITY_TERMS = [
  'x402 credit facility terms v1.',
  'The facilitator pays merchants on your behalf for vouchers signed by agent keys you authorised, within their limits.',
  'Each settled payment adds to your debt on the settlement contract; you repay it in the settlement asset.',
  'The credit limit bounds held plus owed credit. Revoking or rotating an agent key stops new vouchers under it.',
].join('\n');

export const FACILITY_TERMS_HASH: `0x${string}` = keccak256(stringToHex(FACILITY_TERMS));
