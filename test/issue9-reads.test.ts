// Issue 9, item 5 (wrong exception types): every read of an imported struct is
// bounds-checked, at every validation level, so that a corrupted struct gives
// the library's ArrowCDeviceError naming the place, never a RangeError or
// TypeError, and never a silent read of another slot. Each corruption is made
// through the public API: export, then poke the struct or a buffer in memory.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice, ValidationLevel } from '../ts/api.js';
import { ArrowCDeviceError, EINVAL } from '../ts/abi/errors.js';
import type { RawArray } from '../ts/model/raw.js';
import { rawValues } from '../ts/model/raw-values.js';
import * as t from '../ts/model/types.js';
import { bytesMark, core, MODES } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

const u8 = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const leaf = (type: t.DataType, values: ArrayBufferView, length: number): RawArray =>
  ({ type, length, nullCount: 0, offset: 0, buffers: [null, u8(values)], children: [], dictionary: null });

/** Every value of a vector, read through apache-arrow's getters (nested ones too), as a user would. */
function readAll(v: arrow.Vector): unknown[] {
  return [...v].map((x) => (x !== null && typeof x === 'object' && Symbol.iterator in x ? [...(x as Iterable<unknown>)] : x));
}

/** The error an import and a full read throw (fails the test when both succeed). */
function errorOf(f: () => unknown): ArrowCDeviceError {
  let error: unknown = null;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ArrowCDeviceError);
  expect((error as ArrowCDeviceError).errno).toBe(EINVAL);
  return error as ArrowCDeviceError;
}

/** Address of child i of an ArrowArray. */
function childOf(array: number, i: number): number {
  const s = acd.core.structs;
  return s.ptrAt(s.ptr('ArrowArray', array, 'children') + i * s.layout.pointerSize);
}

/** Address of buffer i of an ArrowArray. */
function bufferOf(array: number, i: number): number {
  const s = acd.core.structs;
  return s.ptrAt(s.ptr('ArrowArray', array, 'buffers') + i * s.layout.pointerSize);
}

const setInt32 = (address: number, i: number, v: number) => acd.core.view.setInt32(address + i * Int32Array.BYTES_PER_ELEMENT, v, true);

describe('item 5: a struct longer than its children', () => {
  const batch = () => new arrow.Table({
    x: arrow.vectorFromArray([1, null, 3, 4], new arrow.Int32()),
    s: arrow.vectorFromArray(['a', 'b', null, 'd'], new arrow.Utf8()),
  }).batches[0];

  test.each(MODES)('item 5: a batch whose length exceeds its columns is an error at validate none, not a RangeError when read (%s)', (mode) => {
    mark();
    const exported = acd.exportBatch(batch());
    acd.core.structs.setI64('ArrowArray', exported.array, 'length', 1500);
    const e = errorOf(() => {
      const h = acd.importBatch(exported.schema, exported.array, { mode, validate: 'none' });
      try { for (const column of h.value.schema.fields.keys()) readAll(h.value.getChildAt(column)!); } finally { h.release(); }
    });
    expect(e.message).toBe('array.children[0]: length 4 is shorter than the 1500 slots the struct refers to');
    exported.release();
  });

  test('item 5: the same through a device batch', () => {
    mark();
    const device = acd.exportDeviceBatch(batch());
    const array = device.array + acd.core.structs.offsetOf('ArrowDeviceArray', 'array');
    acd.core.structs.setI64('ArrowArray', array, 'length', 2790);
    const e = errorOf(() => acd.importDeviceBatch(device.schema, device.array, { mode: 'copy', validate: 'none' }).release());
    expect(e.message).toBe('array.children[0]: length 4 is shorter than the 2790 slots the struct refers to');
    device.release();
  });
});

