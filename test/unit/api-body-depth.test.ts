import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonDepth } from '../../src/http/body.js';

function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v !== null && typeof v === 'object') return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

describe('api body: JSON nesting depth', function () {
  it('counts arrays and objects, never brackets inside strings or after escapes', function () {
    assert.equal(jsonDepth('1'), 0);
    assert.equal(jsonDepth('{"a":[1,{"b":[]}]}'), 4);
    assert.equal(jsonDepth('["[[[[", "\\"[[[", "\\\\"]'), 1);
    assert.equal(jsonDepth(`${'['.repeat(10_000)}${']'.repeat(10_000)}`), 10_000);
  });

  it('equals the depth of the parsed value for any JSON', function () {
    fc.assert(fc.property(fc.jsonValue(), (v) => jsonDepth(JSON.stringify(v)) === depthOf(v)));
  });
});
