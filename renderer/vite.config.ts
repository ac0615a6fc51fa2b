import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The studio renderer. Built to renderer/dist with relative URLs so the same files load from the
 * browser shell (http://127.0.0.1) and from Electron (file://). Nothing is inlined as a data: URL and
 * no inline script is emitted, so the strict CSP (script-src 'self') holds.
 */
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2000,
  },
  server: { fs: { allow: [fileURLToPath(new URL('..', import.meta.url))] } },
});
