/**
 * Import rules checked by `npm run check` (dependency-cruiser). Issue 10 item 8: the layout stays
 * the one its READMEs describe. Add further rules to `forbidden`.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
    exclude: { path: '^(node_modules|\\.data|web)/' },
  },
};
