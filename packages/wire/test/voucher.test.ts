import assert from 'node:assert/strict';
import {
  VOUCHER_SIGNING_PREFIX,
  VoucherSchema,
  decodePublicKey,
  encodeKey,
  generateAgentKeyPair,
  parseVoucher,
  randomNonce,
  signVoucher,
  verifyVoucherSignature,
  voucherSigningBytes,
  type Voucher,
} from '@credit-facilitator/wire/voucher';
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalJson } from '@credit-facilitator/wire/canonical';
import { sampleVoucher } from '@credit-facilitator/wire/testing';

const sample = (): Voucher => sampleVoucher();

function tamper(v: Voucher, key: keyof Voucher): Voucher {
  const x = v[key];
  const changed =
    typeof x === 'number'
      ? x + 1
      : x.slice(0, -1) + (x.endsWith('1') ? '2' : '1');
  return { ...v, [key]: changed } as Voucher;
}

describe('domain/voucher', () => {
  const keys = generateAgentKeyPair();

  it('signs over prefix + JCS and verifies', () => {
    const v = sample();
    const bytes = voucherSigningBytes(v);
    assert.equal(new TextDecoder().decode(bytes), VOUCHER_SIGNING_PREFIX + canonicalJson(v));
    const sig = signVoucher(v, keys.privateKey);
    assert.match(sig, /^[A-Za-z0-9_-]{86}$/);
    assert.equal(verifyVoucherSignature(v, sig, keys.publicKey), true);
    // Key order of the object does not matter, only its content.
    const reordered = Object.fromEntries(Object.entries(v).reverse()) as Voucher;
    assert.equal(verifyVoucherSignature(reordered, sig, keys.publicKey), true);
  });

  it('rejects any tampered field', () => {
    const v = sample();
    const sig = signVoucher(v, keys.privateKey);
    for (const k of Object.keys(v) as (keyof Voucher)[]) {
      assert.equal(verifyVoucherSignature(tamper(v, k), sig, keys.publicKey), false, k);
    }
    assert.equal(verifyVoucherSignature({ ...v, extra: 1 } as Voucher, sig, keys.publicKey), false);
  });

  it('rejects a wrong key and malformed signatures without throwing', () => {
    const v = sample();
    const sig = signVoucher(v, keys.privateKey);
    assert.equal(verifyVoucherSignature(v, sig, generateAgentKeyPair().publicKey), false);
    for (const bad of ['', 'x', `${sig}=`, sig.slice(1), `${sig.slice(0, -1)}B`, sig.replace(/.$/, '!'), `${'A'.repeat(86)}`]) {
      assert.equal(verifyVoucherSignature(v, bad, keys.publicKey), false, bad);
    }
    assert.equal(verifyVoucherSignature(v, sig, new Uint8Array(31)), false);
    assert.equal(verifyVoucherSignature(v, sig, new Uint8Array(32)), false);
    assert.equal(verifyVoucherSignature(v, 42 as unknown as string, keys.publicKey), false);
  });

  it('verifies strictly, as the pure-JS curve does with ZIP-215 off: a malleated S (S + L) and small-order keys are refused', () => {
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    for (let i = 0; i < 20; i++) {
      const k = generateAgentKeyPair();
      const v = { ...sample(), nonce: randomNonce() };
      const sig = signVoucher(v, k.privateKey);
      const raw = Buffer.from(sig, 'base64url');
      assert.equal(verifyVoucherSignature(v, sig, k.publicKey), ed25519.verify(raw, voucherSigningBytes(v), k.publicKey, { zip215: false }));
      let s = 0n;
      for (let j = 63; j >= 32; j--) s = (s << 8n) | BigInt(raw[j] as number);
      const malleated = Buffer.from(raw);
      let t = s + L;
      for (let j = 32; j < 64; j++) {
        malleated[j] = Number(t & 0xffn);
        t >>= 8n;
      }
      if (t === 0n) assert.equal(verifyVoucherSignature(v, malleated.toString('base64url'), k.publicKey), false, 'S + L must be refused');
    }
    // The identity point (small order) as a key, with the signature (R = identity, S = 0) that it "verifies" under ZIP-215.
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const forged = new Uint8Array(64);
    forged[0] = 1;
    assert.equal(verifyVoucherSignature(sample(), Buffer.from(forged).toString('base64url'), identity), false);
  });

  it('encodes and decodes keys as base64url', () => {
    const s = encodeKey(keys.publicKey);
    assert.match(s, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(decodePublicKey(s), keys.publicKey);
    assert.equal(decodePublicKey(s.slice(1)), null);
    assert.equal(decodePublicKey(`${s}=`), null);
    assert.equal(decodePublicKey(s.replace(/^./, '+')), null);
    assert.equal(decodePublicKey(encodeKey(new Uint8Array(33))), null);
  });

  it('makes random 32-byte nonces', () => {
    const a = randomNonce();
    assert.match(a, /^0x[0-9a-f]{64}$/);
    assert.notEqual(a, randomNonce());
    assert.equal(VoucherSchema.safeParse({ ...sample(), nonce: a }).success, true);
  });

  it('normalises ids and addresses to lowercase', () => {
    const v = sample();
    const upper = { ...v, merchantId: v.merchantId.toUpperCase(), payTo: '0x00000000000000000000000000000000000000AA' };
    const parsed = VoucherSchema.parse(upper);
    assert.equal(parsed.merchantId, v.merchantId);
    assert.equal(parsed.payTo, v.payTo);
    // The wire parser refuses it instead: the signature covers the bytes as sent.
    const r = parseVoucher(upper);
    assert.equal(r.ok, false);
  });

  it('rejects malformed vouchers', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['version', { v: 2 }],
      ['uuid', { voucherId: 'not-a-uuid' }],
      ['payTo', { payTo: '0x1234' }],
      ['asset', { asset: 'USDC' }],
      ['amount zero', { amount: '0' }],
      ['amount number', { amount: 1500000 }],
      ['amount leading zero', { amount: '01' }],
      ['network', { network: 'base-sepolia' }],
      ['network leading zero', { network: 'eip155:084532' }],
      ['resource empty', { resource: '' }],
      ['resource long', { resource: 'x'.repeat(2049) }],
      ['orderRef long', { orderRef: 'x'.repeat(129) }],
      ['orderRef control char', { orderRef: 'a\nb' }],
      ['nonce short', { nonce: '0x1234' }],
      ['issuedAt negative', { issuedAt: -1 }],
      ['issuedAt fraction', { issuedAt: 1.5 }],
      ['expiresAt string', { expiresAt: '1700000300' }],
      ['extra key', { extra: true }],
    ];
    for (const [name, patch] of cases) {
      assert.equal(VoucherSchema.safeParse({ ...sample(), ...patch }).success, false, name);
    }
    const { nonce: _n, ...missing } = sample();
    assert.equal(VoucherSchema.safeParse(missing).success, false, 'missing nonce');
    assert.equal(VoucherSchema.safeParse({ ...sample(), resource: 'x'.repeat(2048), orderRef: 'x'.repeat(128) }).success, true);
    const r = parseVoucher({ ...sample(), amount: '0' });
    assert.ok(!r.ok && r.detail.startsWith('voucher.amount'));
  });
});
