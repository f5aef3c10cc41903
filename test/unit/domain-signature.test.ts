import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { isCanonicalSignature, SECP256K1_HALF_N, SECP256K1_N } from '../../src/domain/signature.js';
import { otherSignatureForms } from '../helpers/signature-forms.js';

const hex32 = (n: bigint) => n.toString(16).padStart(64, '0');

describe('isCanonicalSignature', function () {
  it('takes a wallet signature as signed and none of its other encodings', async function () {
    for (let i = 0; i < 20; i++) {
      const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: `m${i}` });
      assert.equal(isCanonicalSignature(signature), true, signature);
      for (const [form, other] of Object.entries(otherSignatureForms(signature))) assert.equal(isCanonicalSignature(other), false, form);
    }
  });

  it('bounds r and s as the chain does', function () {
    const r = hex32(1n);
    assert.equal(isCanonicalSignature(`0x${r}${hex32(SECP256K1_HALF_N)}1b`), true, 's = N/2 is still low');
    assert.equal(isCanonicalSignature(`0x${r}${hex32(SECP256K1_HALF_N + 1n)}1b`), false, 's = N/2 + 1 is high');
    assert.equal(isCanonicalSignature(`0x${r}${hex32(0n)}1b`), false, 's = 0');
    assert.equal(isCanonicalSignature(`0x${hex32(0n)}${hex32(1n)}1c`), false, 'r = 0');
    assert.equal(isCanonicalSignature(`0x${hex32(SECP256K1_N)}${hex32(1n)}1c`), false, 'r = N');
    for (const bad of ['', '0x', `0x${'zz'.repeat(65)}`, `0x${r}${hex32(1n)}1d`, `0x${r}${hex32(1n)}1b00`, 42, null]) {
      assert.equal(isCanonicalSignature(bad), false, String(bad));
    }
  });
});
