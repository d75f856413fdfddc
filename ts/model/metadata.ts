// ArrowSchema.metadata encoding: int32 pair count, then per pair int32 key
// length, key bytes, int32 value length, value bytes. Integers are native
// endian, which on wasm (and every host we run on) is little-endian.
//
// Keys and values are binary strings (the spec), usually UTF-8. They are
// JS strings here, as apache-arrow's metadata are, and stay byte-exact both
// ways with Python's "surrogateescape" (PEP 383): a byte that is not part of
// a valid UTF-8 sequence (always 0x80..0xFF) becomes the lone surrogate
// U+DC80..U+DCFF, and encoding turns such a surrogate back into its byte.
// So any bytes decode and re-encode to themselves; valid UTF-8 decodes as
// usual, since it never encodes a surrogate.

import { isShared, type AddressSpace } from '../abi/address-space.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { Metadata } from './types.js';

const encoder = new TextEncoder();
// fatal: the fast path; invalid UTF-8 takes the escaping decoder. ignoreBOM: keep a leading BOM.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Decodes without throwing: U+FFFD in its result sends the bytes to decodeEscaped (no exception per string). */
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The most pairs a metadata blob may have here. The spec bounds the count
 * only by int32; a count of millions (a pointer into other data, or hostile
 * input) would make an import spend seconds building a Map nobody wants.
 */
export const MAX_METADATA_PAIRS = 1 << 20;

/** The most bytes a metadata blob may take here (64 MiB), for the same reason. */
export const MAX_METADATA_BYTES = 64 << 20;
const LONE_SURROGATE = /\p{Surrogate}/u;
const INT32_MAX = 2147483647;
const ESCAPE_BASE = 0xdc00;

function encodeString(s: string, what: string): Uint8Array {
  if (!LONE_SURROGATE.test(s)) return encoder.encode(s);
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xdc80 && c <= 0xdcff) {
      out.push(c - ESCAPE_BASE);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // TextEncoder would silently turn it into U+FFFD.
      throw new ArrowCDeviceError(`metadata ${what}: not well-formed UTF-16 (lone surrogate U+${c.toString(16).toUpperCase()}, ` +
        'only U+DC80..U+DCFF stand for bytes)');
    } else {
      out.push(...encoder.encode(ch));
    }
  }
  return Uint8Array.from(out);
}

/** The length of the valid UTF-8 sequence at b[i] (RFC 3629, as csrc/model/utf8.c), or 0. */
function sequenceLength(b: Uint8Array, i: number, end: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c === 0xe0) lo = 0xa0;
    if (c === 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c === 0xf0) lo = 0x90;
    if (c === 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (end - i < n || b[i + 1] < lo || b[i + 1] > hi) return 0;
  for (let k = 2; k < n; k++) if (b[i + k] < 0x80 || b[i + k] > 0xbf) return 0;
  return n;
}

/**
 * Bytes as a string, every byte outside a valid UTF-8 sequence as
 * U+DC80..U+DCFF. One pass into UTF-16 code units, made a string 8192 at a
 * time: random bytes (a metadata pointer into other data) cost about 30
 * nanoseconds each (2 s for 64 MiB), not a decoder call and a concatenation
 * per bad byte.
 */
