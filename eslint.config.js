// Lint: recommended JS and type-aware TypeScript rules; formatting is prettier's job.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'data/', 'out/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The dashboard's scripts are classic browser scripts sharing the page's global scope, not modules:
    // each says what it uses of the ones before it (/* global */) and what it gives them (/* exported */).
    files: ['src/api/dashboard/*.js'],
    languageOptions: { sourceType: 'script' },
  },
  prettier,
);
