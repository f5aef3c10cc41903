import assert from 'node:assert/strict';
import { z } from 'zod';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { parseQuery, queryIssues } from '../../src/http/query.js';
import { ApiError } from '../../src/domain/errors.js';

describe('query and body issues name the field', () => {
  const Q = z.strictObject({ limit: z.coerce.number().int().min(1) });

  it('names an unknown query parameter and a bad value by the parameter', () => {
    const r = Q.safeParse({ limt: '1', limit: '0' });
    assert.ok(!r.success);
    assert.deepEqual(queryIssues(r.error).map((i) => i.path).sort(), ['limit', 'limt']);
  });

  it('parseQuery throws INVALID_REQUEST "The query is invalid"', () => {
    assert.throws(() => parseQuery(Q, { x: '1' }), (e: unknown) => e instanceof ApiError && e.code === 'INVALID_REQUEST' && e.message === 'The query is invalid; see fields.');
    assert.deepEqual(parseQuery(Q, { limit: '3' }), { limit: 3 });
  });

  it('names an unknown body field by its path; (body) stays for the body as a whole', () => {
    const B = z.strictObject({ a: z.strictObject({ b: z.string() }) });
    const r = B.safeParse({ a: { b: 'x', c: 1 }, d: 2 });
    assert.ok(!r.success);
    assert.deepEqual(fieldIssues(r.error).map((i) => i.path).sort(), ['a.c', 'd']);
    const whole = z.object({}).safeParse(null);
    assert.ok(!whole.success);
    assert.equal(fieldIssues(whole.error)[0]?.path, '(body)');
  });
});
