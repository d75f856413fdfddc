// ArrowSchema.metadata encoding: int32 pair count, then per pair int32 key
// length, key bytes, int32 value length, value bytes. Integers are native
// endian, which on wasm (and every host we run on) is little-endian.

import { ArrowCDeviceError } from './errors.js';
import type { Metadata } from './types.js';

const encoder = new TextEncoder();
// fatal: invalid UTF-8 is an error, not U+FFFD; ignoreBOM: keep a leading BOM.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const LONE_SURROGATE = /\p{Surrogate}/u;
const INT32_MAX = 2147483647;

function encodeString(s: string, what: string): Uint8Array {
  // TextEncoder would silently turn a lone surrogate into U+FFFD.
  if (LONE_SURROGATE.test(s)) throw new ArrowCDeviceError(`metadata ${what}: not well-formed UTF-16 (lone surrogate)`);
  return encoder.encode(s);
}

/**
 * Encodes metadata for ArrowSchema.metadata. null means "no metadata" and
 * gives null (a NULL pointer in C); an empty map gives a 4-byte zero count.
 */
export function encodeMetadata(m: Metadata | null | undefined): Uint8Array | null {
  if (m == null) return null;
  const pairs: Uint8Array[] = [];
  let i = 0;
  for (const [key, value] of m) {
    pairs.push(encodeString(key, `key ${i}`), encodeString(value, `value ${i} (key '${key}')`));
    i++;
  }
  const size = pairs.reduce((n, p) => n + 4 + p.length, 4);
  if (size > INT32_MAX) throw new ArrowCDeviceError(`metadata: ${size} bytes exceed the int32 limit`);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setInt32(0, m.size, true);
  let offset = 4;
  for (const p of pairs) {
    view.setInt32(offset, p.length, true);
    out.set(p, offset + 4);
    offset += 4 + p.length;
  }
  return out;
}

/**
 * Decodes ArrowSchema.metadata bytes. Bytes after the last pair are ignored,
 * so a view running past the end of the encoding is fine. Duplicate keys:
 * the last value wins. Throws ArrowCDeviceError (EINVAL) naming the key or
 * value and the byte offset when the bytes are malformed.
 */
export function decodeMetadata(bytes: Uint8Array): Metadata {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // TextDecoder refuses views of shared memory (threaded wasm), so copy those.
  const shared = typeof SharedArrayBuffer !== 'undefined' && bytes.buffer instanceof SharedArrayBuffer;
  let offset = 0;

  const readInt32 = (what: string): number => {
    if (offset + 4 > bytes.length) {
      throw new ArrowCDeviceError(`metadata ${what} at byte offset ${offset}: expected a 4-byte length, found ${bytes.length - offset} bytes left`);
    }
    const n = view.getInt32(offset, true);
    if (n < 0) throw new ArrowCDeviceError(`metadata ${what} at byte offset ${offset}: expected a non-negative length, found ${n}`);
    offset += 4;
    return n;
  };
  const readString = (what: string): string => {
    const at = offset;
    const length = readInt32(what);
    const end = offset + length;
    if (end > bytes.length) {
      throw new ArrowCDeviceError(`metadata ${what} at byte offset ${at}: length ${length} runs past the end (${bytes.length - offset} bytes left)`);
    }
    let s: string;
    try {
      s = decoder.decode(shared ? bytes.slice(offset, end) : bytes.subarray(offset, end));
    } catch {
      throw new ArrowCDeviceError(`metadata ${what} at byte offset ${at}: invalid UTF-8`);
    }
    offset = end;
    return s;
  };

  const count = readInt32('pair count');
  const result = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const key = readString(`key ${i}`);
    result.set(key, readString(`value ${i} (key '${key}')`));
  }
  return result;
}
