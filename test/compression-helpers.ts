// LZ4 frames and Zstandard frames made by hand for the tests of
// ts/io/ipc/compression.ts: raw (stored) blocks, LZ4 blocks of literals and
// matches written sequence by sequence, and the int64 length prefix of a
// compressed IPC buffer. No compressor is needed to make valid frames.
import { xxh32 } from '../ts/io/ipc/lz4.js';

const le32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const le64 = (v: bigint) => Array.from(new Uint8Array(BigInt64Array.of(v).buffer));

/** One LZ4 block: its bytes as stored, and whether it is stored uncompressed. */
export interface Lz4Block { bytes: number[]; raw?: boolean }

export interface Lz4FrameOptions {
  /** Block maximum size code, 4 (64 KiB) to 7 (4 MiB). */
  blockMax?: number;
  independent?: boolean;
  blockChecksums?: boolean;
  /** The content, for a content checksum and a content size. */
  content?: Uint8Array;
  contentChecksum?: boolean;
  contentSize?: number;
}

/** An LZ4 frame of the given blocks. */
export function lz4Frame(blocks: Lz4Block[], o: Lz4FrameOptions = {}): Uint8Array {
  const flg = 0x40 | (o.independent ?? true ? 0x20 : 0) | (o.blockChecksums ? 0x10 : 0) | (o.contentSize !== undefined ? 0x08 : 0) |
    (o.contentChecksum ? 0x04 : 0);
  const descriptor = [flg, (o.blockMax ?? 4) << 4, ...(o.contentSize !== undefined ? le64(BigInt(o.contentSize)) : [])];
  const out = [...le32(0x184d2204), ...descriptor, (xxh32(Uint8Array.from(descriptor)) >>> 8) & 0xff];
  for (const b of blocks) {
    out.push(...le32(b.bytes.length | (b.raw ? 0x80000000 : 0)), ...b.bytes);
    if (o.blockChecksums) out.push(...le32(xxh32(Uint8Array.from(b.bytes))));
  }
  out.push(0, 0, 0, 0);
  if (o.contentChecksum) out.push(...le32(xxh32(o.content!)));
  return Uint8Array.from(out);
}

/** One LZ4 sequence: literals, then (unless last) a match of `length` bytes `offset` back. */
export function lz4Sequence(literals: number[], match?: { offset: number; length: number }): number[] {
  const extend = (n: number) => {
    const out: number[] = [];
    for (n -= 15; n >= 255; n -= 255) out.push(255);
    out.push(n);
    return out;
  };
  const m = match === undefined ? 0 : match.length - 4;
  const token = (Math.min(literals.length, 15) << 4) | Math.min(m, 15);
  return [token, ...(literals.length >= 15 ? extend(literals.length) : []), ...literals,
    ...(match === undefined ? [] : [match.offset & 0xff, match.offset >> 8, ...(m >= 15 ? extend(m) : [])])];
}

/** A Zstandard frame of raw blocks (and RLE blocks for runs), with or without a content size. */
export function zstdFrame(blocks: ({ raw: number[] } | { rle: number; count: number })[], contentSize: boolean): Uint8Array {
  const total = blocks.reduce((n, b) => n + ('raw' in b ? b.raw.length : b.count), 0);
  // Frame header: single segment with a 4-byte content size, or a window descriptor of 1 MiB.
  const header = contentSize ? [0xa0, ...le32(total)] : [0x00, (20 - 10) << 3];
  const out = [...le32(0xfd2fb528), ...header];
  blocks.forEach((b, i) => {
    const last = i === blocks.length - 1 ? 1 : 0;
    const [type, size, data] = 'raw' in b ? [0, b.raw.length, b.raw] : [1, b.count, [b.rle]];
    const h = (size << 3) | (type << 1) | last;
    out.push(h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, ...data);
  });
  return Uint8Array.from(out);
}

/** A compressed IPC buffer: the int64 uncompressed length, then the frame. */
export function prefixed(length: bigint | number, frame: Uint8Array | number[]): number[] {
  return [...le64(BigInt(length)), ...frame];
}
