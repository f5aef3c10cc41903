/**
 * The house rule: dependencies point down the layers of docs/design.md ("The house"), never up or
 * sideways into a layer's neighbours unless this table says so. `npm test` runs it
 * (`npm run check:layers`); a new import that breaks it fails the build with the rule's name.
 *
 * Each layer names the folders it holds and the layers (or single folders) it may import. A folder
 * may always import itself. Everything not listed here as allowed is a violation: there are no
 * blanket exceptions.
 */
const layers = [
  // Entry points and their composition roots.
  { name: 'main', paths: ['src/main'], may: ['adapters', 'auth', 'http', 'services', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'worker', paths: ['workers'], may: ['activities', 'workflows', 'services', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'tooling', paths: ['tools/cli', 'tools/stack'], may: ['tools/stack', 'auth', 'services', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'bench', paths: ['bench'], may: ['tools/harness', 'tools/stack', 'services', 'temporal', 'infra', 'domain', 'wire', 'clients'] },
  // The harness tests and the bench share: composes the API's dependencies as src/main does, and
  // provisions merchants with the CLI's own merchant create.
  { name: 'harness', paths: ['tools/harness'], may: ['tools/cli', 'tools/stack', 'adapters', 'auth', 'services', 'temporal', 'infra', 'domain', 'wire', 'clients'] },
  { name: 'examples', paths: ['examples'], may: ['clients', 'wire'] },
  // Adapters: the edges that speak HTTP (REST, MCP, pages, OAuth) or Temporal (activities).
  { name: 'adapters', paths: ['src/api', 'src/mcp', 'src/borrower-web', 'src/merchant-web'], may: ['src/auth', 'http', 'services', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'auth', paths: ['src/auth'], may: ['http', 'services', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'http', paths: ['src/http'], may: ['infra', 'domain', 'wire'] },
  { name: 'activities', paths: ['activities'], may: ['services', 'temporal', 'infra', 'domain', 'wire'] },
  // Services, each with narrow dependencies of its own; the order among them is the arrow's direction.
  { name: 'agents', paths: ['src/agents'], may: ['src/payments', 'src/settlement', 'src/webhooks', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'payments', paths: ['src/payments'], may: ['src/settlement', 'src/webhooks', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'settlement', paths: ['src/settlement'], may: ['src/webhooks', 'temporal', 'infra', 'domain', 'wire'] },
  { name: 'webhooks', paths: ['src/webhooks'], may: ['temporal', 'infra', 'domain', 'wire'] },
  // Workflows are deterministic: Temporal definitions, the pure domain, and activity *types* only.
  { name: 'workflows', paths: ['workflows'], may: ['temporal', 'domain', 'wire'], typesOnly: ['activities'] },
  // Temporal's shared definitions and the starting/signalling of workflows.
  { name: 'temporal', paths: ['src/temporal'], may: ['src/observability', 'src/config', 'domain', 'wire'] },
  // Infrastructure.
  { name: 'store', paths: ['src/store'], may: ['src/observability', 'src/config', 'domain', 'wire'] },
  { name: 'chain', paths: ['src/chain'], may: ['src/observability', 'src/config', 'domain', 'wire'] },
  { name: 'net', paths: ['src/net'], may: ['domain', 'wire'] },
  { name: 'observability', paths: ['src/observability'], may: ['domain', 'wire'] },
  { name: 'config', paths: ['src/config'], may: ['domain', 'wire'] },
  // The pure domain, then the wire protocol every side shares (a published package).
  { name: 'domain', paths: ['src/domain'], may: ['wire'] },
  // The published clients: the agent's and the merchant's stand apart, so a merchant installs no agent.
  { name: 'agent-client', paths: ['packages/agent-client'], may: ['wire'] },
  { name: 'merchant-client', paths: ['packages/x402-credit'], may: ['wire'] },
  { name: 'wire', paths: ['packages/wire'], may: [] },
];

const groups = {
  services: ['src/agents', 'src/payments', 'src/settlement', 'src/webhooks'],
  infra: ['src/store', 'src/chain', 'src/net', 'src/observability', 'src/config'],
  clients: ['packages/agent-client', 'packages/x402-credit'],
};

const byName = Object.fromEntries(layers.map((l) => [l.name, l.paths]));
const folders = (names) => names.flatMap((n) => groups[n] ?? byName[n] ?? [n]);
const anyOf = (paths) => `^(${paths.map((p) => p.replace(/[.]/g, '\\.')).join('|')})/`;

/** The allowed imports of one layer: its own folder, the layers it may use, npm packages and node's own. */
function allowedFor(layer) {
  return layer.paths.flatMap((own) => {
    const rules = [{ from: { path: `^${own}/` }, to: { path: anyOf([own, ...folders(layer.may)]) } }];
    if (layer.typesOnly) rules.push({ from: { path: `^${own}/` }, to: { path: anyOf(folders(layer.typesOnly)), dependencyTypes: ['type-only'] } });
    return rules;
  });
}

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Files that import each other in a loop.', from: {}, to: { circular: true } },
    {
      name: 'no-test-code-outside-tests',
      severity: 'error',
      comment: 'Nothing but tests imports test/.',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'only-the-store-talks-to-mongodb',
      severity: 'error',
      comment:
        'src/store is the only code that touches collections (docs/design.md): nothing else imports the mongodb driver, not even its types or errors; ' +
        'other code calls named store functions. Tests may reach the store directly to set up and check what they test.',
      from: { pathNot: ['^src/store/', '^test/'] },
      to: { path: '(^|/)node_modules/mongodb/' },
    },
    {
      name: 'clients-declare-their-dependencies',
      severity: 'error',
      comment: 'A package imports only what its own package.json declares, so it installs on its own.',
      from: { path: '^packages/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'unknown', 'undetermined'] },
    },
  ],
  allowed: [
    // Node's own modules and npm packages, for every layer.
    { from: {}, to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled'] } },
    // Tests may import everything they test.
    { from: { path: '^test/' }, to: {} },
    ...layers.flatMap(allowedFor),
  ],
  allowedSeverity: 'error',
  options: {
    doNotFollow: { path: ['node_modules', '^dist/', '^packages/[^/]+/dist/', '^packages/[^/]+/dist-test/'] },
    exclude: { path: ['^dist/', '^data/', '^packages/[^/]+/dist/', '^packages/[^/]+/dist-test/', '\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'], extensions: ['.ts', '.js'] },
    combinedDependencies: false,
  },
};
