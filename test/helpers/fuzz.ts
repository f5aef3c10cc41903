import fc from 'fast-check';

/**
 * Arbitraries for fuzzing the API edges: structure-aware mutations of real, valid payloads
 * (drop, replace, retype, tweak and add fields), hostile values, raw JSON text that
 * JSON.stringify cannot write, and junk bodies and headers.
 */

/** JSON text spliced verbatim into a body: numbers like 1e400 or -0, deep nesting, duplicate keys. */
export class RawJson {
  constructor(readonly text: string) {}
}

const RAW_TAG = '@@fuzz-raw-7f3a@@';

/** JSON text of a value that may hold RawJson pieces and own `__proto__` keys. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof RawJson ? `${RAW_TAG}${raws.push(v.text) - 1}${RAW_TAG}` : v));
  if (text === undefined) return 'null';
  if (raws.length === 0) return text;
  return text.replace(new RegExp(`"${RAW_TAG}(\\d+)${RAW_TAG}"`, 'g'), (_m, i: string) => raws[Number(i)] as string);
}

type Json = unknown;
type Obj = Record<string, Json>;
type Path = (string | number)[];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawJson);

/** An own enumerable property even for "__proto__", so JSON.stringify writes it. */
function setOwn(o: Obj, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

function clone(v: Json): Json {
  if (Array.isArray(v)) return v.map(clone);
  if (isObj(v)) {
    const out: Obj = {};
    for (const k of Object.keys(v)) setOwn(out, k, clone(v[k]));
    return out;
  }
  return v;
}

/** Every node's path, root first. */
function pathsOf(v: Json, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...at, i], out));
  else if (isObj(v)) for (const k of Object.keys(v)) pathsOf(v[k], [...at, k], out);
  return out;
}

function getAt(root: Json, path: Path): Json {
  let v = root;
  for (const k of path) v = (v as Record<string | number, Json>)[k];
  return v;
}

/** Returns the new root (a root-level change replaces it). */
function setAt(root: Json, path: Path, value: Json): Json {
  if (path.length === 0) return value;
  const parent = getAt(root, path.slice(0, -1)) as Obj | Json[];
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent[key as number] = value;
  else setOwn(parent, String(key), value);
  return root;
}

function deleteAt(root: Json, path: Path): Json {
  if (path.length === 0) return root;
  const parent = getAt(root, path.slice(0, -1)) as Obj | Json[];
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[String(key)];
  return root;
}

// ---------------------------------------------------------------- hostile values

/** Keys that break naive code: prototype pollution, Mongo operators and dotted paths, empties. */
export const NASTY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '$where', '$set', '$gt', 'a.b', '', ' ', '\u0000', 'x'.repeat(300)];

const NASTY_STRINGS = [
  '', ' ', '\t\n', '\u0000', '\ud800', '\udfff', '\uffff', '\u202e', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'ﾟ･✿ヾ╲(｡◕‿◕｡)╱✿･ﾟ', 'Ω≈ç√∫', '<script>alert(1)</script>',
  "' OR 1=1 --", '{"$gt":""}', '../../etc/passwd', '%00', '%zz', 'null', 'undefined', 'NaN', 'Infinity', 'true', '[]', '{}',
  '0', '-1', '00', '01', '1.5', '1e3', '1E400', ' 1', '1 ', '+1', '0x10', '９', '9007199254740993', '9'.repeat(80), '-0',
  '__proto__', 'constructor', 'credit', 'exact', 'eip155:84532', 'eip155:1', 'eip155:0', 'eip155:', 'solana:mainnet',
  '0x', '0x0', `0x${'0'.repeat(40)}`, `0x${'f'.repeat(40)}`, `0x${'G'.repeat(40)}`, `0x${'ab'.repeat(32)}`, `0X${'ab'.repeat(32)}`,
  '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-4fff-bfff-ffffffffffff', '{11111111-1111-4111-8111-111111111111}',
  '11111111111141118111111111111111', '11111111-1111-1111-1111-111111111111', '11111111-1111-4111-8111-11111111111g',
  '====', 'a', 'ab=', 'AAAA', '_-_-', 'A'.repeat(43), 'A'.repeat(86), 'A'.repeat(85), 'A'.repeat(87), `${'A'.repeat(42)}=`,
  'sk_live_', 'Bearer x', 'eyJhbGciOiJub25lIn0.e30.', 'ZXlK', 'eyJ9',
];

