// Builds every artefact: the Node bundles with esbuild (CLI, agent, Electron main/preload, launcher)
// and the renderer with Vite. `node scripts/build.mjs --node` skips the renderer.
import { build } from 'esbuild';
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const onlyNode = process.argv.includes('--node');
const started = Date.now();

// Optional native backends are resolved on the host at run time, never bundled.
// ssh2's optional native speed-ups (cpu-features, *.node) are left out: it falls back to pure JS.
const external = ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'electron', 'cpu-features', '*.node'];
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  external,
  // tfjs packages mark their registration imports side-effect free; keep them (backends, gradients).
  ignoreAnnotations: true,
  // Prefer ES modules: tfjs-core's gradient registrations exist only as ESM, and mixing them with its
  // CommonJS build would bundle tfjs-core twice (about 0.7 MB more per agent upload).
  mainFields: ['module', 'main'],
  // ES modules bundled as CommonJS (h5wasm's emscripten loader) read import.meta.url: the bundle's own file.
  banner: { js: 'const __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { 'import.meta.url': '__importMetaUrl' },
  absWorkingDir: root,
};

await Promise.all([
  build({ ...common, entryPoints: ['engine/node/cli.ts'], outfile: 'dist/cli.cjs' }),
  build({ ...common, entryPoints: ['agents/main.ts'], outfile: 'dist/agent/shoal-agent.cjs' }),
  build({ ...common, entryPoints: ['agents/data/prefetchWorker.ts'], outfile: 'dist/agent/prefetch-worker.cjs' }),
  build({ ...common, entryPoints: ['electron/main.ts'], outfile: 'dist/electron/main.cjs' }),
  build({ ...common, entryPoints: ['electron/preload.ts'], outfile: 'dist/electron/preload.cjs' }),
  build({ ...common, entryPoints: ['electron/launch.ts'], outfile: 'dist/launch.cjs' }),
]);

// The wasm backend's binaries travel beside the agent bundle (one folder to upload to a host).
const wasmDir = join(root, 'node_modules/@tensorflow/tfjs-backend-wasm/dist');
mkdirSync(join(root, 'dist/agent'), { recursive: true });
for (const file of readdirSync(wasmDir).filter((f) => f.endsWith('.wasm'))) {
  cpSync(join(wasmDir, file), join(root, 'dist/agent', file));
}

if (!onlyNode) {
  const { build: viteBuild } = await import('vite');
  await viteBuild({ configFile: join(root, 'renderer/vite.config.ts'), logLevel: 'warn' });
}
console.log(`shoal: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
