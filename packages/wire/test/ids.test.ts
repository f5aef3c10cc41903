import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bytes32ToUuid, isUuid, isUuidV4, newId, uuidToBytes32 } from '@credit-facilitator/wire/ids';

describe('domain/ids', () => {
  const u = '3f2c1d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

  it('recognises UUIDs and UUID v4', () => {
    assert.equal(isUuid(u), true);
    assert.equal(isUuid(u.toUpperCase()), true);
    assert.equal(isUuid('3f2c1d4e-5a6b-1c7d-0e9f-0a1b2c3d4e5f'), true);
    assert.equal(isUuid('3f2c1d4e5a6b4c7d8e9f0a1b2c3d4e5f'), false);
    assert.equal(isUuid(`${u}0`), false);
    assert.equal(isUuid(` ${u}`), false);
    assert.equal(isUuidV4(u), true);
    assert.equal(isUuidV4('3f2c1d4e-5a6b-1c7d-8e9f-0a1b2c3d4e5f'), false, 'version 1');
    assert.equal(isUuidV4('3f2c1d4e-5a6b-4c7d-0e9f-0a1b2c3d4e5f'), false, 'wrong variant');
  });

  it('maps a UUID to bytes32 left-padded with zeros, lowercase', () => {
    assert.equal(uuidToBytes32(u.toUpperCase()), `0x${'0'.repeat(32)}3f2c1d4e5a6b4c7d8e9f0a1b2c3d4e5f`);
    assert.equal(bytes32ToUuid(`0x${'0'.repeat(32)}3F2C1D4E5A6B4C7D8E9F0A1B2C3D4E5F`), u);
  });

  it('refuses non-UUIDs and non-zero padding', () => {
    assert.throws(() => uuidToBytes32('nope'), TypeError);
    assert.throws(() => bytes32ToUuid(`0x1${'0'.repeat(31)}3f2c1d4e5a6b4c7d8e9f0a1b2c3d4e5f`), TypeError);
    assert.throws(() => bytes32ToUuid('0x1234'), TypeError);
    assert.throws(() => bytes32ToUuid(`0x${'g'.repeat(64)}`), TypeError);
  });

  it('newId gives distinct lowercase UUID v4s', () => {
    const a = newId();
    const b = newId();
    assert.ok(isUuidV4(a) && a === a.toLowerCase());
    assert.notEqual(a, b);
  });

  it('round trips any UUID (property)', () => {
    fc.assert(
      fc.property(fc.uuid(), (id) => {
        const b = uuidToBytes32(id);
        assert.match(b, /^0x0{32}[0-9a-f]{32}$/);
        assert.equal(bytes32ToUuid(b), id.toLowerCase());
      }),
    );
  });
});
