// Copy-mode imports copy every buffer of a batch out of wasm memory at once
// (ts/model/raw.ts, copied()): one slice of the range holding them when they
// are 8-byte aligned and close together, else each to an aligned place of one
// new buffer. Whichever way, the copies must be the batch's values, aligned for
// apache-arrow's typed arrays (a buffer that is not aligned in memory, which a
// view cannot take, imports in copy mode), and independent of wasm memory.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import * as t from '../ts/model/types.js';
import { bytesMark, core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

const batchOf = (n: number) => new arrow.Table({
  a: arrow.makeVector(Int32Array.from({ length: n }, (_, i) => i * 3 - 7)),
  b: arrow.makeVector(Float64Array.from({ length: n }, (_, i) => i / 4)),
  s: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : `v${i}`)), new arrow.Utf8()),
}).batches[0]!;

const rows = (b: arrow.RecordBatch) => b.toArray().map((r) => JSON.stringify(r));

describe('copy-mode import', () => {
  test('the copies hold the values after the export is released and its memory overwritten', () => {
    mark();
    const batch = batchOf(1000);
    const e = acd.exportBatch(batch);
    const imported = acd.importBatch(e.schema, e.array, { mode: 'copy' });
    e.release();
    // Memory the released buffers had: allocated again and overwritten.
    const junk = acd.core.alloc(1 << 16);
    acd.core.bytes.fill(0xab, junk, junk + (1 << 16));
    expect(rows(imported.value)).toEqual(rows(batch));
    for (const column of imported.value.data.children) {
      for (const b of [column.values, column.valueOffsets, column.nullBitmap]) {
        if (b !== undefined && b !== null && b.byteLength > 0) expect(b.buffer).not.toBe(acd.memory.buffer);
      }
    }
    acd.core.free(junk);
    imported.release();
  });

  test('a buffer that is not 8-byte aligned in memory: a view is refused, a copy is aligned and right', () => {
    mark();
    const values = Int32Array.from({ length: 64 }, (_, i) => i * i);
    const field = t.field('x', t.int32());
    for (const mode of ['view', 'copy'] as const) {
      const e = acd.exportRaw(field, { type: t.int32(), length: 64, nullCount: 0, offset: 0,
        buffers: [null, new Uint8Array(values.buffer)], children: [], dictionary: null });
      // The same values one byte past an aligned block, and buffers[1] pointed there.
      const block = acd.core.alloc(values.byteLength + 8);
      acd.core.bytes.set(new Uint8Array(values.buffer), block + 1);
      const s = acd.core.structs;
      const buffers = s.ptr('ArrowArray', e.array, 'buffers');
      const original = s.ptrAt(buffers + 4);
      acd.core.view.setUint32(buffers + 4, block + 1, true);
      try {
        if (mode === 'view') {
          expect(() => acd.importVector(e.schema, e.array, { mode })).toThrow(ArrowCDeviceError);
          expect(() => acd.importVector(e.schema, e.array, { mode })).toThrow(/not aligned to 4 bytes.*copy mode/);
        } else {
          const v = acd.importVector(e.schema, e.array, { mode });
          expect([...v.value]).toEqual([...values]);
          expect(v.value.data[0]!.values.byteOffset % 8).toBe(0);
          v.release();
        }
      } finally {
        // The producer's release frees its own buffer, not the block.
        if (mode === 'view') acd.core.view.setUint32(buffers + 4, original, true);
        e.release();
        acd.core.free(block);
      }
    }
  });

  test('buffers far apart in memory are copied each to its own aligned place of one buffer', () => {
    mark();
    const batch = batchOf(300);
    const e = acd.exportBatch(batch);
    // Column a's values moved 64 MiB away from the others.
    const s = acd.core.structs;
    const children = s.ptr('ArrowArray', e.array, 'children');
    const column = s.ptrAt(children);
    const buffers = s.ptr('ArrowArray', column, 'buffers');
    const original = s.ptrAt(buffers + 4);
    const far = acd.core.alloc(64 << 20);
    acd.core.bytes.copyWithin(far, original, original + 300 * 4);
    acd.core.view.setUint32(buffers + 4, far, true);
    try {
      const imported = acd.importBatch(e.schema, e.array, { mode: 'copy' });
      expect(rows(imported.value)).toEqual(rows(batch));
      const a = imported.value.data.children[0]!.values as Int32Array;
      const b = imported.value.data.children[1]!.values as Float64Array;
      expect(a.buffer).toBe(b.buffer);
      expect(a.byteOffset % 8).toBe(0);
      expect(b.byteOffset % 8).toBe(0);
      // Not the span from the first buffer to the far one: only the bytes of the buffers.
      expect(a.buffer.byteLength).toBeLessThan(1 << 20);
      imported.release();
    } finally {
      acd.core.view.setUint32(buffers + 4, original, true);
      acd.core.free(far);
      e.release();
    }
  });

  test('a batch of more than 16 MiB: each buffer its own copy', () => {
    mark();
    const n = 2_500_000; // two 8-byte columns: 40 MB
    const batch = new arrow.Table({
      x: arrow.makeVector(Float64Array.from({ length: n }, (_, i) => i * 0.5)),
      y: arrow.makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i) - 7n)),
    }).batches[0]!;
    const e = acd.exportBatch(batch);
    const imported = acd.importBatch(e.schema, e.array, { mode: 'copy' });
    e.release();
    const [x, y] = imported.value.data.children.map((c) => c.values as Float64Array | BigInt64Array);
    expect(x!.buffer).not.toBe(y!.buffer);
    expect(x!.buffer.byteLength).toBe(n * 8);
    for (const i of [0, 1, n >> 1, n - 1]) {
      expect(imported.value.getChildAt(0)!.get(i)).toBe(i * 0.5);
      expect(imported.value.getChildAt(1)!.get(i)).toBe(BigInt(i) - 7n);
    }
    imported.release();
  });
});
