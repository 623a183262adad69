// ESLint: typescript-eslint's recommended rules with type information (floating and misused promises among them).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'results/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `_name` marks a value deliberately left unused (a destructured-away key, an argument an interface requires).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  // Issue 26: a function reads top to bottom; one over 120 lines needs its reason written where it is
  // (`// eslint-disable-next-line max-lines-per-function -- why`). Tests are exempt: a test is a scenario.
  { files: ['src/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false, IIFEs: true }] } },
  // Tests assert on the exact terminal escape sequences (ESC [1G, SGR colours) the progress line writes.
  { files: ['test/**/*.ts'], rules: { 'no-control-regex': 'off' } },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], extends: [tseslint.configs.disableTypeChecked] },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
);