const bigString = fc.constantFrom(300, 5_000, 40_000, 70_000).chain((n) => fc.constantFrom('A', 'é', '😀', '\\').map((c) => c.repeat(n)));

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.uuid().map((u) => (u.length % 2 ? u.toUpperCase() : u)) },
  { weight: 1, arbitrary: fc.base64String({ maxLength: 100 }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String) },
  { weight: 1, arbitrary: bigString },
);

/** Numbers as JSON text, including what JSON.stringify never writes. */
export const nastyNumber: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 32, 2 ** 40 + 1, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e21, 1e308, Number.MIN_VALUE, -(2 ** 63)) },
  { weight: 2, arbitrary: fc.constantFrom('1e400', '-1e400', '-0', '1E2', '2.0', '123456789012345678901234567890', '0.00000000000000000000001', '1e-400').map((t) => new RawJson(t)) },
);

/** Deep nesting as raw text (cheap to build, hard on recursive code). */
const deepJunk: fc.Arbitrary<Json> = fc
  .record({ depth: fc.constantFrom(33, 101, 1_000, 10_000, 20_000), kind: fc.constantFrom('array', 'object') })
  .map(({ depth, kind }) => new RawJson(kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

const protoJunk: fc.Arbitrary<Json> = fc.constantFrom(
  new RawJson('{"__proto__":{"isAdmin":true,"status":"ACTIVE"}}'),
  new RawJson('{"constructor":{"prototype":{"polluted":1}}}'),
  new RawJson('{"$where":"sleep(1000)","$gt":""}'),
  new RawJson('{"a.b":1,"$set":{"x":1}}'),
  new RawJson('{"toJSON":"x","valueOf":1}'),
);

/** Anything a client could put where one field belongs. */
export const nastyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 5, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom([], {}, [null], [{}]) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: deepJunk },
  { weight: 1, arbitrary: protoJunk },
);

// ---------------------------------------------------------------- structure-aware mutations

const RETYPES = ['number', 'string', 'array', 'object', 'boolean', 'null', 'raw-number'] as const;
const TWEAKS = ['upper', 'lower', 'pad', 'truncate', 'append', 'flip', 'double', 'increment', 'negate', 'scale'] as const;

export type Mutation =
  | { op: 'delete'; at: number }
  | { op: 'replace'; at: number; value: Json }
  | { op: 'retype'; at: number; to: (typeof RETYPES)[number] }
  | { op: 'tweak'; at: number; how: (typeof TWEAKS)[number]; n: number; ch: string }
  | { op: 'addKey'; at: number; key: string; value: Json }
  | { op: 'swap'; at: number; from: number };

const at = fc.nat({ max: 10_000 });

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), at }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('replace' as const), at, value: nastyValue }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('retype' as const), at, to: fc.constantFrom(...RETYPES) }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('tweak' as const), at, how: fc.constantFrom(...TWEAKS), n: fc.nat({ max: 200 }), ch: fc.constantFrom('0', 'a', 'F', '-', ' ', '=', '\u0000', 'é', '😀', '"') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('addKey' as const), at, key: fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 })), value: nastyValue }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('swap' as const), at, from: at }) },
);

function retype(v: Json, to: (typeof RETYPES)[number]): Json {
  switch (to) {
    case 'number':
      return typeof v === 'string' ? (Number.isFinite(Number(v)) && v.trim() !== '' ? Number(v) : v.length) : typeof v === 'number' ? v : 1;
    case 'string':
      return typeof v === 'string' ? v : v instanceof RawJson ? v.text : (JSON.stringify(v) ?? 'undefined');
    case 'array':
      return [v];
    case 'object':
      return { value: v };
    case 'boolean':
      return Boolean(v);
    case 'null':
      return null;
    case 'raw-number':
      // The same digits JSON.stringify would write, spelled as a float or with an exponent.
      return typeof v === 'string' && /^[0-9]+$/.test(v) ? new RawJson(`${v}.0`) : typeof v === 'number' && Number.isFinite(v) ? new RawJson(`${v}e0`) : v;
  }
}