export function decodeEscaped(b: Uint8Array): string {
  const units = new Uint16Array(b.length);
  let u = 0;
  for (let i = 0; i < b.length;) {
    const n = sequenceLength(b, i, b.length);
    const c = b[i];
    if (n === 0) {
      units[u++] = ESCAPE_BASE + c;
      i++;
      continue;
    }
    let cp = n === 1 ? c : n === 2 ? c & 0x1f : n === 3 ? c & 0x0f : c & 0x07;
    for (let k = 1; k < n; k++) cp = (cp << 6) | (b[i + k] & 0x3f);
    if (cp >= 0x10000) {
      units[u++] = 0xd800 + ((cp - 0x10000) >> 10);
      units[u++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    } else {
      units[u++] = cp;
    }
    i += n;
  }
  return codeUnitsToString(units, u);
}

const fromCodes = String.fromCharCode as (this: null, ...codes: number[]) => string;

/**
 * The first `n` UTF-16 code units as a string, lone surrogates kept (a
 * TextDecoder would replace them), made 8192 at a time: apply takes the
 * typed array as it is, where a spread iterates it (5 times slower).
 */
export function codeUnitsToString(units: Uint16Array, n = units.length): string {
  const parts: string[] = [];
  for (let k = 0; k < n; k += 8192) parts.push(fromCodes.apply(null, units.subarray(k, Math.min(n, k + 8192)) as unknown as number[]));
  return parts.join('');
}

/**
 * Encodes metadata for ArrowSchema.metadata. null means "no metadata" and
 * gives null (a NULL pointer in C); an empty map gives a 4-byte zero count.
 *
 * Ownership: pure; the bytes are JS memory.
 * @param m - the metadata, or null for none.
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
 * How many pairs of two zero lengths (an empty key and an empty value, 8 zero
 * bytes each) follow at `offset`, up to `max`: a count of millions over zeroed
 * memory is walked in words rather than pair by pair.
 */
function emptyPairsAt(bytes: Uint8Array, offset: number, max: number): number {
  const n = Math.min(max, Math.floor((bytes.length - offset) / 8));
  if (!(n > 0)) return 0;
  const at = bytes.byteOffset + offset;
  if (at % 4 === 0) {
    const words = new Int32Array(bytes.buffer, at, n * 2);
    let i = 0;
    while (i < n && words[2 * i] === 0 && words[2 * i + 1] === 0) i++;
    return i;
  }
  const view = new DataView(bytes.buffer, at, n * 8);
  let i = 0;
  while (i < n && view.getUint32(8 * i) === 0 && view.getUint32(8 * i + 4) === 0) i++;
  return i;
}

/**
 * Decodes ArrowSchema.metadata bytes (invalid UTF-8 escaped, see above).
 * Bytes after the last pair are ignored,
 * so a view running past the end of the encoding is fine. Duplicate keys:
 * the last value wins. Throws ArrowCDeviceError (EINVAL) naming the key or
 * value and the byte offset when the bytes are malformed.

 *
 * Ownership: pure; nothing to release.
 * @param bytes - the encoded metadata.
 */
export function decodeMetadata(bytes: Uint8Array): Metadata {
  return decodeMetadataCounted(bytes, { bytes: MAX_METADATA_BYTES });
}

/**
 * What a reader of a whole schema tree may still decode: MAX_METADATA_BYTES
 * in all, so that nodes whose metadata pointers share one large region (a
 * producer's garbage) do not each decode it again.
 */
export interface MetadataBudget {
  bytes: number;
}

/** decodeMetadata within a budget, which it lowers by the bytes it read. */
function decodeMetadataCounted(bytes: Uint8Array, budget: MetadataBudget): Metadata {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // TextDecoder refuses views of shared memory (threaded wasm), so copy those.
  const shared = isShared(bytes.buffer);
  let offset = 0;

  // Error texts are built only on failure: these run for every pair of a count that may be large.
  const readInt32 = (what: () => string): number => {
    if (offset + 4 > bytes.length) {
      throw new ArrowCDeviceError(`metadata ${what()} at byte offset ${offset}: expected a 4-byte length, found ${bytes.length - offset} bytes left`);
    }
    const n = view.getInt32(offset, true);
    if (n < 0) throw new ArrowCDeviceError(`metadata ${what()} at byte offset ${offset}: expected a non-negative length, found ${n}`);
    offset += 4;
    return n;
  };
  const readString = (what: () => string): string => {
    const at = offset;
    const length = readInt32(what);
    if (length === 0) return '';
    const end = offset + length;
    if (end > budget.bytes) {
      throw new ArrowCDeviceError(`metadata ${what()} at byte offset ${at}: length ${length} takes the metadata past the ${MAX_METADATA_BYTES} bytes ` +
        `this library reads${budget.bytes < MAX_METADATA_BYTES ? ' in one schema tree' : ''}`);
    }
    if (end > bytes.length) {
      throw new ArrowCDeviceError(`metadata ${what()} at byte offset ${at}: length ${length} runs past the end (${bytes.length - offset} bytes left)`);
    }
    const b = shared ? bytes.slice(offset, end) : bytes.subarray(offset, end);
    let s = lenient.decode(b);
    if (s.includes('\uFFFD')) s = decodeEscaped(b);
    offset = end;
    return s;
  };

  const count = readInt32(() => 'pair count');
  if (count > MAX_METADATA_PAIRS) {
    throw new ArrowCDeviceError(`metadata pair count: ${count} pairs, more than the ${MAX_METADATA_PAIRS} this library reads`);
  }
  const result = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const empty = offset + 8 <= bytes.length && view.getUint32(offset) === 0 && view.getUint32(offset + 4) === 0
      ? emptyPairsAt(bytes, offset, count - i) : 0;
    if (empty > 0) {
      result.set('', '');
      offset += 8 * empty;
      i += empty - 1;
      continue;
    }
    const key = readString(() => `key ${i}`);
    result.set(key, readString(() => `value ${i} (key '${key}')`));
  }
  budget.bytes -= offset;
  return result;
}

