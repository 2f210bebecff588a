// @ts-check
// The one lint setup (`npm run lint`): ESLint for correctness, Prettier for layout (eslint-config-prettier last turns
// off every ESLint rule Prettier owns). TypeScript files get typescript-eslint's type-aware rules through the
// project service (each file is checked with its nearest tsconfig: src/core, src/tag and src/prebid have their own,
// test/ has test/tsconfig.json); JavaScript files (demo, test scripts, root configs) get ESLint's recommended rules.
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

// Node's globals for the .mjs scripts (the `globals` package's list would do; these are the ones the scripts use).
const nodeGlobals = Object.fromEntries(
  (
    'AbortController AbortSignal Buffer TextDecoder TextEncoder URL URLSearchParams Headers Request Response fetch ' +
    'console process performance queueMicrotask structuredClone setTimeout clearTimeout setInterval clearInterval ' +
    'setImmediate clearImmediate globalThis atob btoa crypto'
  )
    .split(' ')
    .map((name) => [name, 'readonly']),
);

const unused = {
  argsIgnorePattern: '^_',
  varsIgnorePattern: '^_',
  caughtErrorsIgnorePattern: '^_',
  destructuredArrayIgnorePattern: '^_',
  ignoreRestSiblings: true,
};

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'test-results/', '.test-results/', 'playwright-report/', 'docs/api/'] },
  js.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: nodeGlobals },
  },
  {
    // Browser scripts bundled for the demo and e2e pages, and the bench's code evaluated inside the page.
    files: ['demo/modules/cmp-entry.mjs', 'test/e2e/support/gpp-cmp-entry.mjs', 'test/bench/slow-phone.bench.mjs'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly' } },
  },
  {
    rules: {
      // A leading `_` names what is left out on purpose (`const { pid: _pid, ...rest } = call`).
      'no-unused-vars': ['error', unused],
      // `let timer; const done = () => clearTimeout(timer); … timer = setTimeout(done)`: a `const` there would be
      // read before it is set.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.strictTypeChecked, tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Numbers and booleans read naturally in messages (`${n} eids`); objects, arrays, any and nullish do not.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // Off: `return bad(issues, …)` records an issue and drops the entry in one step (core/eid.ts says so), and
      // the rule's autofix would rewrite the tag's core, whose size budget is counted in bytes.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unused-vars': ['error', unused],
      // `() => {}` is how a promise's failure or a callback is ignored on purpose; empty named functions are not.
      // Rejecting with what was caught, or with an AbortSignal's reason, passes the original error on.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/no-empty-function': ['error', { allow: ['arrowFunctions'] }],
      // `'HTTP ' + status` as in templates: numbers join strings; objects and any do not.
      '@typescript-eslint/restrict-plus-operands': ['error', { allowNumberAndString: true }],
      // Off, for the reason of no-unnecessary-condition below: `String(x)` and `+x` on values from pages and the
      // network coerce what a cast only claims (`+(options.networkid as number)`).
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // Off: `async` without `await` is how a function that checks its arguments synchronously still reports
      // through its promise (a throw becomes a rejection), which callers of a promise API rely on.
      '@typescript-eslint/require-await': 'off',
      // Off: the code checks at run time what the types already promise, on purpose. Public functions are called
      // from plain JavaScript and pages, and every input from the network is hostile, so `if (!opts)` on a
      // non-optional parameter or `err?.message` on a caught value are defences, not dead code.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Off: the compiler runs without noUncheckedIndexedAccess, so `!` marks index and Map reads the code has
      // already bounded or checked (`map.get(k)!` after `map.has(k)`); enabling that compiler option, not this
      // rule, is the way to make those reads checked.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `||` is kept where '' and 0 mean "not given" (query parameters, options from pages); for objects and
      // optional values `??` is required.
      '@typescript-eslint/prefer-nullish-coalescing': [
        'error',
        { ignorePrimitives: { string: true, number: true, boolean: true } },
      ],
      // Comma-operator returns and golfed one-liners (house style: clarity over cleverness).
      'no-sequences': ['error', { allowInParentheses: false }],
    },
  },
  {
    files: ['src/adserver/**/*.ts'],
    rules: {
      // Off in the ad server: every ad call runs its index loops (providers, report, forwarding), kept as the
      // benchmarks measured them.
      '@typescript-eslint/prefer-for-of': 'off',
    },
  },
  {
    files: ['src/tag/**/*.ts'],
    rules: {
      // Off in the tag, which runs on other people's pages: it reads page-owned globals and foreign answers (CMP
      // callbacks, provider scripts) where `||` and `&&` also turn away the falsy junk a page may hold
      // (`window.sas = 0`), and each rewrite moves a size budget counted in bytes.
      '@typescript-eslint/prefer-nullish-coalescing': 'off',
      '@typescript-eslint/prefer-optional-chain': 'off',
    },
  },
  {
    // The doc-comment test's fixture: exported empty functions, with and without a comment.
    files: ['test/docs/fixtures/**'],
    rules: { '@typescript-eslint/no-empty-function': 'off' },
  },
  {
    // WebKitWebDriver speaks classic WebDriver: webdriverio's deprecated frame and script calls are the ones it has.
    files: ['test/e2e/support/engines/webkit.ts'],
    rules: { '@typescript-eslint/no-deprecated': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Off in tests: they read untyped JSON answers and feed deliberately malformed input (`as any`) to prove the
      // code rejects it; the assertions check the shapes these rules would have the types check.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Off in tests: `expect(client.method)` and spies pass methods unbound without calling them.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-enum-assignment': 'off',
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // Off in tests: they build URLs and messages from fixture values of loose types (`String(v)`, `${p.in}`).
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      // Off in tests: async request handlers and queued commands are test doubles; a rejection fails the test.
      '@typescript-eslint/no-misused-promises': 'off',
      // Off in tests: they match raw control characters on purpose (terminal output must not carry them), run
      // the guides' code samples with `new Function`, and delete the globals a test page set.
      'no-control-regex': 'off',
      '@typescript-eslint/no-implied-eval': 'off',
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Off in tests: they spread ASCII alphabets into fast-check's constantFrom.
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  prettier,
  {
    // Prettier wraps code at 120 but not comments, strings or regular expressions. max-len holds comments (and any
    // code Prettier could not break) to the same width; a string, template or regex longer than that stays whole,
    // so that a message can be searched for as it prints. (A core rule deprecated in favour of @stylistic/max-len,
    // available until ESLint 11.)
    rules: {
      'max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true },
      ],
    },
  },
);
