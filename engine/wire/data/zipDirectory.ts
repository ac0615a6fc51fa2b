/**
 * The central directory of a zip file (what np.savez and np.savez_compressed write), zip64 included:
 * each member's name, compression and where its bytes lie, so a stored member is read in place.
 * https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

export interface ZipMember {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  compressedSize: number;
  size: number;
  /** Where the member's (compressed) bytes start in the file. */
  dataStart: number;
}

const EOCD = 0x06054b50, ZIP64_LOCATOR = 0x07064b50, ZIP64_EOCD = 0x06064b50, CENTRAL = 0x02014b50, LOCAL = 0x04034b50;
const MAX32 = 0xffffffff;

function read(fd: number, start: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

export function readZipDirectory(path: string): ZipMember[] {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const bad = (what: string) => new Error(`${path}: not a readable .npz (zip) archive: ${what}. Save it again with np.savez (or np.savez_compressed).`);
    const tailStart = Math.max(0, size - (0xffff + 22));
    const tail = read(fd, tailStart, size - tailStart);
    let e = -1;
    for (let i = tail.length - 22; i >= 0; i--) if (tail.readUInt32LE(i) === EOCD) { e = i; break; }
    if (e < 0) throw bad(size >= 2 && read(fd, 0, 2).toString('latin1') === 'PK' ? 'the end of its directory is missing (truncated?)' : 'no zip directory');
    let entries = tail.readUInt16LE(e + 10);
    let cdSize = tail.readUInt32LE(e + 12);
    let cdOffset = tail.readUInt32LE(e + 16);
    if (entries === 0xffff || cdSize === MAX32 || cdOffset === MAX32) {
      const loc = e - 20;
      if (loc < 0 || tail.readUInt32LE(loc) !== ZIP64_LOCATOR) throw bad('zip64 locator missing');
      const z = read(fd, Number(tail.readBigUInt64LE(loc + 8)), 56);
      if (z.readUInt32LE(0) !== ZIP64_EOCD) throw bad('zip64 directory record missing');
      entries = Number(z.readBigUInt64LE(32));
      cdSize = Number(z.readBigUInt64LE(40));
      cdOffset = Number(z.readBigUInt64LE(48));
    }
    const cd = read(fd, cdOffset, cdSize);
    const members: ZipMember[] = [];
    for (let p = 0, k = 0; k < entries; k++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL) throw bad(`directory entry ${k} is damaged`);
      const method = cd.readUInt16LE(p + 10);
      let compressedSize = cd.readUInt32LE(p + 20);
      let usize = cd.readUInt32LE(p + 24);
      const nameLen = cd.readUInt16LE(p + 28), extraLen = cd.readUInt16LE(p + 30), commentLen = cd.readUInt16LE(p + 32);
      let local = cd.readUInt32LE(p + 42);
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
      // The zip64 extra field holds, in this order, whichever of the three sizes overflowed 32 bits.
      for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen; ) {
        const id = cd.readUInt16LE(x), len = cd.readUInt16LE(x + 2);
        if (id === 0x0001) {
          let f = x + 4;
          if (usize === MAX32) { usize = Number(cd.readBigUInt64LE(f)); f += 8; }
          if (compressedSize === MAX32) { compressedSize = Number(cd.readBigUInt64LE(f)); f += 8; }
          if (local === MAX32) { local = Number(cd.readBigUInt64LE(f)); f += 8; }
        }
        x += 4 + len;
      }
      const lh = read(fd, local, 30);
      if (lh.length < 30 || lh.readUInt32LE(0) !== LOCAL) throw bad(`member ${name}'s header is damaged`);
      members.push({ name, method, compressedSize, size: usize, dataStart: local + 30 + lh.readUInt16LE(26) + lh.readUInt16LE(28) });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return members;
  } finally {
    closeSync(fd);
  }
}

/** A deflated member's bytes, inflated. */
export function inflateMember(path: string, m: ZipMember): Buffer {
  const fd = openSync(path, 'r');
  try {
    const out = inflateRawSync(read(fd, m.dataStart, m.compressedSize));
    if (out.length !== m.size) throw new Error(`${path}: member ${m.name} inflates to ${out.length} bytes, not the ${m.size} its directory says; the archive is damaged.`);
    return out;
  } finally {
    closeSync(fd);
  }
}
