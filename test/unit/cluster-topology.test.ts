import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { ferretdbArgs } from '../../tools/stack/args.js';
import { searchAttributeNames } from '../../tools/stack/cluster/namespace.js';
import { FERRETDB_SESSION, postgresUrl } from '../../tools/stack/cluster/postgres.js';
import { CLUSTER_HISTORY_SHARDS, TEMPORAL_SERVICES, temporalClusterConfig, temporalClusterDynamicConfig, type ServicePorts, type TemporalService } from '../../tools/stack/cluster/temporal-config.js';
import { parseTopologyFlag } from '../../tools/stack/cluster/topology-flag.js';

const ports: Record<TemporalService, ServicePorts> = {
  frontend: { grpc: 7233, membership: 6933, http: 7243 },
  history: { grpc: 7234, membership: 6934 },
  matching: { grpc: 7235, membership: 6935 },
  worker: { grpc: 7239, membership: 6939 },
};

describe('cluster topology (pure parts)', () => {
  const config = parse(temporalClusterConfig({ postgresPort: 55432, shards: CLUSTER_HISTORY_SHARDS, ports, dynamicConfigFile: '/d/dynamicconfig.yaml' })) as Record<string, any>;

  it('configures four services on 127.0.0.1, at least 4 history shards, and PostgreSQL for the default store and visibility', () => {
    assert.ok(CLUSTER_HISTORY_SHARDS >= 4);
    assert.equal(config.persistence.numHistoryShards, CLUSTER_HISTORY_SHARDS);
    assert.deepEqual(Object.keys(config.services).sort(), [...TEMPORAL_SERVICES].sort());
    for (const s of TEMPORAL_SERVICES) {
      assert.equal(config.services[s].rpc.bindOnIP, '127.0.0.1', `${s} binds loopback`);
      assert.equal(config.services[s].rpc.grpcPort, ports[s].grpc);
    }
    const stores = config.persistence.datastores;
    assert.equal(stores[config.persistence.defaultStore].sql.databaseName, 'temporal');
    assert.equal(stores[config.persistence.visibilityStore].sql.databaseName, 'temporal_visibility');
    for (const store of Object.values(stores) as { sql: Record<string, unknown> }[]) {
      assert.equal(store.sql.pluginName, 'postgres12');
      assert.equal(store.sql.connectAddr, '127.0.0.1:55432');
    }
    assert.equal(config.publicClient.hostPort, '127.0.0.1:7233');
    assert.equal(config.clusterMetadata.clusterInformation.active.rpcAddress, '127.0.0.1:7233');
  });

  it('keeps the SQL password out of the file: a template the server fills from SQL_PASSWORD', () => {
    const text = temporalClusterConfig({ postgresPort: 1, shards: 4, ports, dynamicConfigFile: '/d' });
    assert.match(text.split('\n')[0]!, /# enable-template/);
    for (const store of Object.values(config.persistence.datastores) as { sql: { password: string } }[]) assert.equal(store.sql.password, '{{ env "SQL_PASSWORD" }}');
  });

  it('turns eager activity dispatch off, as on the dev server', () => {
    assert.deepEqual(parse(temporalClusterDynamicConfig()), { 'system.enableActivityEagerExecution': [{ value: false }] });
  });

  it('parses --topology and refuses anything else', () => {
    assert.deepEqual(parseTopologyFlag([]), {});
    assert.deepEqual(parseTopologyFlag(['--topology', 'cluster']), { topology: 'cluster' });
    assert.deepEqual(parseTopologyFlag(['--topology=dev']), { topology: 'dev' });
    assert.ok(parseTopologyFlag(['--topology', 'mesh']).error);
    assert.ok(parseTopologyFlag(['--topology']).error);
    assert.ok(parseTopologyFlag(['--topology', 'cluster', '--x']).error);
    assert.ok(parseTopologyFlag(['cluster']).error);
  });

  it('puts FerretDB on PostgreSQL by flag, the URL (with its password) only in the environment', () => {
    const args = ferretdbArgs({ port: 1, dataDir: '/d', backend: 'postgresql' });
    assert.deepEqual(args.slice(-2), ['-backend', 'postgresql']);
    assert.ok(!args.some((a) => a.includes('postgres://')));
    assert.ok(!ferretdbArgs({ port: 1, dataDir: '/d' }).includes('-backend'));
    assert.equal(postgresUrl(5432, 'p@ss/w', 'ferretdb'), 'postgres://temporal:p%40ss%2Fw@127.0.0.1:5432/ferretdb');
    assert.equal(postgresUrl(5432, 'p', 'ferretdb', FERRETDB_SESSION), 'postgres://temporal:p@127.0.0.1:5432/ferretdb?plan_cache_mode=force_custom_plan', 'FerretDB plans each query with its values');
  });

  it('reads custom search attribute names from the CLI\'s JSON', () => {
    assert.deepEqual(searchAttributeNames({ customAttributes: { MerchantId: 'INDEXED_VALUE_TYPE_KEYWORD' }, systemAttributes: { WorkflowId: 'x' } }), ['MerchantId']);
    assert.deepEqual(searchAttributeNames(null), []);
  });
});
