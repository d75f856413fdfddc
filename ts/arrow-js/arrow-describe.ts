// apache-arrow Data written straight into an export's flat descriptor
// (ts/model/flat.ts): the common types (fixed width, bool, binary and utf8,
// structs, dictionaries of one chunk) with no raw array in between and no view made of a buffer that
// is copied whole; every other type through fromArrowData. The result is the
// descriptor fromArrowData's raw array would give, word for word
// (test/export-flat.test.ts compares them).

import type * as arrow from 'apache-arrow';
import type { ArrayWriter, Descriptor } from '../model/flat.js';
import { byteWidth, offsetWidth } from '../model/raw.js';
import type { DataType } from '../model/types.js';
import { bits, DICTIONARY, fromData, joinPath, rebasedOffsets, ROOT, tooShort } from './arrow-data.js';

/** The writer of apache-arrow data of the given type (the model's). */
export function arrowWriter(data: arrow.Data, type: DataType): ArrayWriter {
  return (d) => describe(d, data, type, 'array', ROOT);
}

/** Appends the nodes of `data` (at `step` under the node at path `parent`). */
function describe(d: Descriptor, data: arrow.Data, type: DataType, parent: string, step: number): void {
  const n = data.length;
  switch (type.kind) {
    case 'int': case 'float': case 'decimal': case 'date': case 'time': case 'timestamp': case 'duration':
    case 'interval': case 'fixed_size_binary': {
      const nulls = data.nullCount;
      const k = d.node(n, nulls, 0, 2, 0, false);
      validity(d, k, data, n, nulls, parent, step);
      take(d, k, 1, data.values, 0, n * byteWidth(type), parent, step);
      return;
    }
    case 'bool': {
      const nulls = data.nullCount;
      const k = d.node(n, nulls, 0, 2, 0, false);
      validity(d, k, data, n, nulls, parent, step);
      bitsBuffer(d, k, 1, data.values as Uint8Array, data.offset, n, parent, step);
      return;
    }
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const nulls = data.nullCount;
      const k = d.node(n, nulls, 0, 3, 0, false);
      validity(d, k, data, n, nulls, parent, step);
      const width = offsetWidth(type) as 4 | 8;
      const all = data.valueOffsets as Int32Array | BigInt64Array | undefined;
      if (all !== undefined && all.length >= n + 1 && Number(all[0]) === 0) {
        // Offsets from 0 already (the common case): copied as they are.
        d.buffer(k, 1, all, 0, (n + 1) * all.BYTES_PER_ELEMENT);
        take(d, k, 2, data.values, 0, Number(all[n]), parent, step);
      } else {
        const { offsets, first, last } = rebasedOffsets(data, n, width, parent, step);
        d.buffer(k, 1, offsets, 0, offsets.byteLength);
        take(d, k, 2, data.values, first, last - first, parent, step);
      }
      return;
    }
    case 'dictionary': {
      const values = data.dictionary;
      // No dictionary, or one in several chunks (to be joined): the raw path says or does it.
      if (values === undefined || values.data.length !== 1) break;
      const nulls = data.nullCount;
      const k = d.node(n, nulls, 0, 2, 0, true);
      validity(d, k, data, n, nulls, parent, step);
      take(d, k, 1, data.values, 0, n * byteWidth(type), parent, step);
      describe(d, values.data[0], type.valueType, joinPath(parent, step), DICTIONARY);
      return;
    }
    case 'struct': {
      const nulls = data.nullCount;
      const fields = type.children;
      const k = d.node(n, nulls, 0, 1, fields.length, false);
      validity(d, k, data, n, nulls, parent, step);
      const path = joinPath(parent, step);
      for (let i = 0; i < fields.length; i++) describe(d, data.children[i], fields[i].type, path, i);
      return;
    }
  }
  d.array(fromData(data, type, parent, step));
}

/** Buffer 0 of the node at k: NULL without nulls, else the validity bits from bit 0. */
function validity(d: Descriptor, k: number, data: arrow.Data, n: number, nulls: number, parent: string, step: number): void {
  if (nulls <= 0) {
    d.nullBuffer(k, 0);
    return;
  }
  bitsBuffer(d, k, 0, data.nullBitmap, data.offset, n, parent, step);
}

/**
 * Buffer i of the node at k: n bits from bit `bitOffset` of src, moved to
 * bit 0, the bits past n cleared; src's own bytes when they start at a byte
 * (no view is made; the bits past n are cleared in the export's copy), else
 * bits()' copy.
 */
function bitsBuffer(d: Descriptor, k: number, i: number, src: Uint8Array | undefined, bitOffset: number, n: number,
  parent: string, step: number): void {
  const size = (n + 7) >> 3;
  if ((bitOffset & 7) === 0 && src !== undefined && src.byteLength >= (bitOffset >> 3) + size) {
    // Byte-aligned: copied as it is, the bits past the length cleared in the copy.
    d.buffer(k, i, src, bitOffset >> 3, size, n & 7);
    return;
  }
  const out = bits(src, bitOffset, n, parent, step, i);
  d.buffer(k, i, out, 0, out.byteLength);
}

/** Buffer i of the node at k: bytes [from, from + size) of `a`; throws when it is shorter. */
function take(d: Descriptor, k: number, i: number, a: ArrayBufferView | undefined, from: number, size: number,
  parent: string, step: number): void {
  if (size !== 0 && (a === undefined || a.byteLength < from + size)) tooShort(a, from, size, parent, step, i);
  d.buffer(k, i, a ?? EMPTY, from, size);
}

const EMPTY = new Uint8Array(0);
