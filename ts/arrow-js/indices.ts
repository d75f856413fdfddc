// A dictionary's 64-bit indices narrowed to int32 for apache-arrow (the
// 'dictionary_index64' conversion of imports, arrow-data.ts): apache-arrow
// holds Dictionary types with 64-bit indices, but its get() passes the BigInt
// index on to a value reader that mixes it with numbers.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { pathText, type Path, type RawArray } from '../model/raw.js';

/**
 * The indices of a raw dictionary array with 64-bit indices as a new
 * Int32Array over its physical slots: every slot read (checkShape checked
 * those against the dictionary), 0 in a null one, whose index may be
 * anything. Read with a DataView: the buffer need not be aligned.
 */
export function narrowedIndices(raw: RawArray, path: Path): Int32Array {
  const phys = raw.offset + raw.length;
  const signed = raw.type.kind === 'dictionary' && raw.type.indexType.signed;
  const b = raw.buffers[1] ?? new Uint8Array(0);
  const what = () => `${pathText(path)}.buffers[1]`;
  if (b.byteLength < phys * 8) throw new ArrowCDeviceError(`${what()}: expected ${phys} indices, found ${b.byteLength >> 3}`, EINVAL, what());
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const validity = raw.buffers[0];
  const out = new Int32Array(phys);
  for (let i = 0; i < phys; i++) {
    if (validity != null && (validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
    const index = signed ? view.getBigInt64(8 * i, true) : view.getBigUint64(8 * i, true);
    if (index < 0n || index > 0x7fffffffn) throw new ArrowCDeviceError(`${what()}: index ${index} at slot ${i} is outside the dictionary`, EINVAL, what());
    out[i] = Number(index);
  }
  return out;
}