describe('item 5: references a validator at default does not follow', () => {
  test.each(MODES)('item 5: a middle list offset past the child is an error at default, not a RangeError when read (%s)', (mode) => {
    mark();
    const lists = arrow.vectorFromArray([[1], [2, 3], [], [4]], new arrow.List(new arrow.Field('item', new arrow.Int32())));
    const exported = acd.exportVector(lists);
    setInt32(bufferOf(exported.array, 1), 2, 209642155); // the offset between slots 1 and 2
    const e = errorOf(() => {
      const h = acd.importVector(exported.schema, exported.array, { mode, validate: 'default' });
      try { readAll(h.value); } finally { h.release(); }
    });
    expect(e.message).toBe('array.buffers[1]: offset 209642155 at slot 2 is outside array.children[0] of length 4');
    exported.release();
  });

  test.each(MODES)('item 5: a middle string offset past the values reads within the buffer at default, and is an error at full (%s)', (mode) => {
    mark();
    const strings = (offsets: [number, number][]) => {
      const e = acd.exportVector(arrow.vectorFromArray(['ab', 'cd', 'ef'], new arrow.Utf8()));
      for (const [slot, value] of offsets) setInt32(bufferOf(e.array, 1), slot, value);
      return e;
    };
    // 'default' reads no middle offset; apache-arrow's string reads clamp to
    // the 6-byte buffer: wrong strings, every byte from the input, no exception.
    for (const [offsets, expected] of [[[[1, 1000]], ['abcdef', '', 'ef']], [[[1, 5], [2, 1]], ['abcde', '', 'bcdef']]] as const) {
      const a = strings(offsets as unknown as [number, number][]);
      const h = acd.importVector(a.schema, a.array, { mode, validate: 'default' });
      expect(readAll(h.value)).toEqual(expected);
      h.release();
      a.release();
    }
    const far = strings([[1, 1000]]);
    expect(errorOf(() => acd.importVector(far.schema, far.array, { mode, validate: 'full' }).release()).message).toMatch(/1000/);
    far.release();
    const back = strings([[1, 5], [2, 1]]);
    expect(errorOf(() => acd.importVector(back.schema, back.array, { mode, validate: 'full' }).release()).message).toMatch(/offsets/);
    back.release();
  });

  test.each(MODES)('item 5: a dictionary index past the dictionary reads as null at default, and is an error at full (%s)', (mode) => {
    mark();
    const dictionary = (indices: [number, number][]) => {
      const e = acd.exportVector(arrow.vectorFromArray(['x', 'y', 'x', null, 'z'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())));
      for (const [slot, value] of indices) setInt32(bufferOf(e.array, 1), slot, value);
      return e;
    };
    const a = dictionary([[4, 7]]);
    const h = acd.importVector(a.schema, a.array, { mode, validate: 'default' });
    expect(readAll(h.value)).toEqual(['x', 'y', 'x', null, null]);
    h.release();
    a.release();
    const b = dictionary([[4, 7]]);
    expect(errorOf(() => acd.importVector(b.schema, b.array, { mode, validate: 'full' }).release()).message).toMatch(/7/);
    b.release();
    // A null slot's index is never read: any value there is fine, at full too.
    const c = dictionary([[4, 2], [3, -99]]);
    const ok = acd.importVector(c.schema, c.array, { mode, validate: 'full' });
    expect(readAll(ok.value)).toEqual(['x', 'y', 'x', null, 'z']);
    ok.release();
    c.release();
  });

  test.each(MODES)('item 5: a dense union offset or type id out of range is an error at default, not a TypeError (%s)', (mode) => {
    mark();
    const type = t.denseUnion([t.field('i', t.int32()), t.field('s', t.utf8())], [3, 5]);
    const raw: RawArray = {
      type, length: 3, nullCount: 0, offset: 0, dictionary: null,
      buffers: [Uint8Array.from([3, 5, 3]), u8(Int32Array.from([0, 0, 1]))],
      children: [leaf(t.int32(), Int32Array.from([10, 20]), 2),
        { type: t.utf8(), length: 1, nullCount: 0, offset: 0, buffers: [null, u8(Int32Array.from([0, 2])), u8(new TextEncoder().encode('hi'))], children: [], dictionary: null }],
    };
    /** Exports raw, pokes the export, imports and reads it; the export is released after. */
    const run = (validate: ValidationLevel, poke: (array: number) => void) => {
      const exported = acd.exportRaw(t.field('u', type), raw);
      poke(exported.array);
      try {
        const h = acd.importVector(exported.schema, exported.array, { mode, validate });
        try { return readAll(h.value); } finally { h.release(); }
      } finally {
        exported.release();
      }
    };
    expect(run('default', () => undefined)).toEqual([10, 'hi', 20]);
    // Child 0 has 2 values.
    const e = errorOf(() => run('default', (array) => setInt32(bufferOf(array, 1), 2, 2)));
    expect(e.message).toBe('array.buffers[1]: offset 2 at slot 2 is outside array.children[0] of length 2');
    const ids = errorOf(() => run('none', (array) => { acd.core.bytes[bufferOf(array, 0) + 1] = 4; }));
    expect(ids.message).toBe('array.buffers[0]: slot 1 has type id 4, expected one of 3, 5');
  });

  test.each(MODES)('item 5: a binary view naming a missing buffer is an error at default, not a plain Error (%s)', (mode) => {
    mark();
    const long = new TextEncoder().encode('a string longer than twelve bytes');
    const views = new Int32Array(8);
    views.set([2, 0x6968, 0, 0]); // "hi", inline
    views.set([long.length, 0, 0, 0], 4); // buffer 0, offset 0
    const raw: RawArray = {
      type: t.utf8View(), length: 2, nullCount: 0, offset: 0, dictionary: null, children: [],
      buffers: [null, u8(views), long, u8(BigInt64Array.from([BigInt(long.length)]))],
    };
    const run = (validate: ValidationLevel, poke: (views: number) => void) => {
      const exported = acd.exportRaw(t.field('v', t.utf8View()), raw);
      poke(bufferOf(exported.array, 1));
      try {
        const h = acd.importVector(exported.schema, exported.array, { mode, validate });
        try { return readAll(h.value); } finally { h.release(); }
      } finally {
        exported.release();
      }
    };
    expect(run('default', () => undefined)).toEqual(['hi', 'a string longer than twelve bytes']);
    const e = errorOf(() => run('default', (views) => setInt32(views, 6, 3))); // view 1's buffer index
    expect(e.message).toBe('array.buffers[1]: view 1 names buffer 3, expected one in [0, 1)');
    const past = errorOf(() => run('none', (views) => setInt32(views, 7, 30))); // view 1's offset in buffer 0
    expect(past.message).toBe(`array.buffers[2]: view 1 reads bytes [30, ${30 + long.length}), outside the ${long.length}-byte buffer`);
  });

  test.each(MODES)('item 5: run ends that do not cover the array are an error when converted (%s)', (mode) => {
    mark();
    const type = t.runEndEncoded(t.int32(), t.int32());
    const raw: RawArray = {
      type, length: 5, nullCount: 0, offset: 0, buffers: [], dictionary: null,
      children: [leaf(t.int32(), Int32Array.from([2, 5]), 2), leaf(t.int32(), Int32Array.from([7, 8]), 2)],
    };
    const run = (poke: (runEnds: number) => void) => {
      const exported = acd.exportRaw(t.field('r', type), raw);
      poke(bufferOf(childOf(exported.array, 0), 1));
      try {
        const h = acd.importVector(exported.schema, exported.array, { mode, validate: 'none', convert: ['run_end_encoded'] });
        try { return readAll(h.value); } finally { h.release(); }
      } finally {
        exported.release();
      }
    };
    expect(run(() => undefined)).toEqual([7, 7, 8, 8, 8]);
    const short = errorOf(() => run((runEnds) => setInt32(runEnds, 1, 3))); // the last run ends at 3 of 5
    expect(short.message).toBe('array.children[0].buffers[1]: the last run ends at 3, before the 5 slots of array');
    const back = errorOf(() => run((runEnds) => setInt32(runEnds, 1, 1)));
    expect(back.message).toBe('array.children[0].buffers[1]: run end 1 at run 1 is not greater than the one before it (2)');
  });
});

