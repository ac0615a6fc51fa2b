import { execFileSync } from 'node:child_process';

/**
 * The python3 that has h5py, with which the Keras-file tests write and read HDF5 in Keras's layout;
 * without one the test stops with what to install, never skips.
 */
export function h5pyPython(test: string): string {
  const python = ['/usr/bin/python3', 'python3'].find((bin) => {
    try {
      execFileSync(bin, ['-c', 'import h5py'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
  if (!python) throw new Error(`${test} needs python3 with h5py (Debian: python3-h5py; scripts/setup-debian.sh installs it).`);
  return python;
}
