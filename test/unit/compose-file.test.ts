import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { EnvSchema } from '../../src/config/env.js';

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

  it('has Temporal on PostgreSQL, the UI, MongoDB, the API and the worker', () => {
    for (const name of ['postgresql', 'temporal', 'temporal-ui', 'mongo', 'api', 'worker']) assert.ok(services[name], `service ${name}`);
    assert.match(services.temporal?.environment?.DB as string, /postgres/);
    assert.match(services.mongo?.image ?? '', /^mongo:/);
  });

  it('health-checks what others wait for, and waits only on checkable conditions', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
        assert.ok(services[dep], `${name} depends on a defined service ${dep}`);
        if (condition === 'service_healthy') assert.ok(services[dep]?.healthcheck, `${dep} has a healthcheck (${name} waits for it)`);
      }
    }
    for (const name of ['postgresql', 'temporal', 'mongo', 'api']) assert.ok(services[name]?.healthcheck, `${name} healthcheck`);
  });

  it('publishes the README ports on loopback only', () => {
    const published = Object.values(services).flatMap((s) => s.ports ?? []);
    for (const port of ['7233', '8233', '27017', '8402']) assert.ok(published.some((p) => p.startsWith('127.0.0.1:') && p.split(':')[1] === port), `port ${port}`);
    for (const p of published) assert.ok(p.startsWith('127.0.0.1:'), `${p} binds loopback`);
  });

  it('uses only configuration names the code reads, and the right entry points', () => {
    for (const name of ['api', 'worker']) {
      const env = services[name]?.environment ?? {};
      for (const key of Object.keys(env)) assert.ok(configNames.has(key), `${name}: ${key} is a setting in src/config/env.ts`);
    }
    assert.ok(!('SETTLER_PRIVATE_KEY' in (services.api?.environment ?? {})), 'the API never gets the settler key');
    assert.equal(services.api?.environment?.DEV_TOOLS, 'false');
    assert.deepEqual(services.api?.command?.slice(-1), ['dist/src/main/api.js']);
    assert.deepEqual(services.worker?.command?.slice(-1), ['dist/workers/main.js']);
    assert.ok(existsSync(`${root}dist/src/main/api.js`) && existsSync(`${root}dist/workers/main.js`));
  });

  it('.env.example names only real settings', () => {
    const names = [...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1] as string);
    assert.ok(names.length > 20);
    for (const n of names) assert.ok(configNames.has(n), `.env.example: ${n}`);
  });
});
