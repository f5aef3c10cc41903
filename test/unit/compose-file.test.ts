import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { EnvSchema } from '../../src/config/env.js';
import { SEARCH_ATTRIBUTES } from '../../tools/stack/args.js';
import { SCHEMA_NAMES } from '../../tools/stack/cluster/schema.js';
import { CLUSTER_HISTORY_SHARDS, TEMPORAL_SERVICES, temporalClusterDynamicConfig } from '../../tools/stack/cluster/temporal-config.js';
import { TEMPORAL_SERVER_VERSION } from '../../tools/stack/cluster/temporal-server-build.js';
import { PROCESS_ENTRIES, PROCESS_V8_FLAGS } from '../../tools/stack/entries.js';

/** Docker cannot run here, so temporal-compose.yml is checked statically against the config the code reads. */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const read = (f: string) => readFileSync(`${root}${f}`, 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  ports?: string[];
  environment?: Record<string, unknown>;
  healthcheck?: { test: unknown };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}

describe('temporal-compose.yml (static)', () => {
  const compose = parse(read('temporal-compose.yml'), { merge: true }) as { services: Record<string, Service> };
  const services = compose.services;
  const configNames = new Set(Object.keys(EnvSchema.shape));

  it('has the cluster topology: PostgreSQL, the schema job, four Temporal services, the namespace job, the UI, MongoDB, two APIs and two workers', () => {
    for (const name of ['postgresql', 'temporal-schema', 'temporal-namespace', 'temporal-ui', 'mongo', 'api', 'api-2', 'worker', 'worker-2']) assert.ok(services[name], `service ${name}`);
    assert.ok(!services.temporal, 'no single all-in-one Temporal');
    assert.match(services.mongo?.image ?? '', /^mongo:/);
    assert.ok(services.mongo?.command?.includes('--replSet'), 'MongoDB runs as a replica set');
    assert.match(services.api?.environment?.MONGODB_URI as string, /replicaSet=/);
  });

  it('runs each Temporal service alone, on the server version the cluster stack builds, over its shards on PostgreSQL', () => {
    for (const s of TEMPORAL_SERVICES) {
      const svc = services[`temporal-${s}`];
      assert.equal(svc?.image, `temporalio/server:${TEMPORAL_SERVER_VERSION}`, `temporal-${s} image`);
      assert.equal(svc?.environment?.TEMPORAL_SERVICES, s, `temporal-${s} starts only ${s}`);
      assert.equal(svc?.environment?.DB, 'postgres12');
      assert.ok(Number(/\d+/.exec(String(svc?.environment?.NUM_HISTORY_SHARDS))?.[0]) >= CLUSTER_HISTORY_SHARDS, 'history shards');
    }
    for (const job of ['temporal-schema', 'temporal-namespace']) assert.equal(services[job]?.image, `temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    const schema = services['temporal-schema']?.command?.join(' ') ?? '';
    for (const name of Object.values(SCHEMA_NAMES)) assert.ok(schema.includes(`--schema-name ${name}`), `schema job applies ${name}`);
    const namespace = services['temporal-namespace']?.command?.join(' ') ?? '';
    assert.match(namespace, /temporal operator namespace create/);
    for (const a of Object.keys(SEARCH_ATTRIBUTES)) assert.ok(namespace.includes(a), `namespace job creates ${a}`);
    assert.equal(read('deploy/temporal-dynamicconfig.yaml'), temporalClusterDynamicConfig(), 'the dynamic config is the cluster stack\'s');
  });

  it('health-checks what others wait for, and waits only on checkable conditions', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
        assert.ok(services[dep], `${name} depends on a defined service ${dep}`);
        if (condition === 'service_healthy') assert.ok(services[dep]?.healthcheck, `${dep} has a healthcheck (${name} waits for it)`);
      }
    }
    for (const name of ['postgresql', 'temporal-frontend', 'mongo', 'api', 'api-2']) assert.ok(services[name]?.healthcheck, `${name} healthcheck`);
  });

  it('publishes the README ports on loopback only', () => {
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    for (const port of ['7233', '8233', '27017', '8402']) assert.ok(published.some((p) => p.startsWith('127.0.0.1:') && p.split(':')[1] === port), `port ${port}`);
    for (const p of published) assert.ok(p.startsWith('127.0.0.1:'), `${p} binds loopback`);
  });

  it('uses only configuration names the code reads, and the right entry points', () => {
    for (const name of ['api', 'api-2', 'worker', 'worker-2']) {
      const env = services[name]?.environment ?? {};
      for (const key of Object.keys(env)) assert.ok(configNames.has(key), `${name}: ${key} is a setting in src/config/env.ts`);
    }
    for (const name of ['api', 'api-2']) assert.ok(!('SETTLER_PRIVATE_KEY' in (services[name]?.environment ?? {})), `${name} never gets the settler key`);
    assert.notEqual(services.worker?.environment?.SETTLER_PRIVATE_KEY, services['worker-2']?.environment?.SETTLER_PRIVATE_KEY, 'each worker has its own settler key');
    assert.equal(services.api?.environment?.DEV_TOOLS, 'false');
    for (const name of ['api', 'api-2']) assert.deepEqual(services[name]?.command, ['node', ...PROCESS_V8_FLAGS, PROCESS_ENTRIES.api], `${name} runs the API's entry with the stack's V8 flags`);
    for (const name of ['worker', 'worker-2']) assert.deepEqual(services[name]?.command, ['node', ...PROCESS_V8_FLAGS, PROCESS_ENTRIES.worker], `${name} runs the worker's entry with the stack's V8 flags`);
  });

  it('runs Node on the LTS in .node-version: the Dockerfile, every service that runs node, engines and CI', () => {
    const pinned = read('.node-version').trim();
    const version = (v: string) => v.split('.').map(Number);
    const atLeast = (a: number[], b: number[]) => a[0]! !== b[0]! ? a[0]! > b[0]! : (a[1] ?? 0) >= (b[1] ?? 0);
    assert.match(pinned, /^\d+\.\d+\.\d+$/, '.node-version is one exact version');
    const major = version(pinned)[0];
    assert.equal(Number(/^FROM node:(\d+)-bookworm-slim$/m.exec(read('Dockerfile'))?.[1]), major, "the Dockerfile's base image");
    for (const [name, svc] of Object.entries(services)) {
      if (svc.image?.startsWith('node:')) assert.equal(Number(/^node:(\d+)/.exec(svc.image)?.[1]), major, `${name} image`);
      const runsNode = svc.command?.[0] === 'node' || (Array.isArray(svc.healthcheck?.test) && svc.healthcheck.test[1] === 'node');
      if (runsNode) assert.ok(svc.build === '.' || svc.image?.startsWith('node:'), `${name} runs node from the Dockerfile's image`);
    }
    const root = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
    const floor = /^>=(\d+\.\d+)$/.exec(root.engines.node)?.[1];
    assert.ok(floor && version(floor)[0] === major && atLeast(version(pinned), version(floor)), `engines ${root.engines.node} is the LTS line ${major} and admits ${pinned}`);
    assert.equal(version(root.devDependencies['@types/node']!)[0], major, "the service's Node types are the LTS's");
    for (const pkg of ['wire', 'agent-client', 'x402-credit']) {
      const range = (JSON.parse(read(`packages/${pkg}/package.json`)) as { engines: { node: string } }).engines.node;
      const pkgFloor = /^>=(\d+\.\d+)$/.exec(range)?.[1];
      assert.ok(pkgFloor && atLeast(version(floor), version(pkgFloor)), `packages/${pkg} engines ${range} admits the service's Node`);
    }
    const ci = read('.ci/run');
    assert.ok(ci.indexOf('source scripts/ensure-node.sh') >= 0 && ci.indexOf('source scripts/ensure-node.sh') < ci.indexOf('npm install'), 'CI puts the LTS on PATH before npm install');
  });

  it('.env.example names only real settings', () => {
    const names = [...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1] as string);
    assert.ok(names.length > 20);
    for (const n of names) assert.ok(configNames.has(n), `.env.example: ${n}`);
  });
});
