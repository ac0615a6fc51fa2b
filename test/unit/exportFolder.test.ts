import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareExportFolder } from '../../engine/node/export/exportFolder.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-export-folder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('where shoal export writes', () => {
  it('creates a new folder, and reuses one holding an earlier Shoal export', () => {
    const fresh = join(root, 'a', 'b');
    prepareExportFolder(fresh);
    expect(existsSync(fresh)).toBe(true);
    writeFileSync(join(fresh, 'model.json'), JSON.stringify({ modelTopology: {}, userDefinedMetadata: { shoal: { checkpoint: '/x/step-1.ckpt' } } }));
    expect(() => prepareExportFolder(fresh)).not.toThrow();
  });

  it("refuses a file, a path below a file, and a folder holding someone else's model.json, which stays", () => {
    const file = join(root, 'model.json');
    writeFileSync(file, '{}');
    expect(() => prepareExportFolder(file)).toThrow(`Export folder ${file} (--out): ${file} is a file, not a folder.`);
    expect(() => prepareExportFolder(join(file, 'out'))).toThrow(`${file} is a file, not a folder`);
    const original = join(root, 'original');
    mkdirSync(original);
    writeFileSync(join(original, 'model.json'), '{"modelTopology": {}}');
    expect(() => prepareExportFolder(original)).toThrow(`Export folder ${original} (--out) already holds a model.json that is not a Shoal export`);
    expect(readFileSync(join(original, 'model.json'), 'utf8')).toBe('{"modelTopology": {}}');
  });
});
