// Issue 14: another module's struct trees copied into the core in one pass
// (ts/exchange/foreign-schema.ts, foreign-shadow.ts). A schema tree lies in one block whose
// releases (csrc/model/tree_block.c) keep the spec's rules: any node can be
// moved out and released after the root; a child pointer aimed outside the
// block is not followed. The array's shadow checks every count first. When
// the other memory is the core's own (as the fuzzer sees it), the copies'
// allocations may grow it: the walks read it again through new views.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { coreAsModule, libraryError, twoCores, values } from './helpers.js';

let acd: ArrowCDevice;
let other: ArrowCDevice;
let from: ForeignModule;
beforeAll(async () => {
  ({ acd, other, from } = await twoCores());
});

function batch(): arrow.RecordBatch {
  const dictionary = arrow.vectorFromArray(['a', 'b', 'a', null], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()));
  return new arrow.Table({
    x: arrow.vectorFromArray([1, 2, null, 4], new arrow.Int32()),
    s: arrow.vectorFromArray(['one', null, 'three', 'four'], new arrow.Utf8()),
    d: dictionary,
    l: arrow.vectorFromArray([[1], [], null, [2, 3]], new arrow.List(new arrow.Field('item', new arrow.Int32(), true))),
  }).batches[0]!;
}

const plain = (b: arrow.RecordBatch) => b.schema.fields.map((f) => values(b.getChild(f.name)!));

describe('a schema tree copied into one block', () => {
  test('imported from another module: the same field, and every byte freed on release', () => {
    const before = acd.bytesAllocated();
    const e = other.exportBatch(batch());
    const s = acd.importSchema(e.schema, { from });
    expect(s.schema.fields.map((f) => [f.name, f.type.kind])).toEqual([['x', 'int'], ['s', 'utf8'], ['d', 'dictionary'], ['l', 'list']]);
    s.release();
    e.release();
    expect(acd.bytesAllocated()).toBe(before);
    expect(other.bytesAllocated()).toBe(0);
  });

  test('a child moved out stays valid after the root is released, and its release frees the block', () => {
    const before = acd.bytesAllocated();
    const e = other.exportBatch(batch());
    const s = acd.importSchema(e.schema, { from });
    const st = acd.core.structs;
    const child = st.ptrAt(st.ptr('ArrowSchema', s.ptr, 'children') + 4); // column s
    const moved = acd.core.alloc(st.size('ArrowSchema'));
    acd.core.schemaMove(child, moved);
    s.release();
    expect(st.cString(st.ptr('ArrowSchema', moved, 'format'), 'format')).toBe('u');
    expect(st.cString(st.ptr('ArrowSchema', moved, 'name'), 'name')).toBe('s');
    expect(acd.bytesAllocated()).toBeGreaterThan(before);
    expect(acd.core.schemaRelease(moved)).toBe(0);
    expect(st.ptr('ArrowSchema', moved, 'release')).toBe(0);
    acd.core.free(moved);
    e.release();
    expect(acd.bytesAllocated()).toBe(before);
  });

  test('a child pointer aimed outside the block is not followed: no trap, the block is kept (the safe outcome)', async () => {
    const own = await ArrowCDevice.load();
    const o = coreAsModule(own, other);
    const e = other.exportBatch(batch());
    const s = own.importSchema(e.schema, { from: o });
    const st = own.core.structs;
    const children = st.ptr('ArrowSchema', s.ptr, 'children');
    own.core.view.setUint32(children + 4, 0xfffffff0, true);
    s.release();
    expect(own.bytesAllocated()).toBeGreaterThan(0);
    // The core works on.
    const x = own.exportBatch(batch());
    const back = own.importBatch(x.schema, x.array);
    expect(plain(back.value)).toEqual(plain(batch()));
    back.release();
    x.release();
    e.release();
  });
});

describe("the array's shadow", () => {
  test.each([
    ['a negative n_buffers', 'n_buffers', -1, /^other: array\.children\[1\]\.n_buffers: expected a non-negative count, found -1$/],
    ['an n_children past what a node may have', 'n_children', 2 ** 40, /^other: array\.children\[1\]\.n_children: expected 0 to 8388607, found 1099511627776$/],
  ] as const)('%s is refused, naming the node; nothing moved or released', (_name, field, value, message) => {
    for (const mode of ['view', 'copy'] as const) {
      const before = acd.bytesAllocated();
      const e = other.exportBatch(batch());
      const st = from.space.structs;
      const child = st.ptrAt(st.ptr('ArrowArray', e.array, 'children') + 4);
      const saved = st.i64Big('ArrowArray', child, field);
      st.setI64('ArrowArray', child, field, value);
      const err = libraryError(() => acd.importBatch(e.schema, e.array, { from, mode }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toMatch(message);
      expect(st.ptr('ArrowArray', e.array, 'release')).not.toBe(0);
      expect(st.ptr('ArrowSchema', e.schema, 'release')).not.toBe(0);
      st.setI64('ArrowArray', child, field, saved);
      const back = acd.importBatch(e.schema, e.array, { from, mode });
      expect(plain(back.value)).toEqual(plain(batch()));
      back.release();
      e.release();
      expect(acd.bytesAllocated()).toBe(before);
    }
  });
});

/** Columns enough that neither the schema's copy nor the array's shadow fits the core's scratch area: both are allocated. */
function wideBatch(columns = 5000): arrow.RecordBatch {
  const children = Array.from({ length: columns }, (_, i) => arrow.makeData({ type: new arrow.Int32(), length: 2, nullCount: 0, data: Int32Array.of(i, -i) }));
  const fields = children.map((_, i) => new arrow.Field(`c${i}`, new arrow.Int32(), false));
  const type = new arrow.Struct(fields);
  return new arrow.RecordBatch(new arrow.Schema(fields), arrow.makeData({ type, length: 2, nullCount: 0, children }));
}

describe("the core's own memory seen as another module's", () => {
  test.each(['view', 'copy'] as const)('%s mode: an allocation that grows the memory during the copies', (mode) => {
    const self = acd.foreign({ memory: acd.memory, table: acd.core.table, malloc: (n) => acd.core.alloc(n), free: (p) => acd.core.free(p) }, 'itself');
    const before = acd.bytesAllocated();
    expect(2 * 5000 * acd.core.structs.size('ArrowSchema')).toBeGreaterThan(acd.core.shadowScratch.bytes);
    const source = wideBatch();
    const e = acd.exportBatch(source);
    const core = acd.core;
    const alloc = core.alloc.bind(core);
    let grown = 0;
    // Every allocation of the import grows the memory first, which detaches every view taken before.
    core.alloc = (size: number) => {
      acd.memory.grow(1);
      grown++;
      return alloc(size);
    };
    let imported;
    try {
      imported = acd.importBatch(e.schema, e.array, { from: self, mode });
    } finally {
      core.alloc = alloc;
    }
    expect(grown).toBeGreaterThan(2);
    expect(plain(imported.value)).toEqual(plain(source));
    imported.release();
    e.release();
    expect(acd.bytesAllocated()).toBe(before);
  });
});
