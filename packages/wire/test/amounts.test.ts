import assert from 'node:assert/strict';
import { AmountString, MAX_AMOUNT, parseAmount } from '@credit-facilitator/wire/amounts';

describe('domain/amounts', () => {
  it('accepts positive base-unit strings up to 2^53-1', () => {
    for (const s of ['1', '10', '1000000', String(MAX_AMOUNT)]) {
      assert.equal(AmountString.safeParse(s).success, true, s);
    }
    assert.equal(parseAmount('9007199254740991'), 9007199254740991n);
  });

  it('refuses sign, zero, leading zeros, decimals, exponents, overflow and non-strings', () => {
    for (const s of ['0', '-1', '+1', '01', '1.0', '1e3', ' 1', '1 ', '', '9007199254740992', '99999999999999999', '0x10']) {
      assert.equal(AmountString.safeParse(s).success, false, JSON.stringify(s));
    }
    for (const x of [1, null, 1n, undefined]) assert.equal(AmountString.safeParse(x).success, false);
    assert.throws(() => parseAmount('01'), TypeError);
  });
});
