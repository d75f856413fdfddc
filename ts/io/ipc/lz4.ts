// The LZ4 frame format (lz4_Frame_format.md) and its blocks
// (lz4_Block_format.md), decoded for IPC bodies compressed with LZ4_FRAME.
// Our own decoder, not lz4js (docs/ipc.md says why): every read and write
// is checked, so a corrupt frame is an error naming the frame and block,
// never bytes read as 0 from outside the input. The header checksum is
// verified, and block and content checksums when the frame has them.

import { ArrowCDeviceError, EINVAL, ENOSYS } from '../../abi/errors.js';

const MAGIC = 0x184d2204;
const LEGACY_MAGIC = 0x184c2102;
/** 0x184D2A50..0x184D2A5F: frames a decoder skips. */
const SKIPPABLE = 0x184d2a50;
const UNCOMPRESSED = 0x80000000;
const BLOCK_MAX = [0, 0, 0, 0, 1 << 16, 1 << 18, 1 << 20, 1 << 22];
/** An LZ4 block cannot expand more than this (a match length byte of 255 per input byte). */
export const LZ4_MAX_RATIO = 256;

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/** XXH32 of `b` (seed 0), the checksum of the LZ4 frame format. */
export function xxh32(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  let h: number;
  if (n >= 16) {
    let v1 = (P1 + P2) | 0;
    let v2 = P2 | 0;
    let v3 = 0;
    let v4 = -P1 | 0;
    const round = (v: number, at: number) => Math.imul(rotl((v + Math.imul(u32(b, at), P2)) | 0, 13), P1);
    for (; i <= n - 16; i += 16) {
      v1 = round(v1, i);
      v2 = round(v2, i + 4);
      v3 = round(v3, i + 8);
      v4 = round(v4, i + 12);
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = P5 | 0;
  }
  h = (h + n) | 0;
  for (; i <= n - 4; i += 4) h = Math.imul(rotl((h + Math.imul(u32(b, i), P3)) | 0, 17), P4);
  for (; i < n; i++) h = Math.imul(rotl((h + Math.imul(b[i]!, P5)) | 0, 11), P1);
  h = Math.imul(h ^ (h >>> 15), P2);
  h = Math.imul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}

interface Block { at: number; size: number; raw: boolean; checksum: number | null }
interface Frame {
  readonly index: number;
  readonly blocks: Block[];
  readonly blockMax: number;
  readonly independent: boolean;
  readonly contentSize: number | null;
  readonly contentChecksum: number | null;
}

function fail(message: string, code = EINVAL): never {
  throw new ArrowCDeviceError(`LZ4 frame: ${message}`, code);
}

/** The frames of `src` and their blocks, every length checked against the input. */
function frames(src: Uint8Array): Frame[] {
  const out: Frame[] = [];
  let at = 0;
  const need = (n: number, what: string, frame: number) => {
    if (at + n > src.length) fail(`frame ${frame}: ${what} needs bytes ${at}..${at + n}, the buffer has ${src.length} (truncated?)`);
  };
  while (at < src.length) {
    const index = out.length;
    need(4, 'the magic number', index);
    const magic = u32(src, at);
    if ((magic & 0xfffffff0) === SKIPPABLE) {
      need(8, 'a skippable frame', index);
      const size = u32(src, at + 4);
      at += 8;
      need(size, 'a skippable frame', index);
      at += size;
      continue;
    }
    if (magic === LEGACY_MAGIC) fail(`frame ${index}: the legacy LZ4 frame format is not supported`, ENOSYS);
    if (magic !== MAGIC) fail(`frame ${index}: magic number 0x${magic.toString(16)} at byte ${at}, expected 0x184d2204`);
    at += 4;
    const descriptor = at;
    need(2, 'the frame descriptor', index);
    const flg = src[at]!;
    const bd = src[at + 1]!;
    at += 2;
    if (flg >> 6 !== 1) fail(`frame ${index}: version ${flg >> 6}, expected 1`);
    if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) fail(`frame ${index}: reserved bits set in the frame descriptor`);
    const blockMax = BLOCK_MAX[(bd >> 4) & 7]!;
    if (blockMax === 0) fail(`frame ${index}: block maximum size code ${(bd >> 4) & 7}, expected 4..7`);
    let contentSize: number | null = null;
    if ((flg & 0x08) !== 0) {
      need(8, 'the content size', index);
      const size = BigInt(u32(src, at)) | (BigInt(u32(src, at + 4)) << 32n);
      if (size > BigInt(Number.MAX_SAFE_INTEGER)) fail(`frame ${index}: content size ${size} is beyond 2^53`);
      contentSize = Number(size);
      at += 8;
    }
    if ((flg & 0x01) !== 0) fail(`frame ${index}: compressed with a dictionary, which IPC bodies do not use`, ENOSYS);
    need(1, 'the header checksum', index);
    const hc = (xxh32(src.subarray(descriptor, at)) >>> 8) & 0xff;
    if (src[at] !== hc) fail(`frame ${index}: header checksum 0x${src[at]!.toString(16)}, the descriptor's is 0x${hc.toString(16)}`);
    at++;
    const blocks: Block[] = [];
    for (;;) {
      need(4, `block ${blocks.length}'s size`, index);
      const word = u32(src, at);
      at += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (size > blockMax) fail(`frame ${index}: block ${blocks.length} of ${size} bytes, more than the frame's maximum of ${blockMax}`);
      need(size, `block ${blocks.length}`, index);
      const block: Block = { at, size, raw: (word & UNCOMPRESSED) !== 0, checksum: null };
      at += size;
      if ((flg & 0x10) !== 0) {
        need(4, `block ${blocks.length}'s checksum`, index);
        block.checksum = u32(src, at);
        at += 4;
      }
      blocks.push(block);
    }
    let contentChecksum: number | null = null;
    if ((flg & 0x04) !== 0) {
      need(4, 'the content checksum', index);
      contentChecksum = u32(src, at);
      at += 4;
    }
    out.push({ index, blocks, blockMax, independent: (flg & 0x20) !== 0, contentSize, contentChecksum });
  }
  return out;
}

