import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// Unit tests: node by default; DOM tests opt in with `// @vitest-environment happy-dom`.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
