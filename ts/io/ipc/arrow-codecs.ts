// The LZ4_FRAME and ZSTD decoders of ./compression.ts for apache-arrow's own
// IPC reader (tableFromIPC, RecordBatchReader), which reads compressed bodies
// only with a codec in its compressionRegistry. Registering changes
// apache-arrow's global state, so it happens when asked (registerCompression),
// never as a side effect of importing this package.

import { compressionRegistry, CompressionType, type Codec } from 'apache-arrow';
import { ArrowCDeviceError } from '../../abi/errors.js';
import { decode, MAX_DECOMPRESSED_BYTES, type CodecName } from './compression.js';

/** The codecs registerCompression made (to tell them from an application's). */
const registered = new WeakSet<Codec>();

function codec(name: CodecName, existing: Codec | null): Codec {
  const encode = existing?.encode;
  return {
    // apache-arrow gives the bytes after the uncompressed length, not the length:
    // the output is bounded by the frames' own sizes and MAX_DECOMPRESSED_BYTES.
    decode(data: Uint8Array): Uint8Array {
      try {
        return decode(name, data, undefined, MAX_DECOMPRESSED_BYTES);
      } catch (e) {
        if (!(e instanceof ArrowCDeviceError)) throw e;
        throw new ArrowCDeviceError(`a ${name} buffer read by apache-arrow: ${e.message}`, e.errno);
      }
    },
    ...(encode === undefined ? {} : { encode: (data: Uint8Array) => encode.call(existing, data) }),
  };
}

/**
 * Registers decoders for LZ4_FRAME and ZSTD bodies into apache-arrow's
 * `compressionRegistry`, so that `tableFromIPC` and `RecordBatchReader` read
 * compressed files (pyarrow's Feather v2 files are LZ4 by default). A codec
 * that already has a `decode` (the application's own) is kept; an encoder
 * registered without a decoder keeps its encoder. Idempotent. Returns the
 * codecs that now decode with this library's decoders.
 *
 * This library's own reader (`readIpc`) needs no registration, and the CLI
 * calls this before it hands a file to apache-arrow. Writing compressed IPC
 * is not provided.
 *
 * Ownership: changes apache-arrow's process-wide registry; nothing to release.
 */
export function registerCompression(): CodecName[] {
  const ours: CodecName[] = [];
  for (const [name, type] of [['LZ4_FRAME', CompressionType.LZ4_FRAME], ['ZSTD', CompressionType.ZSTD]] as const) {
    const existing = compressionRegistry.get(type);
    if (typeof existing?.decode === 'function' && !registered.has(existing)) continue;
    if (existing === null || !registered.has(existing)) {
      const made = codec(name, existing);
      registered.add(made);
      compressionRegistry.set(type, made);
    }
    ours.push(name);
  }
  return ours;
}