/**
 * Decodes the metadata at `address` of an address space (a pointer read from
 * a struct), naming `what` in every error: an address outside the space is
 * the library's error, not a RangeError of the view over it.
 */
export function decodeMetadataAt(space: Pick<AddressSpace, 'bytes'>, address: number, what: string,
  budget: MetadataBudget = { bytes: MAX_METADATA_BYTES }): Metadata {
  const memory = space.bytes;
  const limit = memory.byteLength;
  const countBytes = Int32Array.BYTES_PER_ELEMENT; // the pair count, read first
  if (!Number.isSafeInteger(address) || address <= 0 || address + countBytes > limit) {
    throw new ArrowCDeviceError(`${what}: address ${address} (+${countBytes} bytes) is outside the memory of ${limit} bytes`, EINVAL, what);
  }
  try {
    return decodeMetadataCounted(memory.subarray(address), budget);
  } catch (e) {
    if (e instanceof ArrowCDeviceError) throw new ArrowCDeviceError(`${what}: ${e.message}`, e.errno, { path: e.path ?? what, level: e.level, layout: e.layout });
    throw e;
  }
}

/**
 * The encoded metadata at `address` of an address space, copied byte for
 * byte (keys and values as they are, UTF-8 or not), after checking that its
 * pair count and every length stay within the space.
 */
export function metadataBytesAt(space: Pick<AddressSpace, 'bytes'>, address: number, what: string): Uint8Array {
  const memory = space.bytes;
  const limit = memory.byteLength;
  const view = new DataView(memory.buffer, memory.byteOffset, memory.byteLength);
  // Names are built only for an error: this loop may run for every pair of a large count.
  const nameOf = (i: number) => (i < 0 ? 'the pair count' : `${i % 2 === 0 ? 'key' : 'value'} ${i >> 1}'s length`);
  let at = address;
  const length = (i: number): number => {
    if (!Number.isSafeInteger(at) || at <= 0 || at + 4 > limit) {
      throw new ArrowCDeviceError(`${what}: ${nameOf(i)} at ${at} (+4 bytes) is outside the memory of ${limit} bytes`, EINVAL, what);
    }
    const v = view.getInt32(at, true);
    if (v < 0) throw new ArrowCDeviceError(`${what}: ${nameOf(i)} is ${v}, expected a non-negative length`, EINVAL, what);
    at += 4;
    return v;
  };
  const count = length(-1);
  // Every pair takes at least its two lengths: a count that cannot fit is refused before the walk.
  if (count > (limit - at) / 8) {
    throw new ArrowCDeviceError(`${what}: a pair count of ${count} needs at least ${count * 8} bytes, past the memory of ${limit} bytes`, EINVAL, what);
  }
  if (count > MAX_METADATA_PAIRS) {
    throw new ArrowCDeviceError(`${what}: a pair count of ${count}, more than the ${MAX_METADATA_PAIRS} this library reads`, EINVAL, what);
  }
  for (let i = 0; i < count * 2; i++) {
    // Runs of empty pairs over zeroed memory are skipped in words (see emptyPairsAt).
    if (i % 2 === 0) {
      const empty = at + 8 <= limit && view.getUint32(at) === 0 && view.getUint32(at + 4) === 0
        ? emptyPairsAt(memory, at, count - i / 2) : 0;
      if (empty > 0) {
        at += 8 * empty;
        i += 2 * empty - 1;
        continue;
      }
    }
    // Not `at += length(i)`: that would add to the value `at` had before length() moved it past the length.
    const n = length(i);
    at += n;
    if (at - address > MAX_METADATA_BYTES) {
      throw new ArrowCDeviceError(`${what}: ${i % 2 === 0 ? 'key' : 'value'} ${i >> 1} takes the metadata past the ${MAX_METADATA_BYTES} bytes this library reads`, EINVAL, what);
    }
    if (at > limit) throw new ArrowCDeviceError(`${what}: ${i % 2 === 0 ? 'key' : 'value'} ${i >> 1} runs past the memory of ${limit} bytes`, EINVAL, what);
  }
  return memory.slice(address, at);
}