function tweak(v: Json, how: (typeof TWEAKS)[number], n: number, ch: string): Json {
  if (typeof v === 'number') {
    const byHow: Record<string, number> = { increment: v + 1, negate: -v, scale: v * 1e6, truncate: Math.trunc(v / 10), double: v * 2, pad: v + 0.5 };
    return byHow[how] ?? v - 1;
  }
  if (typeof v !== 'string') return v;
  const i = v.length === 0 ? 0 : n % v.length;
  switch (how) {
    case 'upper':
      return v.toUpperCase();
    case 'lower':
      return v.toLowerCase();
    case 'pad':
      return n % 2 ? ` ${v}` : `${v}\n`;
    case 'truncate':
      return v.slice(0, i);
    case 'append':
      return `${v}${ch}`;
    case 'flip':
      return `${v.slice(0, i)}${ch}${v.slice(i + 1)}`;
    case 'double':
      return `${v}${v}`;
    case 'increment':
      return /^[0-9]+$/.test(v) ? (BigInt(v) + 1n).toString() : `${v.slice(0, i)}${v.slice(i + 1)}`;
    case 'negate':
      return `-${v}`;
    case 'scale':
      return /^[0-9]+$/.test(v) ? `${v}${'0'.repeat((n % 20) + 1)}` : v.repeat(3);
  }
}

/** Applies mutations in order to a copy of `base`; each picks its node by index among the current paths. */
export function applyMutations(base: Json, mutations: readonly Mutation[]): Json {
  let root = clone(base);
  for (const m of mutations) {
    const paths = pathsOf(root);
    const path = paths[m.at % paths.length] as Path;
    const here = getAt(root, path);
    switch (m.op) {
      case 'delete':
        root = deleteAt(root, path);
        break;
      case 'replace':
        root = setAt(root, path, clone(m.value));
        break;
      case 'retype':
        root = setAt(root, path, retype(here, m.to));
        break;
      case 'tweak':
        root = setAt(root, path, tweak(here, m.how, m.n, m.ch));
        break;
      case 'addKey':
        if (isObj(here)) setOwn(here, m.key, clone(m.value));
        else if (Array.isArray(here)) here.push(clone(m.value));
        else root = setAt(root, path, { [m.key]: here });
        break;
      case 'swap':
        root = setAt(root, path, clone(getAt(root, paths[m.from % paths.length] as Path)));
        break;
    }
  }
  return root;
}

/** One to three mutations of a real payload; `fix` re-imposes what must not vary (e.g. long-poll waits). */
export function mutantOf<T>(base: T, fix: (v: Json) => Json = (v) => v): fc.Arbitrary<Json> {
  return fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => fix(applyMutations(base, ms)));
}

// ---------------------------------------------------------------- bodies and headers

const textMutation = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), n: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), n: fc.nat(), s: fc.constantFrom(',', '}', ']', '"', '\\', '\u0000', ' ', 'x', '{"a":', '/*c*/', '\ud800') }),
  fc.record({ kind: fc.constant('wrap' as const), prefix: fc.constantFrom('\uFEFF', ' \n', '[', 'x', ''), suffix: fc.constantFrom('', 'x', ',', ']', '\n\n{}', ' // tail') }),
  fc.record({ kind: fc.constant('duplicateKey' as const), key: fc.constantFrom('x402Version', 'paymentPayload', 'jsonrpc', 'method', 'params', 'id', '__proto__'), value: fc.constantFrom('1', '"2"', 'null', '{}', '[]') }),
);

/** Character-level damage to valid JSON text: truncation, stray characters, BOM, duplicate keys. */
export function textMutantOf(text: string): fc.Arbitrary<string> {
  return textMutation.map((m) => {
    switch (m.kind) {
      case 'truncate':
        return text.slice(0, m.n % Math.max(1, text.length));
      case 'insert': {
        const i = m.n % (text.length + 1);
        return `${text.slice(0, i)}${m.s}${text.slice(i)}`;
      }
      case 'wrap':
        return `${m.prefix}${text}${m.suffix}`;
      case 'duplicateKey':
        return text.startsWith('{') ? `{"${m.key}":${m.value},${text.slice(1)}` : text;
    }
  });
}

/** Bodies that are not JSON at all, top-level JSON of the wrong kind, and oversized ones. */
export const junkText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('', ' ', 'null', 'true', '0', '-0', '1e400', '"x"', '[]', '{}', '{', ']', '[1,2', 'undefined', 'NaN', "{'a':1}", '\uFEFF{}', '\u0000', '{"a":1}{"a":2}', 'a=1&b=2', '<xml/>'),
  fc.constantFrom(65_537, 70_000, 200_000).map((n) => JSON.stringify({ pad: 'x'.repeat(n) })),
  deepJunk.map(toJsonText),
);

