import { describe, expect, it } from 'vitest';
import { osCode, writePatiently } from '../../agents/coordinator/patientWrite.js';

const osError = (code: string) => Object.assign(new Error(`${code}: from the OS`), { code });
/** As engine/wire/checkpointFile.ts throws: its own words, the OS error as the cause. */
const wrapped = (code: string) => new Error('Cannot write checkpoint x: the disk is full', { cause: osError(code) });

function recorder() {
  const said: string[] = [];
  return {
    said,
    patience: (giveUpMs: number) => ({ retryMs: 1, giveUpMs, onWait: (err: Error, ms: number) => said.push(`wait ${ms}: ${err.message}`), onRecovered: () => said.push('recovered') }),
  };
}

describe('writePatiently', () => {
  it('tries a write again while the disk is full, says so once, and returns what the write returned once space is freed', async () => {
    let tries = 0;
    const { said, patience } = recorder();
    const result = await writePatiently(() => {
      if (++tries < 4) throw wrapped('ENOSPC');
      return 'written';
    }, patience(60_000));
    expect(result).toBe('written');
    expect(tries).toBe(4);
    expect(said).toEqual(['wait 60000: Cannot write checkpoint x: the disk is full', 'recovered']);
  });

  it('throws at once for a cause waiting does not fix', async () => {
    for (const code of ['EACCES', 'ENOENT', undefined]) {
      let tries = 0;
      const { said, patience } = recorder();
      const failing = () => {
        tries++;
        throw code ? wrapped(code) : new Error('a bug');
      };
      await expect(writePatiently(failing, patience(60_000))).rejects.toThrow(code ? 'Cannot write checkpoint x' : 'a bug');
      expect(tries).toBe(1);
      expect(said).toEqual([]);
    }
  });

  it('gives up after its bound with the last error', async () => {
    let tries = 0;
    const { said, patience } = recorder();
    await expect(writePatiently(() => {
      tries++;
      throw osError('EDQUOT');
    }, patience(30))).rejects.toThrow('EDQUOT: from the OS');
    expect(tries).toBeGreaterThan(1);
    expect(said).toHaveLength(1);
  });

  it('finds the OS code on the error or down its causes', () => {
    expect(osCode(osError('ENOSPC'))).toBe('ENOSPC');
    expect(osCode(new Error('outer', { cause: wrapped('EDQUOT') }))).toBe('EDQUOT');
    expect(osCode(new Error('none'))).toBeUndefined();
  });
});
