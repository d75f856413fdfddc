// One allocation per exported tree (csrc/model/tree.c): every node of an
// exported ArrowSchema or ArrowArray tree lives in one block, which the last
// node released frees. The spec lets a consumer move children out and release
// them after (or before) their parent: every order must work, moved children
// must stay readable after their parent's release, nothing may leak, and a
// failure after one tree's block was allocated frees it. Also the schema part
// of a batch's export, described once per apache-arrow Schema
// (ts/arrow-js/schema-parts.ts), is not reused once what it was built from
// changed.

import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError, ENOMEM } from '../ts/abi/errors.js';
import { core, values } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});

const s = () => acd.core.structs;
const P = () => s().layout.pointerSize;

/** A batch with a struct column (so that there are grandchildren) and a dictionary column. */
function sample(): arrow.RecordBatch {
  const inner = new arrow.Struct([new arrow.Field('x', new arrow.Int32()), new arrow.Field('y', new arrow.Utf8())]);
  return new arrow.Table({
    a: arrow.vectorFromArray([1, null, 3], new arrow.Int32()),
    st: arrow.vectorFromArray([{ x: 7, y: 'p' }, { x: 8, y: 'q' }, { x: 9, y: 'r' }], inner),
    d: arrow.vectorFromArray(['u', 'v', 'u'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
  }).batches[0];
}

const arrayChild = (ptr: number, i: number) => s().ptrAt(s().ptr('ArrowArray', ptr, 'children') + i * P());
const schemaChild = (ptr: number, i: number) => s().ptrAt(s().ptr('ArrowSchema', ptr, 'children') + i * P());
const released = (struct: 'ArrowArray' | 'ArrowSchema', ptr: number) => s().ptr(struct, ptr, 'release') === 0;

/** Moves the struct at src into a new allocation; returns it. */
function moveOut(struct: 'ArrowArray' | 'ArrowSchema', src: number): number {
  const dst = acd.core.alloc(s().size(struct));
  if (struct === 'ArrowArray') acd.core.arrayMove(src, dst);
  else acd.core.schemaMove(src, dst);
  expect(released(struct, src)).toBe(true);
  return dst;
}

function release(struct: 'ArrowArray' | 'ArrowSchema', ptr: number): void {
  expect(struct === 'ArrowArray' ? acd.core.arrayRelease(ptr) : acd.core.schemaRelease(ptr)).toBe(0);
  expect(released(struct, ptr)).toBe(true);
}

describe('children moved out of an export', () => {
  test('an array child moved out, then the parent released, then the child: the block lives until the child goes', () => {
    const start = acd.bytesAllocated();
    const e = acd.exportBatch(sample());
    const moved = moveOut('ArrowArray', arrayChild(e.array, 1));
    release('ArrowArray', e.array);
    const afterParent = acd.bytesAllocated();
    // The moved child still reads right: its grandchild's values are in the shared block.
    const y = arrayChild(moved, 0);
    const data = s().ptrAt(s().ptr('ArrowArray', y, 'buffers') + P());
    expect(Array.from(new Int32Array(acd.memory.buffer, data, 3))).toEqual([7, 8, 9]);
    expect(s().i64('ArrowArray', moved, 'length')).toBe(3);
    release('ArrowArray', moved);
    expect(acd.bytesAllocated()).toBeLessThan(afterParent);
    acd.core.free(moved);
    e.release();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a schema child moved out, then the parent released, then the child', () => {
    const start = acd.bytesAllocated();
    const e = acd.exportBatch(sample());
    const moved = moveOut('ArrowSchema', schemaChild(e.schema, 2));
    release('ArrowSchema', e.schema);
    expect(s().cString(s().ptr('ArrowSchema', moved, 'name'), 'name')).toBe('d');
    const dictionary = s().ptr('ArrowSchema', moved, 'dictionary');
    expect(s().cString(s().ptr('ArrowSchema', dictionary, 'format'), 'format')).toBe('u');
    release('ArrowSchema', moved);
    acd.core.free(moved);
    e.release();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('every child and a dictionary moved out, released in reverse order before the parent, and after it', () => {
    for (const parentFirst of [false, true]) {
      const start = acd.bytesAllocated();
      const e = acd.exportBatch(sample());
      const moved: number[] = [];
      for (let i = 2; i >= 0; i--) moved.push(moveOut('ArrowArray', arrayChild(e.array, i)));
      // The dictionary of the moved dictionary-encoded column (first moved: children[2]), and a grandchild.
      moved.push(moveOut('ArrowArray', s().ptr('ArrowArray', moved[0], 'dictionary')));
      moved.push(moveOut('ArrowArray', arrayChild(moved[1], 1)));
      if (parentFirst) release('ArrowArray', e.array);
      for (const m of [...moved].reverse()) release('ArrowArray', m);
      if (!parentFirst) {
        expect(acd.bytesAllocated()).toBeGreaterThan(start);
        release('ArrowArray', e.array);
      }
      moved.forEach((m) => acd.core.free(m));
      e.release();
      expect(acd.bytesAllocated()).toBe(start);
    }
  });

  test('a moved child imported (view) outlives the export it came from', () => {
    const start = acd.bytesAllocated();
    const e = acd.exportBatch(sample());
    const schema = moveOut('ArrowSchema', schemaChild(e.schema, 1));
    const array = moveOut('ArrowArray', arrayChild(e.array, 1));
    e.release();
    const v = acd.importVector(schema, array, { mode: 'view' });
    expect(values(v.value)).toEqual([{ x: 7, y: 'p' }, { x: 8, y: 'q' }, { x: 9, y: 'r' }]);
    v.release();
    acd.core.free(schema);
    acd.core.free(array);
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a release reached again through a copy of a released node touches nothing', () => {
    const start = acd.bytesAllocated();
    const e = acd.exportBatch(sample());
    const child = arrayChild(e.array, 0);
    const copy = acd.core.alloc(s().size('ArrowArray'));
    acd.core.bytes.copyWithin(copy, child, child + s().size('ArrowArray'));
    release('ArrowArray', e.array); // releases the child in place, the copy keeps its release
    const before = acd.bytesAllocated();
    expect(acd.core.arrayRelease(copy)).not.toBe(0); // the node is released: refused, nothing freed twice
    expect(acd.bytesAllocated()).toBe(before);
    acd.core.free(copy);
    e.release();
    expect(acd.bytesAllocated()).toBe(start);
  });
});

describe('failures free everything', () => {
  test('the array tree\'s block cannot be allocated after the schema\'s was: ENOMEM naming the array, nothing kept', () => {
    const start = acd.bytesAllocated();
    const c = acd.core;
    // One int32 schema node ("i"), then an array node with a buffer of 4 GiB - 1 MiB: within
    // the block size limit, but more than the allocator can give.
    const words = [0, 1, -1, 0, -1, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, -1, 2 ** 32 - 2 ** 20];
    const ptr = c.alloc((words.length + 2) * 8 + 8);
    try {
      new Float64Array(c.memory.buffer, ptr, words.length).set(words);
      c.bytes[ptr + (words.length + 2) * 8] = 0x69;
      let err: unknown;
      try {
        c.flatExport(ptr, words.length, ptr + (words.length + 2) * 8, 1, s().size('ArrowArray'));
      } catch (x) {
        err = x;
      }
      expect(err).toBeInstanceOf(ArrowCDeviceError);
      expect((err as ArrowCDeviceError).errno).toBe(ENOMEM);
      expect((err as ArrowCDeviceError).message).toMatch(/^array: could not allocate \d+ bytes for its 1 nodes and their buffers$/);
      expect((err as ArrowCDeviceError).path).toBe('array');
    } finally {
      c.free(ptr);
    }
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a failure while the batch is described leaves nothing allocated', () => {
    const start = acd.bytesAllocated();
    const short = arrow.makeData({ type: new arrow.Int32(), length: 10, data: new Int32Array(3) });
    const batch = new arrow.RecordBatch(new arrow.Schema([new arrow.Field('s', short.type)]),
      arrow.makeData({ type: new arrow.Struct([new arrow.Field('s', short.type)]), length: 10, children: [short] }));
    expect(() => acd.exportBatch(batch)).toThrow(/array\.children\[0\]\.buffers\[1\]: expected at least 40 bytes, found 12/);
    expect(acd.bytesAllocated()).toBe(start);
  });
});

describe('the schema part is described once per apache-arrow Schema, and only reused unchanged', () => {
  const roundtrip = (batch: arrow.RecordBatch) => {
    const e = acd.exportBatch(batch);
    const back = acd.importBatch(e.schema, e.array);
    const out = back.value;
    back.release();
    e.release();
    return out;
  };

  test('batches sharing a Schema export it alike; metadata changed in between is seen', () => {
    const start = acd.bytesAllocated();
    const schema = new arrow.Schema([new arrow.Field('a', new arrow.Int32(), true, new Map([['k', 'v']]))], new Map([['s', '1']]));
    const batch = (n: number) => new arrow.RecordBatch(schema, arrow.makeData({
      type: new arrow.Struct(schema.fields), length: 1, children: [arrow.makeData({ type: schema.fields[0].type, length: 1, data: new Int32Array([n]) })],
    }));
    expect(roundtrip(batch(1)).schema.fields[0].metadata.get('k')).toBe('v');
    expect(roundtrip(batch(2)).getChildAt(0)!.get(0)).toBe(2);
    schema.fields[0].metadata.set('k', 'changed');
    schema.metadata.set('added', 'yes');
    const third = roundtrip(batch(3));
    expect(third.schema.fields[0].metadata.get('k')).toBe('changed');
    expect(third.schema.metadata.get('added')).toBe('yes');
    schema.fields[0].metadata.delete('k');
    expect(roundtrip(batch(4)).schema.fields[0].metadata.size).toBe(0);
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('parts described one after the other (in one scratch descriptor) keep their own trees', () => {
    const start = acd.bytesAllocated();
    const make = (name: string, type: arrow.DataType, values: Int32Array | Float64Array, meta: string) => {
      const schema = new arrow.Schema([new arrow.Field(name, type, true, new Map([['which', meta]]))], new Map([['schema', meta]]));
      return new arrow.RecordBatch(schema, arrow.makeData({
        type: new arrow.Struct(schema.fields), length: values.length,
        children: [arrow.makeData({ type, length: values.length, data: values } as arrow.DataProps<arrow.Int32>)],
      }));
    };
    const a = make('first_column_name', new arrow.Int32(), new Int32Array([1, 2]), 'a');
    const b = make('b', new arrow.Float64(), new Float64Array([0.5]), 'a different and longer value');
    // a described, then b (over a's words and strings in the scratch), then a again from its part.
    for (const [batch, name, meta, value] of [[a, 'first_column_name', 'a', 2], [b, 'b', 'a different and longer value', 0.5], [a, 'first_column_name', 'a', 2]] as const) {
      const out = roundtrip(batch);
      expect(out.schema.fields.map((f) => f.name)).toEqual([name]);
      expect(out.schema.fields[0].metadata.get('which')).toBe(meta);
      expect(out.schema.metadata.get('schema')).toBe(meta);
      expect(out.getChildAt(0)!.get(out.numRows - 1)).toBe(value);
    }
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a nested field\'s metadata changed between two exports of one batch is seen', () => {
    const inner = new arrow.Field('x', new arrow.Int8(), true, new Map([['m', '1']]));
    const type = new arrow.Struct([inner]);
    const data = arrow.makeData({ type, length: 1, children: [arrow.makeData({ type: inner.type, length: 1, data: new Int8Array([5]) })] });
    const schema = new arrow.Schema([new arrow.Field('st', type)]);
    const batch = new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: 1, children: [data] }));
    const nested = (b: arrow.RecordBatch) => (b.schema.fields[0].type as arrow.Struct).children[0].metadata.get('m');
    expect(nested(roundtrip(batch))).toBe('1');
    inner.metadata.set('m', '2');
    expect(nested(roundtrip(batch))).toBe('2');
  });

  test('a batch whose column types differ from its schema\'s (as apache-arrow\'s IPC reader can give) exports its data\'s types', () => {
    const schema = new arrow.Schema([new arrow.Field('a', new arrow.Int32())]);
    const make = (type: arrow.DataType, data: ArrayLike<number>) => new arrow.RecordBatch(schema, arrow.makeData({
      type: new arrow.Struct([new arrow.Field('a', type)]), length: 2,
      children: [arrow.makeData({ type, length: 2, data: data as Int32Array })],
    }));
    const int = roundtrip(make(new arrow.Int32(), new Int32Array([1, 2]))).getChildAt(0)!;
    expect(arrow.DataType.isInt(int.type) && int.type.bitWidth === 32).toBe(true);
    const float = roundtrip(make(new arrow.Float64(), new Float64Array([1.5, 2.5])));
    expect(arrow.DataType.isFloat(float.getChildAt(0)!.type)).toBe(true);
    expect(float.getChildAt(0)!.get(1)).toBe(2.5);
  });
});
