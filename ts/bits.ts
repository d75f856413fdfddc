// Copying into wasm memory, with the checks that keep a short or detached
// source from being read silently.

import { ArrowCDeviceError, EINVAL } from './errors.js';

/** The bytes of a typed array (no copy). */
export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Whether an ArrayBuffer was detached (a view over it can no longer be made). */
export function isDetached(buffer: ArrayBufferLike): boolean {
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** Copies `size` bytes of src (from byte `from`) to dst at `at`; throws when src is too short. */
export function copyBytes(src: ArrayBufferView, from: number, size: number, dst: Uint8Array, at: number, what: string): void {
  if (size === 0) return;
  if (src.byteLength < from + size) {
    const detached = isDetached(src.buffer) ? ' (its buffer is detached: wasm memory grew under a view)' : '';
    throw new ArrowCDeviceError(`${what}: expected at least ${from + size} bytes, found ${src.byteLength}${detached}`, EINVAL);
  }
  dst.set(new Uint8Array(src.buffer, src.byteOffset + from, size), at);
}

/**
 * Copies bits [bitOffset, bitOffset + n) of src to dst at byte `at`, starting
 * at bit 0, and clears the unused high bits of the last byte.
 */
export function copyBits(src: Uint8Array, bitOffset: number, n: number, dst: Uint8Array, at: number, what: string): void {
  const bytes = (n + 7) >> 3;
  if (n === 0) return;
  const first = bitOffset >> 3;
  const shift = bitOffset & 7;
  const need = (bitOffset + n + 7) >> 3;
  if (src.byteLength < need) {
    throw new ArrowCDeviceError(`${what}: expected at least ${need} bitmap bytes, found ${src.byteLength}`, EINVAL);
  }
  if (shift === 0) {
    dst.set(src.subarray(first, first + bytes), at);
  } else {
    for (let i = 0; i < bytes; i++) {
      const lo = src[first + i] >> shift;
      const hi = first + i + 1 < need ? src[first + i + 1] << (8 - shift) : 0;
      dst[at + i] = (lo | hi) & 0xff;
    }
  }
  const tail = n & 7;
  if (tail !== 0) dst[at + bytes - 1] &= (1 << tail) - 1;
}
