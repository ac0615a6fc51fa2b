import { expect, test } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The renderer runs untrusted-by-default web content: it may import the pure engine but never Node
 * built-ins, shell code, the ws server or engine/node. Checked on the sources (no browser needed).
 */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

test('renderer sources import nothing from Node, the shells or engine/node', () => {
  const forbidden = [/^node:/, /^(fs|path|os|child_process|crypto|net|http|https|url|module)$/, /^ws$/, /^electron$/, /(^|\/)engine\/node(\/|$)/, /(^|\/)electron\//, /(^|\/)agents\//];
  const offences: string[] = [];
  for (const file of sourceFiles(join(process.cwd(), 'renderer', 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (forbidden.some((rule) => rule.test(specifier))) offences.push(`${file}: ${specifier}`);
    }
  }
  expect(offences).toEqual([]);
});
