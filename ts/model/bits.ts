// Bitmaps: copying a run of bits that may not start on a byte boundary.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';

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
    throw new ArrowCDeviceError(`${what}: expected at least ${need} bitmap bytes, found ${src.byteLength}`, EINVAL, what);
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
