import { parseSignature, serializeCompactSignature, signatureToCompactSignature } from 'viem';
import { highSTwin } from './signature-twin.js';

/**
 * The other encodings of one valid wallet signature that ECDSA recovery accepts: its high-s twin,
 * the 64-byte EIP-2098 compact form, and v written as 0/1 instead of 27/28.
 */
export function otherSignatureForms(signature: `0x${string}`): Record<string, `0x${string}`> {
  const v = parseInt(signature.slice(130, 132), 16);
  return {
    'high-s twin': highSTwin(signature),
    'EIP-2098 compact (64 bytes)': serializeCompactSignature(signatureToCompactSignature(parseSignature(signature))),
    'v as 0/1': `${signature.slice(0, 130)}0${v - 27}` as `0x${string}`,
  };
}
