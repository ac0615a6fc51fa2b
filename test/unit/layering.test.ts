import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * DESIGN.md's layering rule: pure engine code (everything in engine/ except engine/node/ and engine/wire/) imports no
 * platform module — no node:*, Electron, React, ssh2 or tfjs — so that the renderer and workers can run it.
 */
const root = join(__dirname, '..', '..');
const FORBIDDEN = /^(node:|electron$|react($|\/|-dom)|ssh2$|@tensorflow\/|ws$|(fs|path|os|net|child_process|crypto|http|https|url|util|stream|events|readline|worker_threads)(\/|$))/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx)$/.test(name) ? [full] : [];
  });
}

export function importsOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /^\s*import\s+['"]([^'"]+)['"]/gm];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1]);
  return found;
}

export function platformImports(files: string[]): string[] {
  const offenders: string[] = [];
  for (const file of files) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const reachesNodeLayer = spec.startsWith('.') && /(^|\/)node\//.test(spec) && !relative(root, file).startsWith('engine/node');
      if (FORBIDDEN.test(spec) || reachesNodeLayer) offenders.push(`${relative(root, file)} imports "${spec}"`);
    }
  }
  return offenders;
}

describe('layering', () => {
  // engine/node and engine/wire (Node code shared by agents and engine/node, DESIGN.md) may use Node.
  const pureFiles = sourceFiles(join(root, 'engine')).filter((f) => !relative(root, f).startsWith(join('engine', 'node')) && !relative(root, f).startsWith(join('engine', 'wire')));

  it('finds the pure engine sources', () => {
    expect(pureFiles.length).toBeGreaterThan(5);
  });

  it('pure engine code imports no platform module', () => {
    expect(platformImports(pureFiles)).toEqual([]);
  });

  it('the check catches a platform import (self-test on a sample)', () => {
    expect(importsOf(`import { readFileSync } from 'node:fs';\nimport * as tf from '@tensorflow/tfjs-core';`)).toEqual(['node:fs', '@tensorflow/tfjs-core']);
    const sample = importsOf(`import x from 'fs';\nconst y = require('electron');\nimport '../node/api.js';`);
    expect(sample.filter((s) => FORBIDDEN.test(s))).toEqual(['fs', 'electron']);
  });
});
