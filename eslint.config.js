import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'renderer/dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**', '.shoal-tmp/**', 'bench/results/**', '.proto/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['**/*.cjs', 'bin/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' } },
  },
);
