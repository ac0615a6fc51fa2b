import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { globalsUsed, importCycles, importEdges, importsOf, sourceFiles, type ImportEdge } from '../support/importGraph.js';

/**
 * DESIGN.md's import arrows, checked on every .ts/.tsx file of the repository (no allow-list):
 *   renderer → engine (pure);  electron → engine/node → engine/wire → engine;  agents → engine/wire → engine.
 * Imports flow downward only (a layer may skip one below it); nothing imports agents/, electron/ or
 * renderer/ from outside; tests, benchmarks, scripts and tool configs may import anything. No import
 * cycles, type-only imports included. Pure engine code (engine/ less engine/node and engine/wire) uses
 * no Node module or global and no platform package, so the renderer and workers can run it.
 */
const root = join(__dirname, '..', '..');

type Layer = 'engine' | 'engine/wire' | 'engine/node' | 'agents' | 'electron' | 'renderer' | 'tools' | 'data';

export function layerOf(path: string): Layer {
  // Data beside the code (examples/clusters/*.json bundled by the renderer, package.json): no layer.
  if (!/\.(ts|tsx|js|mjs|cjs)$/.test(path) && !/^(engine|agents|electron|renderer)\//.test(path)) return 'data';
  if (path.startsWith('engine/wire/')) return 'engine/wire';
  if (path.startsWith('engine/node/')) return 'engine/node';
  if (path.startsWith('engine/')) return 'engine';
  if (path.startsWith('agents/')) return 'agents';
  if (path.startsWith('electron/')) return 'electron';
  if (path.startsWith('renderer/src/')) return 'renderer';
  return 'tools'; // test/, bench/, scripts/, *.config.ts, renderer/vite.config.ts
}

const MAY_IMPORT: Record<Layer, Layer[]> = {
  engine: ['engine', 'data'],
  'engine/wire': ['engine/wire', 'engine', 'data'],
  'engine/node': ['engine/node', 'engine/wire', 'engine', 'data'],
  agents: ['agents', 'engine/wire', 'engine', 'data'],
  electron: ['electron', 'engine/node', 'engine/wire', 'engine', 'data'],
  renderer: ['renderer', 'engine', 'data'],
  tools: ['engine', 'engine/wire', 'engine/node', 'agents', 'electron', 'renderer', 'tools', 'data'],
  data: [],
};

const NODE_BUILTIN = new Set(builtinModules);
const isNodeModule = (spec: string) => spec.startsWith('node:') || NODE_BUILTIN.has(spec.split('/')[0]);
/** Packages that tie code to a platform: Node, Electron, React, SSH, sockets, tfjs. */
const PLATFORM_PACKAGE = /^(electron|react|react-dom|ssh2|ws)(\/|$)|^@tensorflow\//;
/** What the browser cannot load: Node modules and the Node-only packages. */
const NODE_ONLY_PACKAGE = /^(electron|ssh2|ws)(\/|$)|^@tensorflow\/tfjs-node/;
const NODE_GLOBALS = new Set(['process', 'Buffer', 'require', '__dirname', '__filename', 'global', 'setImmediate', 'NodeJS']);

const where = (e: { from: string; line: number }) => `${e.from}:${e.line}`;

/** One line per import against the arrows or a platform rule. */
export function layeringViolations(edges: ImportEdge[]): string[] {
  const found: string[] = [];
  for (const e of edges) {
    const from = layerOf(e.from);
    if (e.specifier.startsWith('.')) {
      const target = e.to ?? join(e.from, '..', e.specifier).split('\\').join('/');
      const to = layerOf(target);
      if (!MAY_IMPORT[from].includes(to)) found.push(`${where(e)}: ${from} may not import ${to} ("${e.specifier}" is ${target}); ${from} imports only ${MAY_IMPORT[from].join(', ')}`);
    } else if (from === 'engine' && (isNodeModule(e.specifier) || PLATFORM_PACKAGE.test(e.specifier))) {
      found.push(`${where(e)}: pure engine code imports "${e.specifier}" (no Node module, electron, react, ssh2, ws or tfjs in engine/; Node code goes in engine/wire or engine/node)`);
    } else if (from === 'renderer' && (isNodeModule(e.specifier) || NODE_ONLY_PACKAGE.test(e.specifier))) {
      found.push(`${where(e)}: the renderer imports "${e.specifier}", which the browser cannot load (the renderer reaches Node only through the StudioApi)`);
    }
  }
  return found;
}

const files = sourceFiles(root, ['engine', 'agents', 'electron', 'renderer', 'test', 'bench', 'scripts']).concat(
  sourceFiles(root, ['.']).filter((f) => !f.includes('/')), // *.config.ts at the root
);
const edges = importEdges(root, files);

describe('layering (DESIGN.md: imports flow downward only)', () => {
  it('finds the sources of every layer', () => {
    for (const layer of ['engine', 'engine/wire', 'engine/node', 'agents', 'electron', 'renderer', 'tools'] as const) {
      expect(files.filter((f) => layerOf(f) === layer).length, layer).toBeGreaterThan(2);
    }
  });

  it('every import follows the arrows; pure engine and renderer import no Node module', () => {
    expect(layeringViolations(edges)).toEqual([]);
  });

  it('there are no import cycles (type-only imports included)', () => {
    const cycles = importCycles(edges).map((c) => `cycle of ${c.files.length}: ${c.edges.map((e) => `${where(e)} imports ${e.to}`).join('; ')}`);
    expect(cycles).toEqual([]);
  });

  it('pure engine code uses no Node global', () => {
    const uses = files
      .filter((f) => layerOf(f) === 'engine')
      .flatMap((f) => globalsUsed(readFileSync(join(root, f), 'utf8'), NODE_GLOBALS, f).map((u) => `${f}:${u.line}: pure engine code uses the Node global ${u.name}`));
    expect(uses).toEqual([]);
  });
});

describe('layering check (self-test on samples)', () => {
  it('reads every kind of import with its line', () => {
    const sample = [
      `import { a } from './a.js';`,
      `import type { B } from '../b.js';`,
      `export { c } from './c.js';`,
      `export type * from './d.js';`,
      `import './side.js';`,
      `const e = await import('./e.js');`,
      `type F = import('./f.js').F;`,
      `import g = require('g');`,
      `const h = require('h');`,
      `// import { no } from './comment.js';`,
      `const s = "import { no } from './string.js'";`,
    ].join('\n');
    expect(importsOf(sample)).toEqual([
      { specifier: './a.js', line: 1 },
      { specifier: '../b.js', line: 2 },
      { specifier: './c.js', line: 3 },
      { specifier: './d.js', line: 4 },
      { specifier: './side.js', line: 5 },
      { specifier: './e.js', line: 6 },
      { specifier: './f.js', line: 7 },
      { specifier: 'g', line: 8 },
      { specifier: 'h', line: 9 },
    ]);
  });

  it('flags imports against the arrows and platform imports in pure code, with file:line', () => {
    const edge = (from: string, specifier: string, to: string | null, line = 3): ImportEdge => ({ from, line, specifier, to });
    expect(
      layeringViolations([
        edge('engine/node/api.ts', '../../agents/x.js', 'agents/x.ts'),
        edge('renderer/src/App.tsx', '../../engine/node/api.js', 'engine/node/api.ts'),
        edge('engine/wire/frame.ts', '../node/cli.js', 'engine/node/cli.ts'),
        edge('engine/plan/plan.ts', 'node:fs', null),
        edge('engine/plan/plan.ts', 'fs/promises', null),
        edge('engine/plan/plan.ts', '@tensorflow/tfjs-core', null),
        edge('renderer/src/App.tsx', 'ssh2', null),
      ]).map((v) => v.split(': ')[0]),
    ).toEqual(['engine/node/api.ts:3', 'renderer/src/App.tsx:3', 'engine/wire/frame.ts:3', 'engine/plan/plan.ts:3', 'engine/plan/plan.ts:3', 'engine/plan/plan.ts:3', 'renderer/src/App.tsx:3']);
    expect(
      layeringViolations([
        edge('agents/main.ts', '../engine/wire/frame.js', 'engine/wire/frame.ts'),
        edge('electron/main.ts', '../engine/node/api.js', 'engine/node/api.ts'),
        edge('renderer/src/App.tsx', '../../engine/plan/plan.js', 'engine/plan/plan.ts'),
        edge('renderer/src/App.tsx', 'react', null),
        edge('test/unit/x.test.ts', '../../agents/main.js', 'agents/main.ts'),
        edge('engine/plan/plan.ts', 'zod', null),
        edge('renderer/src/store/clusters.ts', '../../../examples/clusters/lab.json', 'examples/clusters/lab.json'),
      ]),
    ).toEqual([]);
  });

  it('finds cycles, type-only ones too, and Node globals in code but not in names, comments or strings', () => {
    const e = (from: string, to: string): ImportEdge => ({ from, to, line: 1, specifier: `./${to}` });
    expect(importCycles([e('a.ts', 'b.ts'), e('b.ts', 'c.ts'), e('c.ts', 'a.ts'), e('c.ts', 'd.ts')]).map((c) => c.files)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(importCycles([e('a.ts', 'b.ts'), e('b.ts', 'c.ts')])).toEqual([]);
    const sample = [
      `const env = process.env.X; // process`,
      `const t: NodeJS.Timeout | undefined = undefined;`,
      `const b = Buffer.from('process');`,
      `const o = { process: 1, x: o2.process };`,
      `function f(require: string, { global }: { global: number }) { return 1; }`,
    ].join('\n');
    expect(globalsUsed(sample, NODE_GLOBALS).map((u) => `${u.line}:${u.name}`)).toEqual(['1:process', '2:NodeJS', '3:Buffer']);
  });
});