/** The body of one fuzz case: mostly mutants of the real payload, some untouched, some random or broken. */
export function bodyTextOf(base: unknown, fix?: (v: Json) => Json): fc.Arbitrary<string> {
  const valid = toJsonText(base);
  return fc.oneof(
    { weight: 14, arbitrary: mutantOf(base, fix).map(toJsonText) },
    { weight: 1, arbitrary: fc.constant(valid) },
    { weight: 2, arbitrary: fc.jsonValue().map(toJsonText) },
    { weight: 2, arbitrary: textMutantOf(valid) },
    { weight: 1, arbitrary: junkText },
  );
}

/** Header values node:http will send: tab, printable ASCII and Latin-1 (no CR, LF, NUL or DEL). */
export const headerJunk: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)).map((c) => String.fromCharCode(c)), maxLength: 80 }),
  fc.constantFrom('', ' ', 'null', 'undefined', '*', ',', ';', 'x'.repeat(8_000)),
);

/** Content-Type: mostly JSON, sometimes a near miss or something else entirely (undefined: no header). */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8', 'application/json; charset=latin1',
      'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml',
      'application/vnd.api+json', 'application/merge-patch+json', '*/*', 'application', ';;;', 'application/json, text/plain', undefined,
    ),
  },
  { weight: 1, arbitrary: headerJunk },
);

/** A UUID v4 Idempotency-Key, or something that is almost one, or not one at all (undefined: no header). */
export const idempotencyKeyHeader: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.uuid({ version: 4 }) },
  { weight: 2, arbitrary: fc.uuid({ version: 4 }).map((u) => u.toUpperCase()) },
  { weight: 2, arbitrary: fc.uuid({ version: [1, 3, 5, 7] }) },
  { weight: 1, arbitrary: fc.uuid({ version: 4 }).map((u) => `{${u}}`) },
  { weight: 1, arbitrary: fc.uuid({ version: 4 }).map((u) => u.replaceAll('-', '')) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: headerJunk },
);

/** Percent-encodes the UTF-8 bytes of any string (lone surrogates included, which encodeURIComponent refuses). */
export function percentEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** A path segment: percent-encoded junk, broken escapes, dot segments. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: nastyString.filter((s) => s.length < 2_000).map(percentEncode) },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '..', '.', '%2e%2e', 'a%2Fb', '%C0%AE', ';x=1', '%uD800', 'x'.repeat(10_000)) },
);

/** Cases per route or tool; FUZZ_CASES raises it for a longer hunt. */
export const CASES = Number(process.env.FUZZ_CASES ?? 2000);
/** Cases sent concurrently per property run. */
export const BATCH = 16;

/** FUZZ_SEED and FUZZ_PATH replay a reported failure. */
function fuzzParams<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env.FUZZ_SEED;
  const path = process.env.FUZZ_PATH;
  return { numRuns, ...(seed !== undefined ? { seed: Number(seed) } : {}), ...(path !== undefined ? { path } : {}) };
}

/**
 * Runs at least `cases` cases of `arb`, BATCH at a time concurrently; `run` sends one and judges
 * its answer (throwing on a broken property). A failure reports the seed and path that replay it
 * and the one request that broke the property, after fast-check shrank the batch.
 */
export async function fuzzCases<T>(arb: fc.Arbitrary<T>, run: (c: T) => Promise<void>, opts: { cases?: number; examples?: T[] } = {}): Promise<number> {
  let ran = 0;
  const property = fc.asyncProperty(fc.array(arb, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
    await Promise.all(batch.map(run));
    ran += batch.length;
  });
  // Hand-written cases (known hostile inputs) run first, as one batch, then the generated ones.
  const examples: [T[]][] = opts.examples?.length ? [[opts.examples]] : [];
  const details = await fc.check(property, { ...fuzzParams<[T[]]>(Math.ceil((opts.cases ?? CASES) / BATCH) + examples.length), examples });
  if (details.failed) {
    const err = details.errorInstance;
    throw new Error(
      `fuzz failure after ${details.numRuns} runs and ${details.numShrinks} shrinks; replay with FUZZ_SEED=${details.seed} FUZZ_PATH="${details.counterexamplePath ?? ''}"\n` +
        (err instanceof Error ? err.message : String(err)),
    );
  }
  // A replay (FUZZ_PATH) runs only the reported case; otherwise every edge must get its full count.
  if (process.env.FUZZ_PATH === undefined && ran < (opts.cases ?? CASES)) throw new Error(`only ${ran} of ${opts.cases ?? CASES} cases ran`);
  return ran;
}