/** Decodes one compressed block into dst[d..], returning the new end; every offset and length checked. */
function block(src: Uint8Array, s: number, end: number, dst: Uint8Array, d: number, limit: number, windowStart: number, where: string): number {
  for (;;) {
    if (s >= end) fail(`${where}: ends without its last literals`);
    const token = src[s++]!;
    let literals = token >> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (s >= end) fail(`${where}: a literal length runs past the block`);
        b = src[s++]!;
        literals += b;
      } while (b === 255);
    }
    if (s + literals > end) fail(`${where}: ${literals} literals at byte ${s} run past the block (ends at byte ${end})`);
    if (d + literals > limit) fail(`${where}: decompresses past ${limit} bytes`);
    // Short runs by hand: a call to set or copyWithin costs more than a few bytes.
    if (literals < 32) {
      for (const stop = s + literals; s < stop;) dst[d++] = src[s++]!;
    } else {
      dst.set(src.subarray(s, s + literals), d);
      s += literals;
      d += literals;
    }
    if (s === end) return d;
    if (s + 2 > end) fail(`${where}: a match offset runs past the block`);
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    if (offset === 0 || offset > d - windowStart) fail(`${where}: match offset ${offset} at output byte ${d} reaches before the ${windowStart === 0 ? 'start' : 'block'}`);
    let length = token & 15;
    if (length === 15) {
      let b: number;
      do {
        if (s >= end) fail(`${where}: a match length runs past the block`);
        b = src[s++]!;
        length += b;
      } while (b === 255);
    }
    length += 4;
    if (d + length > limit) fail(`${where}: decompresses past ${limit} bytes`);
    if (offset >= length && length >= 32) {
      dst.copyWithin(d, d - offset, d - offset + length);
      d += length;
    } else {
      for (const stop = d + length; d < stop; d++) dst[d] = dst[d - offset]!;
    }
  }
}

/**
 * The content of the LZ4 frames in `src`. With `expected` (the IPC buffer's
 * uncompressed length) the output has exactly that many bytes, or this
 * throws; without it (apache-arrow's codec interface), at most `cap`.
 */
export function decodeLz4(src: Uint8Array, expected: number | undefined, cap: number): Uint8Array {
  const all = frames(src);
  let capacity = 0;
  for (const f of all) {
    if (f.contentSize !== null) capacity += f.contentSize;
    else for (const b of f.blocks) capacity += b.raw ? b.size : Math.min(f.blockMax, LZ4_MAX_RATIO * b.size);
  }
  if (expected !== undefined) {
    if (all.every((f) => f.contentSize !== null) && capacity !== expected) {
      fail(`the frames' content sizes add up to ${capacity} bytes, the IPC buffer's uncompressed length is ${expected}`);
    }
    capacity = expected;
  } else if (capacity > cap) {
    fail(`the frames may decompress to ${capacity} bytes, more than this reader's bound of ${cap}`);
  }
  const dst = new Uint8Array(capacity);
  let d = 0;
  for (const f of all) {
    const start = d;
    f.blocks.forEach((b, k) => {
      const where = `frame ${f.index} block ${k}`;
      if (b.checksum !== null && xxh32(src.subarray(b.at, b.at + b.size)) !== b.checksum) fail(`${where}: block checksum mismatch`);
      const blockStart = d;
      const limit = Math.min(capacity, d + f.blockMax);
      if (b.raw) {
        if (d + b.size > limit) fail(`${where}: decompresses past ${limit} bytes`);
        dst.set(src.subarray(b.at, b.at + b.size), d);
        d += b.size;
      } else {
        // Linked blocks may refer to the frame's earlier output, up to 64 KiB back.
        d = block(src, b.at, b.at + b.size, dst, d, limit, f.independent ? blockStart : start, where);
      }
    });
    if (f.contentSize !== null && d - start !== f.contentSize) fail(`frame ${f.index}: ${d - start} bytes, the frame's content size is ${f.contentSize}`);
    if (f.contentChecksum !== null && xxh32(dst.subarray(start, d)) !== f.contentChecksum) fail(`frame ${f.index}: content checksum mismatch`);
  }
  if (expected !== undefined && d !== expected) fail(`decompresses to ${d} bytes, the IPC buffer's uncompressed length is ${expected}`);
  return d === capacity ? dst : dst.slice(0, d);
}