describe('item 5: negative offsets and lengths at validate none', () => {
  test.each(MODES)('item 5: a child offset of -1 is an error on the raw, vector and batch routes, not a RangeError (%s)', (mode) => {
    mark();
    const type = t.runEndEncoded(t.int32(), t.utf8());
    const raw: RawArray = {
      type, length: 3, nullCount: 0, offset: 0, buffers: [], dictionary: null,
      children: [leaf(t.int32(), Int32Array.from([2, 3]), 2),
        { type: t.utf8(), length: 2, nullCount: 0, offset: 0, buffers: [null, u8(Int32Array.from([0, 1, 2])), new TextEncoder().encode('ab')], children: [], dictionary: null }],
    };
    const exported = acd.exportRaw(t.field('r', type), raw);
    acd.core.structs.setI64('ArrowArray', childOf(exported.array, 0), 'offset', -1);
    const e = errorOf(() => {
      const h = acd.importRaw(exported.schema, exported.array, { mode, validate: 'none' });
      try { rawValues(h.value.array); } finally { h.release(); }
    });
    expect(e.message).toBe('array.children[0].offset: expected a non-negative value, found -1');
    exported.release();

    const lists = acd.exportVector(arrow.vectorFromArray([[1], [2, 3]], new arrow.List(new arrow.Field('item', new arrow.Int32()))));
    acd.core.structs.setI64('ArrowArray', childOf(lists.array, 0), 'offset', -1);
    const v = errorOf(() => {
      const h = acd.importRaw(lists.schema, lists.array, { mode, validate: 'none' });
      try { rawValues(h.value.array); } finally { h.release(); }
    });
    expect(v.message).toBe('array.children[0].offset: expected a non-negative value, found -1');
    acd.core.structs.setI64('ArrowArray', childOf(lists.array, 0), 'offset', 0);
    acd.core.structs.setI64('ArrowArray', lists.array, 'length', -3);
    const n = errorOf(() => acd.importVector(lists.schema, lists.array, { mode, validate: 'none' }).release());
    expect(n.message).toBe('array.length: expected a non-negative value, found -3');
    lists.release();
  });

  test('item 5: the raw value reader checks negative slots too (a raw array made by hand)', () => {
    const runEnds: RawArray = { ...leaf(t.int32(), Int32Array.from([2, 3]), 2), offset: -1 };
    const raw: RawArray = {
      type: t.runEndEncoded(t.int32(), t.int32()), length: 3, nullCount: 0, offset: 0, buffers: [], dictionary: null,
      children: [runEnds, leaf(t.int32(), Int32Array.from([7, 8]), 2)],
    };
    expect(errorOf(() => rawValues(raw)).message).toBe('array.children[0].buffers[1]: expected bytes [-4, 0), found a buffer of 8 bytes');
    const ints: RawArray = { ...leaf(t.int64(), BigInt64Array.from([1n, 2n]), 2), offset: -1, length: 3 };
    expect(errorOf(() => rawValues(ints)).message).toBe('array.buffers[1]: expected bytes [-8, 0), found a buffer of 16 bytes');
  });
});

