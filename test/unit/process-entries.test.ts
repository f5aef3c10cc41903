import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/config/paths.js';
import { builtFile, PROCESS_ENTRIES, PROCESS_V8_FLAGS, processArgs, processEntry, type ProcessKind } from '../../tools/stack/entries.js';

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The processes the stack starts (the embedded stack, the cluster's replicas, the tests' extra
 * APIs and workers) are named in one place, tools/stack/entries.ts: a renamed entry fails here,
 * after `npm run build`, rather than in a topology that CI does not start.
 */
describe('process entries (tools/stack/entries.ts)', () => {
  const root = projectRoot();

  for (const kind of Object.keys(PROCESS_ENTRIES) as ProcessKind[]) {
    it(`the ${kind}'s entry, ${PROCESS_ENTRIES[kind]}, exists after the build`, () => {
      assert.ok(existsSync(join(root, PROCESS_ENTRIES[kind])), `${PROCESS_ENTRIES[kind]} is built`);
      assert.equal(processEntry(kind), join(root, PROCESS_ENTRIES[kind]));
      assert.deepEqual(processArgs(kind), ['--no-memory-reducer', join(root, PROCESS_ENTRIES[kind])], 'started without the idle collections that discard optimized code');
    });
  }

  it('nothing else spells a process entry: every spawn goes through processEntry', () => {
    const entryLike = /['"`]dist\/(src|workers)\/[\w/-]+\.js['"`]|join\([^)]*['"]dist['"]/;
    const offenders = ['tools', 'test', 'bench', 'src', 'workers', 'examples']
      .flatMap((d) => sources(join(root, d)))
      .filter((f) => !f.endsWith(join('tools', 'stack', 'entries.ts')) && !f.endsWith('process-entries.test.ts'))
      .filter((f) => entryLike.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    assert.deepEqual(offenders, [], `spell the entry through tools/stack/entries.ts: ${offenders.join(', ')}`);
  });

  it('its V8 flags are ones this Node knows (an unknown one would stop the process at start)', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of PROCESS_V8_FLAGS) assert.match(known, new RegExp(`^\\s+--${flag.replace(/^--(no-)?/, '')} \\(`, 'm'), flag);
  });

  it('a missing entry is refused with the fix, before anything is spawned', () => {
    assert.throws(() => builtFile('dist/src/api/server.js', "the api's entry"), /dist\/src\/api\/server\.js \(the api's entry\) is missing: run npm run build/);
  });
});
