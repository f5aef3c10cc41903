import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, fingerprint, sha256Hex } from '@credit-facilitator/wire/canonical';

function shuffleKeys(v: unknown, seed: number): unknown {
  if (Array.isArray(v)) return v.map((x, i) => shuffleKeys(x, seed + i));
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    const rotated = keys.map((_, i) => keys[(i + seed) % keys.length] as string).reverse();
    const out: Record<string, unknown> = {};
    for (const k of rotated) {
      Object.defineProperty(out, k, {
        value: shuffleKeys((v as Record<string, unknown>)[k], seed + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

describe('domain/canonical', () => {
  it('sorts keys by UTF-16 code units (RFC 8785 3.2.3)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const order = Object.keys(JSON.parse(canonicalJson(input)) as object);
    // JSON.parse puts the integer-like key first again, so check the text instead.
    assert.equal(order.length, 7);
    const text = canonicalJson(input);
    const positions = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) =>
      text.indexOf(JSON.stringify(k) + ':'),
    );
    assert.deepEqual([...positions].sort((a, b) => a - b), positions);
  });

  it('formats numbers, strings and literals as RFC 8785 3.2.2', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    ) as unknown;
    assert.equal(
      canonicalJson(input),
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('nests and removes whitespace', () => {
    assert.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x' }), '{"a":"x","b":[1,{"c":2,"d":1}]}');
    assert.equal(canonicalJson(-0), '0');
  });

  it('throws on values without a JSON form', () => {
    assert.throws(() => canonicalJson(undefined));
    assert.throws(() => canonicalJson(NaN));
    assert.throws(() => canonicalJson(Infinity));
    assert.throws(() => canonicalJson(10n));
  });

  it('hashes with SHA-256', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(sha256Hex(new Uint8Array()), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('fingerprints independently of key order and number spelling', () => {
    assert.equal(fingerprint({ a: 1, b: { c: 2.0, d: [1e2] } }), fingerprint(JSON.parse('{"b":{"d":[100],"c":2},"a":1.0}')));
    assert.notEqual(fingerprint({ a: 1 }), fingerprint({ a: '1' }));
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(10), (v, seed) => {
        assert.equal(fingerprint(shuffleKeys(v, seed)), fingerprint(v));
      }),
    );
  });
});