describe('item 5: metadata pointers outside the memory', () => {
  test('item 5: an async producer whose additional_metadata points past the memory fails on_schema with EINVAL naming it', async () => {
    mark();
    const core = acd.core;
    const s = core.structs;
    const consumer = acd.asyncConsumer();
    const size = s.size('ArrowAsyncProducer');
    const producer = core.alloc(size);
    core.bytes.fill(0, producer, producer + size);
    const request = core.addFunction(() => undefined, 'vij');
    const cancel = core.addFunction(() => undefined, 'vi');
    s.setPtr('ArrowAsyncProducer', producer, 'request', request);
    s.setPtr('ArrowAsyncProducer', producer, 'cancel', cancel);
    core.view.setInt32(producer + s.offsetOf('ArrowAsyncProducer', 'device_type'), 1, true);
    const past = acd.memory.buffer.byteLength + 64;
    s.setPtr('ArrowAsyncProducer', producer, 'additional_metadata', past);
    s.setPtr('ArrowAsyncDeviceStreamHandler', consumer.handler, 'producer', producer);
    const schema = acd.exportSchema(new arrow.Schema([new arrow.Field('x', new arrow.Int32())]));
    const code = core.stream.asyncHandlerCallOnSchema(consumer.handler, schema.ptr);
    expect(code).toBe(EINVAL);
    core.stream.asyncHandlerCallRelease(consumer.handler);
    let error: unknown = null;
    try {
      for await (const _ of consumer) { /* no batch comes */ }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    expect((error as Error).message).toMatch(new RegExp(`^on_schema: producer.additional_metadata: address ${past} \\(\\+4 bytes\\) is outside the memory of \\d+ bytes$`));
    consumer.release();
    await consumer.done.catch(() => undefined);
    schema.release();
    core.removeFunction(request);
    core.removeFunction(cancel);
    core.free(producer);
  });
});
