// Zstandard frames (RFC 8878) for IPC bodies compressed with ZSTD, decoded by
// fzstd (docs/ipc.md says why). Before fzstd sees a byte, the frames are
// walked here: every block header checked against the input (so truncation
// is an error naming the frame and block), the content sizes added up and
// compared with the IPC buffer's uncompressed length, and the window sizes
// bounded, since fzstd allocates what a frame header asks for.

import { decompress } from 'fzstd';
import { ArrowCDeviceError, EINVAL, ENOSYS, ERANGE } from '../../abi/errors.js';

const MAGIC = 0xfd2fb528;
const SKIPPABLE = 0x184d2a50;
/** libzstd's default limit for decoding (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27), which Arrow C++ keeps. */
export const ZSTD_MAX_WINDOW = 1 << 27;
/** A block regenerates at most 128 KiB from at least 4 bytes (an RLE block). */
export const ZSTD_MAX_RATIO = 32768;
const BLOCK_MAX = 1 << 17;

interface Frame { index: number; start: number; end: number; contentSize: number | null }

const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

function fail(message: string, code = EINVAL): never {
  throw new ArrowCDeviceError(`ZSTD frame: ${message}`, code);
}

/** Little-endian unsigned integer of n (0..8) bytes. */
function uint(b: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = n - 1; i >= 0; i--) v = v * 256 + b[at + i]!;
  return v;
}

/** The frames of `src`, without decoding: header fields and block sizes checked against the input. */
function frames(src: Uint8Array): Frame[] {
  const out: Frame[] = [];
  let at = 0;
  let index = 0;
  const need = (n: number, what: string) => {
    if (at + n > src.length) fail(`frame ${index}: ${what} needs bytes ${at}..${at + n}, the buffer has ${src.length} (truncated?)`);
  };
  while (at < src.length) {
    const start = at;
    need(4, 'the magic number');
    const magic = u32(src, at);
    at += 4;
    if ((magic & 0xfffffff0) === SKIPPABLE) {
      need(4, 'a skippable frame');
      const size = u32(src, at);
      at += 4;
      need(size, 'a skippable frame');
      at += size;
      index++;
      continue;
    }
    if (magic !== MAGIC) fail(`frame ${index}: magic number 0x${magic.toString(16)} at byte ${start}, expected 0xfd2fb528`);
    need(1, 'the frame header');
    const fhd = src[at++]!;
    const fcsFlag = fhd >> 6;
    const singleSegment = (fhd & 0x20) !== 0;
    if ((fhd & 0x08) !== 0) fail(`frame ${index}: the reserved bit of the frame header is set`);
    let window = 0;
    if (!singleSegment) {
      need(1, 'the window descriptor');
      const wd = src[at++]!;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    const dictBytes = [0, 1, 2, 4][fhd & 3]!;
    need(dictBytes, 'the dictionary id');
    if (uint(src, at, dictBytes) !== 0) fail(`frame ${index}: compressed with a dictionary, which IPC bodies do not use`, ENOSYS);
    at += dictBytes;
    const fcsBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag]!;
    need(fcsBytes, 'the content size');
    const contentSize = fcsBytes === 0 ? null : uint(src, at, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
    at += fcsBytes;
    if (contentSize !== null && contentSize > Number.MAX_SAFE_INTEGER) fail(`frame ${index}: content size beyond 2^53`);
    if (singleSegment) window = contentSize!;
    if (window > ZSTD_MAX_WINDOW) {
      fail(`frame ${index}: a window of ${window} bytes, more than ${ZSTD_MAX_WINDOW} (libzstd's default limit, which Arrow C++ keeps)`, ERANGE);
    }
    const blockMax = Math.min(BLOCK_MAX, window || BLOCK_MAX);
    for (let k = 0; ; k++) {
      need(3, `block ${k}'s header`);
      const header = src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16);
      at += 3;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) fail(`frame ${index}: block ${k} has the reserved block type`);
      if (size > blockMax) fail(`frame ${index}: block ${k} of ${size} bytes, more than the ${blockMax} a block of this frame may hold`);
      const stored = type === 1 ? 1 : size;
      need(stored, `block ${k}`);
      at += stored;
      if ((header & 1) !== 0) break;
    }
    if ((fhd & 0x04) !== 0) {
      need(4, 'the content checksum');
      at += 4;
    }
    out.push({ index, start, end: at, contentSize });
    index++;
  }
  return out;
}

/**
 * The content of the Zstandard frames in `src`. With `expected` (the IPC
 * buffer's uncompressed length) the output has exactly that many bytes, or
 * this throws; without it (apache-arrow's codec interface), at most `cap`.
 * The result starts at byte 0 of its ArrayBuffer (apache-arrow makes aligned
 * typed arrays over it).
 */
export function decodeZstd(src: Uint8Array, expected: number | undefined, cap: number): Uint8Array {
  const all = frames(src);
  const declared = all.reduce((n, f) => n + (f.contentSize ?? 0), 0);
  const bound = expected ?? cap;
  if (declared > bound) {
    fail(`the frames' content sizes add up to ${declared} bytes, ${expected === undefined ? `more than this reader's bound of ${cap}` : `the IPC buffer's uncompressed length is ${expected}`}`);
  }
  if (expected !== undefined && all.every((f) => f.contentSize !== null) && declared !== expected) {
    fail(`the frames' content sizes add up to ${declared} bytes, the IPC buffer's uncompressed length is ${expected}`);
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const f of all) {
    const i = f.index;
    let part: Uint8Array;
    try {
      part = decompress(src.subarray(f.start, f.end));
    } catch (e) {
      fail(`frame ${i}: fzstd: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (f.contentSize !== null && part.length !== f.contentSize) fail(`frame ${i}: ${part.length} bytes, the frame's content size is ${f.contentSize}`);
    total += part.length;
    if (total > bound) fail(`decompresses to more than ${bound} bytes${expected === undefined ? '' : ', the IPC buffer\'s uncompressed length'}`);
    parts.push(part);
  }
  if (expected !== undefined && total !== expected) fail(`decompresses to ${total} bytes, the IPC buffer's uncompressed length is ${expected}`);
  if (parts.length === 1 && parts[0]!.byteOffset === 0) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
