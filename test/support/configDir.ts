import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Point Shoal's config directory (clusters.json, link profiles) at a fresh temporary directory for the
 * rest of this test file, restoring the variable and removing the directory after it. Returns the directory.
 */
export function useTempConfigDir(prefix: string): string {
  const config = mkdtempSync(join(tmpdir(), prefix));
  const saved = process.env.SHOAL_CONFIG_DIR;
  process.env.SHOAL_CONFIG_DIR = config;
  afterAll(() => {
    if (saved === undefined) delete process.env.SHOAL_CONFIG_DIR;
    else process.env.SHOAL_CONFIG_DIR = saved;
    rmSync(config, { recursive: true, force: true });
  });
  return config;
}
