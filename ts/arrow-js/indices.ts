// A dictionary's 64-bit indices narrowed to int32 for apache-arrow (the
// 'dictionary_index64' conversion of imports, arrow-data.ts): apache-arrow
// holds Dictionary types with 64-bit indices, but its get() passes the BigInt
// index on to a value reader that mixes it with numbers.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { pathText, type Path, type RawArray } from '../model/raw.js';
import { intAt, isValid } from '../model/raw-values.js';

/**
 * The indices of a raw dictionary array with 64-bit indices as a new
 * Int32Array over its physical slots: every slot read (checkShape checked
 * those against the dictionary), 0 in a null one, whose index may be
 * anything. Read by intAt: the buffer need not be aligned.
 */
export function narrowedIndices(raw: RawArray, path: Path): Int32Array {
  const phys = raw.offset + raw.length;
  const signed = raw.type.kind === 'dictionary' && raw.type.indexType.signed;
  const what = `${pathText(path)}.buffers[1]`;
  const out = new Int32Array(phys);
  for (let i = 0; i < phys; i++) {
    if (!isValid(raw, i)) continue;
    const index = intAt(raw.buffers[1] ?? null, 8, i, signed, what);
    if (index < 0 || index > 0x7fffffff) throw new ArrowCDeviceError(`${what}: index ${index} at slot ${i} is outside the dictionary`, EINVAL, what);
    out[i] = index;
  }
  return out;
}
