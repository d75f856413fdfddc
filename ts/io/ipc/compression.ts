// Compressed IPC bodies (Message.fbs BodyCompression, method BUFFER): each
// buffer of the body is an int64 uncompressed length (-1: the rest is not
// compressed) followed by an LZ4 frame or a Zstandard frame. What a buffer
// claims is checked before anything is allocated: no more than its codec can
// expand to, and no more than MAX_DECOMPRESSED_BYTES for the whole input.

import { ArrowCDeviceError, EINVAL, ENOMEM, ENOSYS, ERANGE } from '../../abi/errors.js';
import type { Table } from './flatbuffers.js';
import { decodeLz4, LZ4_MAX_RATIO } from './lz4.js';
import { decodeZstd, ZSTD_MAX_RATIO } from './zstd.js';

/** CompressionType of Message.fbs, by value. */
export const CODECS = ['LZ4_FRAME', 'ZSTD'] as const;
export type CodecName = (typeof CODECS)[number];
/** Bytes the compressed buffers of one input (file or stream) may decompress to, together: 4 GiB. */
export const MAX_DECOMPRESSED_BYTES = 2 ** 32;
const PREFIX = 8;

export interface BodyCompression {
  readonly codec: CodecName;
}

/** The BodyCompression of a RecordBatch table, or null for an uncompressed body. */
export function bodyCompression(batch: Table, where: string): BodyCompression | null {
  const compression = batch.table(3, 'compression');
  if (compression === null) return null;
  const value = compression.int8(0, 'codec', 0);
  const codec = CODECS[value];
  if (codec === undefined) throw new ArrowCDeviceError(`${where}: compression codec ${value}, expected 0 (LZ4_FRAME) or 1 (ZSTD)`, EINVAL);
  const method = compression.int8(1, 'method', 0);
  if (method !== 0) throw new ArrowCDeviceError(`${where}: compression method ${method}, expected 0 (BUFFER), the only one the format defines`, ENOSYS);
  return { codec };
}

/** The codecs' decoders: `expected` bytes exactly, or (unknown) at most `cap`. */
export function decode(codec: CodecName, src: Uint8Array, expected: number | undefined, cap: number): Uint8Array {
  try {
    return codec === 'LZ4_FRAME' ? decodeLz4(src, expected, cap) : decodeZstd(src, expected, cap);
  } catch (e) {
    if (e instanceof ArrowCDeviceError) throw e;
    // A RangeError from an allocation that failed.
    if (e instanceof RangeError) throw new ArrowCDeviceError(`${codec}: cannot allocate the output: ${e.message}`, ENOMEM);
    throw new ArrowCDeviceError(`${codec}: ${e instanceof Error ? e.message : String(e)}`, EINVAL);
  }
}

/**
 * One buffer of a compressed body → its bytes: empty stays empty, a length
 * of -1 gives the rest as is (a view), anything else is decompressed to
 * exactly the claimed length. `budget.decompressed` counts the bytes made
 * for the whole input. Throws ArrowCDeviceError with a message the caller
 * prefixes with the buffer's name.
 */
export function decompressBuffer(c: BodyCompression, region: Uint8Array, budget: { decompressed: number }): Uint8Array {
  if (region.byteLength === 0) return region;
  if (region.byteLength < PREFIX) {
    throw new ArrowCDeviceError(`${region.byteLength} bytes, too short for the 8-byte uncompressed length that starts a compressed buffer`, EINVAL);
  }
  const claim = new DataView(region.buffer, region.byteOffset, PREFIX).getBigInt64(0, true);
  const data = region.subarray(PREFIX);
  if (claim === -1n) return data;
  if (claim < 0n) throw new ArrowCDeviceError(`uncompressed length ${claim}, expected -1 (not compressed) or a length`, EINVAL);
  const ratio = c.codec === 'LZ4_FRAME' ? LZ4_MAX_RATIO : ZSTD_MAX_RATIO;
  if (claim > BigInt(data.byteLength) * BigInt(ratio)) {
    throw new ArrowCDeviceError(`uncompressed length ${claim} from ${data.byteLength} bytes of ${c.codec}, which expands at most ${ratio}-fold`, EINVAL);
  }
  const n = Number(claim);
  if (budget.decompressed + n > MAX_DECOMPRESSED_BYTES) {
    throw new ArrowCDeviceError(`uncompressed length ${n} brings the input to ${budget.decompressed + n} decompressed bytes, ` +
      `more than this reader's bound of ${MAX_DECOMPRESSED_BYTES}`, ERANGE);
  }
  budget.decompressed += n;
  return decode(c.codec, data, n, MAX_DECOMPRESSED_BYTES);
}
