// Issue 11, items 2 and 3 (in part): importing from another wasm module
// (copy mode, { from }) and exporting into it ({ into }), against
// test/foreign/producer.c built by emcc as a module of its own: its C code
// produces structs with its allocator and release callbacks, and consumes
// ours, calling our callbacks through its own table. Longer than 400 lines:
// the import and export cases of one producer module share its helpers.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EINVAL, EIO, ENOSYS } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { rawValues } from '../ts/model/raw-values.js';
import { error, instantiate, producerWasm } from './foreign/module.js';

beforeAll(() => { producerWasm(); }, 120_000);

describe('importing from it, copy mode (issue 11, item 2 in part)', () => {
  let acd: ArrowCDevice;
  beforeAll(async () => { acd = await ArrowCDevice.load(); });
  const expected = (length: number, offset: number) =>
    Array.from({ length }, (_, i) => (((i + offset) % 3 === 2) ? null : 10 + i + offset));

  /** A producer instance, its module, and a fresh schema and array of (length, offset). */
  function produce(length = 7, offset = 2) {
    const p = instantiate();
    const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
    return { p, from, schema: p.make_schema(), array: p.make_array(BigInt(length), BigInt(offset)) };
  }

  /** A struct<x> schema in its memory whose child is x.schema (and whose release is the child's kind). */
  function structSchema(x: ReturnType<typeof produce>): number {
    const st = x.from.space.structs;
    const a = x.from.space.allocator!;
    const schema = a.alloc(st.size('ArrowSchema'));
    const format = a.alloc(3);
    x.from.space.bytes.set([0x2b, 0x73, 0], format); // "+s"
    const children = a.alloc(4);
    x.from.space.view.setUint32(children, x.schema, true);
    st.setPtr('ArrowSchema', schema, 'format', format);
    st.setI64('ArrowSchema', schema, 'n_children', 1);
    st.setPtr('ArrowSchema', schema, 'children', children);
    st.setPtr('ArrowSchema', schema, 'release', st.ptr('ArrowSchema', x.schema, 'release'));
    return schema;
  }

  test.each(['default', 'full'] as const)('a sliced int32 column, validated at %s: values copied, its releases called once, nothing left on either side', (validate) => {
    const { p, from, schema, array } = produce();
    const v = acd.importVector(schema, array, { from, validate });
    expect([...v.value]).toEqual(expected(7, 2));
    expect(p.released_count()).toBe(2);
    expect(from.space.structs.ptr('ArrowSchema', schema, 'release')).toBe(0);
    expect(from.space.structs.ptr('ArrowArray', array, 'release')).toBe(0);
    v.release();
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('importRaw and importSchema take { from } too', () => {
    const { p, from, schema, array } = produce(4, 0);
    const s = acd.importSchema(schema, { from });
    expect(s.field.name).toBe('x');
    const raw = acd.importRaw(s, array, { from, validate: 'full' });
    expect(rawValues(raw.value.array)).toEqual(expected(4, 0));
    expect(p.released_count()).toBe(2);
    raw.release();
    s.release();
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  /** A CPU ArrowDeviceArray in the producer's memory holding a fresh array of (5, 1), moved into it. */
  function deviceArrayOf(x: ReturnType<typeof produce>): number {
    const s = x.from.space.structs;
    const device = x.from.space.allocator!.alloc(s.size('ArrowDeviceArray'));
    x.from.space.bytes.copyWithin(device, x.array, x.array + s.size('ArrowArray'));
    s.setI64('ArrowDeviceArray', device, 'device_id', -1);
    x.from.space.view.setInt32(device + s.offsetOf('ArrowDeviceArray', 'device_type'), 1, true);
    s.setPtr('ArrowArray', x.array, 'release', 0); // moved into the device array
    return device;
  }

  /** Imports it (its release called), then frees what the producer allocated. */
  function importAndFree(x: ReturnType<typeof produce>, device: number): void {
    const raw = acd.importDeviceRaw(x.schema, device, { from: x.from });
    expect(rawValues(raw.value.array)).toEqual(expected(5, 1));
    raw.release();
    x.from.space.allocator!.free(device);
    x.p.free_struct(x.schema);
    x.p.free_struct(x.array);
    expect(x.p.live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  }

  test('a CPU ArrowDeviceArray in its memory', () => {
    const x = produce(5, 1);
    importAndFree(x, deviceArrayOf(x));
  });

  test('a CPU ArrowDeviceArray with a sync_event is refused in copy and view mode alike, with nothing released', () => {
    const x = produce(5, 1);
    const s = x.from.space.structs;
    const device = deviceArrayOf(x);
    s.setPtr('ArrowDeviceArray', device, 'sync_event', device); // any non-NULL pointer: the CPU has no event type
    for (const mode of ['copy', 'view'] as const) {
      const e = error(() => acd.importDeviceRaw(x.schema, device, { from: x.from, mode }));
      expect({ mode, code: e.code, message: e.message }).toEqual({ mode, code: 'EINVAL', message: 'producer: sync_event: expected NULL for ARROW_DEVICE_CPU, which has no event type' });
      expect(s.ptr('ArrowArray', device, 'release')).not.toBe(0);
    }
    expect(acd.bytesAllocated()).toBe(0);
    // Nothing was lost: without the event, the same struct imports, and its release is called.
    s.setPtr('ArrowDeviceArray', device, 'sync_event', 0);
    importAndFree(x, device);
  });

  test("two instances of one module: each import reads the memory it names", () => {
    const a = produce(3, 0);
    const b = instantiate();
    const fromB = acd.foreign(b as unknown as Record<string, unknown>, 'b');
    // b's memory at a's addresses holds no live structs.
    expect(error(() => acd.importVector(a.schema, a.array, { from: fromB })).message).toMatch(/^b: schema/);
    const v = acd.importVector(a.schema, a.array, { from: a.from });
    expect([...v.value]).toEqual(expected(3, 0));
    v.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test("'keep' of a device array is refused, with nothing released (view mode: test/foreign-view.test.ts; async streams: test/foreign-async.test.ts)", () => {
    const { p, from, schema, array } = produce();
    expect(error(() => acd.importDeviceBatch(schema, array, { from, device: 'keep' })).errno).toBe(ENOSYS);
    expect(p.released_count()).toBe(0);
  });

  describe('a pull stream in its memory, its callbacks called through its table', () => {
    const rows = (batch: arrow.RecordBatch) => batch.toArray().map((r) => (r.toJSON() as { x: number }).x);

    test('every batch copied, then every release called once; nothing left on either side', () => {
      const p = instantiate();
      const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
      const stream = p.make_stream(3n, -1n);
      const reader = acd.importArrayStream(stream, { from, validate: 'full' });
      expect(from.space.structs.ptr('ArrowArrayStream', stream, 'release')).toBe(0); // moved
      expect(reader.schema.fields.map((f) => f.name)).toEqual(['x']);
      expect(reader.readAll().map(rows)).toEqual([[0, 1, 2], [10, 11, 12], [20, 21, 22]]);
      expect(reader.done).toBe(true);
      reader.release();
      // The stream, the schema and its child, and each batch and its child: all released once.
      expect(p.released_count()).toBe(1 + 2 + 3 * 2);
      p.free_struct(stream);
      expect(p.live_blocks()).toBe(0);
      expect(from.bytesAllocated()).toBe(0);
      expect(acd.bytesAllocated()).toBe(0);
    });

    test("get_next's error, with get_last_error's message; the stream is released", () => {
      const p = instantiate();
      const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
      const stream = p.make_stream(3n, 1n);
      const reader = acd.importArrayStream(stream, { from });
      expect(rows(reader.next().value!)).toEqual([0, 1, 2]);
      const err = error(() => reader.next());
      expect(err.errno).toBe(EIO);
      expect(err.message).toBe('batch 1: producer: get_next: simulated failure in get_next');
      expect(reader.done).toBe(true);
      reader.release();
      p.free_struct(stream);
      expect(p.live_blocks()).toBe(0);
      expect(from.bytesAllocated()).toBe(0);
      expect(acd.bytesAllocated()).toBe(0);
    });

    test('a get_schema of the wrong kind is refused before it runs; the stream is moved back, unreleased', () => {
      const p = instantiate();
      const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
      const stream = p.make_stream(1n, -1n);
      from.space.structs.setPtr('ArrowArrayStream', stream, 'get_schema', p.boom_ptr());
      const err = error(() => acd.importArrayStream(stream, { from }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toBe(`producer: stream.get_schema: function pointer ${p.boom_ptr()} is not a function of signature 'iii' in producer's table`);
      expect(from.space.structs.ptr('ArrowArrayStream', stream, 'release')).not.toBe(0);
      expect(p.released_count()).toBe(0);
      expect(from.bytesAllocated()).toBe(0);
      // Still the caller's: its own release frees it.
      from.space.release('ArrowArrayStream', stream);
      p.free_struct(stream);
      expect(p.live_blocks()).toBe(0);
    });

    test("a get_next in get_schema's slot writes an ArrowArray into room for the largest struct; refused, the stream moved back", () => {
      // get_schema and get_next take (stream, out) alike: the out struct this library allocates in the
      // producer's memory has room for an ArrowDeviceArray, so that a callback in the wrong slot
      // cannot write past it (ts/stream/pull-calls.ts outRoom).
      const p = instantiate();
      const outs: number[] = [];
      const producer = { ...p, malloc: (n: number) => { outs.push(n); return p.malloc(n); } };
      const from = acd.foreign(producer as unknown as Record<string, unknown>, 'producer');
      const stream = p.make_stream(1n, -1n);
      const st = from.space.structs;
      st.setPtr('ArrowArrayStream', stream, 'get_schema', st.ptr('ArrowArrayStream', stream, 'get_next'));
      const err = error(() => acd.importArrayStream(stream, { from }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toMatch(/^producer: schema\./);
      // The stream's own copy and the out struct get_schema filled: the latter with room for the largest.
      const room = Math.max(st.size('ArrowSchema'), st.size('ArrowArray'), st.size('ArrowDeviceArray'));
      expect(outs).toContain(room);
      expect(outs.every((n) => n === st.size('ArrowArrayStream') || n >= room)).toBe(true);
      // Moved back, unreleased. The batch that get_next made in the schema's place cannot be released
      // as a schema (its release is not at a schema's offset): the producer's, leaked by its own mistake.
      // What this library allocated, here and there, is freed.
      expect(st.ptr('ArrowArrayStream', stream, 'release')).not.toBe(0);
      from.space.release('ArrowArrayStream', stream);
      p.free_struct(stream);
      expect(from.bytesAllocated()).toBe(0);
      expect(acd.bytesAllocated()).toBe(0);
    });

    test('a released stream, or one past its memory, is refused', () => {
      const p = instantiate();
      const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
      const stream = p.make_stream(1n, -1n);
      expect(error(() => acd.importArrayStream(from.space.bytes.length, { from })).message)
        .toMatch(/^producer: ArrowArrayStream: address \d+ \(\+20 bytes\) is outside the memory of \d+ bytes$/);
      from.space.release('ArrowArrayStream', stream);
      expect(error(() => acd.importArrayStream(stream, { from })).message).toBe('producer: ArrowArrayStream: released');
    });
  });

  describe.each(['copy', 'view'] as const)('bad input from it, %s mode: the library error naming the place, nothing released, both sides working', (mode) => {
    test.each([
      ['a schema address past its memory', (x: ReturnType<typeof produce>) => ({ schema: x.from.space.bytes.length + 64 }),
        /^producer: schema: address \d+ \(\+48 bytes\) is outside the memory of \d+ bytes$/],
      ['a released schema', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowSchema', x.schema, 'release', 0); return {}; },
        /^producer: schema: expected a live schema, found a released one$/],
      ['a released array', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowArray', x.array, 'release', 0); return {}; },
        /^producer: array: expected a live array, found a released one$/],
      ['a length past its memory', (x: ReturnType<typeof produce>) => { x.from.space.structs.setI64('ArrowArray', x.array, 'length', 1e12); return {}; },
        // Both modes have the C validator check it through the foreign window before anything is read.
        /^producer: root\.buffers\[0\]: expected 10000000000\d\d validity bits \(\d+ bytes\), found 0x[0-9a-f]+ \(address \d+ of the other module's memory, whose checked part ends at \d+\)$/],
      ['a misaligned child array', (x: ReturnType<typeof produce>) => {
        // The array as the only child of a struct array at an odd address.
        const st = x.from.space.structs;
        const parent = x.from.space.allocator!.alloc(st.size('ArrowArray') + 8);
        const child = x.from.space.allocator!.alloc(st.size('ArrowArray') + 8) + 4;
        x.from.space.bytes.copyWithin(child, x.array, x.array + st.size('ArrowArray'));
        const children = x.from.space.allocator!.alloc(4);
        x.from.space.view.setUint32(children, child, true);
        x.from.space.bytes.copyWithin(parent, x.array, x.array + st.size('ArrowArray'));
        st.setI64('ArrowArray', parent, 'n_buffers', 1);
        st.setI64('ArrowArray', parent, 'null_count', 0);
        st.setI64('ArrowArray', parent, 'n_children', 1);
        st.setPtr('ArrowArray', parent, 'children', children);
        return { array: parent, schema: structSchema(x) };
      }, /^producer: array\.children\[0\]: expected a struct ArrowArray aligned to 8 bytes, found \d+$/],
      ['a wild buffers pointer', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowArray', x.array, 'buffers', 0xfffffff0); return {}; },
        /^producer: array\.buffers: address 4294967280 \(\+[48] bytes\) is outside the memory of \d+ bytes$/],
      ['a schema that is its own child', (x: ReturnType<typeof produce>) => {
        const children = x.from.space.allocator!.alloc(4);
        x.from.space.view.setUint32(children, x.schema, true);
        x.from.space.structs.setI64('ArrowSchema', x.schema, 'n_children', 1);
        x.from.space.structs.setPtr('ArrowSchema', x.schema, 'children', children);
        return {};
      }, /^producer: schema\.children\[0\]: the node at \d+ is reached twice \(the tree is a DAG or has a cycle\)$/],
      ['metadata whose pair count cannot fit in its memory', (x: ReturnType<typeof produce>) => {
        const m = x.from.space.allocator!.alloc(4);
        x.from.space.view.setInt32(m, 0x10000000, true);
        x.from.space.structs.setPtr('ArrowSchema', x.schema, 'metadata', m);
        return {};
      }, /^producer: schema\.metadata: a pair count of 268435456 needs at least 2147483648 bytes, past the memory of \d+ bytes$/],
      ['a format the spec does not have', (x: ReturnType<typeof produce>) => {
        const zz = x.from.space.allocator!.alloc(4);
        x.from.space.bytes.set([0x7a, 0x7a, 0], zz);
        x.from.space.structs.setPtr('ArrowSchema', x.schema, 'format', zz);
        return {};
      }, /^producer: .*'zz'/],
    ])('%s', (_name, corrupt, message) => {
      const x = produce();
      const { schema = x.schema, array = x.array } = corrupt(x) as { schema?: number; array?: number };
      const err = error(() => acd.importVector(schema, array, { from: x.from, mode, validate: 'full' }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toMatch(message);
      expect(x.p.released_count()).toBe(0);
      expect(acd.bytesAllocated()).toBe(0);
      // Both sides work on: a fresh pair imports.
      const y = { schema: x.p.make_schema(), array: x.p.make_array(3n, 0n) };
      const v = acd.importVector(y.schema, y.array, { from: x.from, mode });
      expect([...v.value]).toEqual(expected(3, 0));
      v.release();
      expect(acd.bytesAllocated()).toBe(0);
    });

    test('a release of the wrong kind: the copy is dropped, the struct marked released, the error says so', () => {
      const { p, from, schema, array } = produce();
      from.space.structs.setPtr('ArrowSchema', schema, 'release', p.add_ptr());
      const err = error(() => acd.importVector(schema, array, { from }));
      expect(err.errno).toBe(EINVAL);
      expect(err.message).toBe('producer: schema.release: not a function that can be called as void(struct*); the struct was marked released');
      expect(from.space.structs.ptr('ArrowSchema', schema, 'release')).toBe(0);
      expect(p.released_count()).toBe(1); // the array's, before the schema's was tried
      expect(acd.bytesAllocated()).toBe(0);
    });
  });
});

describe('exporting into it (issue 11, item 3 in part)', () => {
  let acd: ArrowCDevice;
  beforeAll(async () => { acd = await ArrowCDevice.load(); });

  function target() {
    const p = instantiate();
    return { p, into: acd.foreign(p as unknown as Record<string, unknown>, 'consumer') };
  }
  const fnv = (values: (string | null)[]) => {
    let h = 2166136261;
    for (const v of values) {
      const bytes = v === null ? [0xff] : [...new TextEncoder().encode(v)];
      for (const b of bytes) h = Math.imul(h ^ b, 16777619) >>> 0;
    }
    return h;
  };

  test('an int32 vector, sliced and with nulls: its C code sums it and releases it through our callbacks in its table', () => {
    const { p, into } = target();
    const tableBefore = p.__indirect_function_table.length;
    const v = arrow.vectorFromArray([5, null, 7, 11, null, 13], new arrow.Int32()).slice(1, 5);
    const e = acd.exportVector(v, 'x', { into });
    expect(e.space).toBe(into.space);
    expect(into.bytesAllocated()).toBeGreaterThan(0);
    // Both callbacks are wasm functions in its table now (installed once).
    expect(p.__indirect_function_table.length).toBe(tableBefore + 2);
    expect(p.sum_int32(e.schema, e.array)).toBe(18n); // [null, 7, 11, null]
    const s = into.space.structs;
    expect(s.ptr('ArrowSchema', e.schema, 'release')).toBe(0);
    expect(s.ptr('ArrowArray', e.array, 'release')).toBe(0);
    e.release(); // the base structs only: their content went with the consumer's releases
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a record batch: the consumer moves a column out, releases the parent, then the column; all freed once', () => {
    const { p, into } = target();
    const table = arrow.tableFromArrays({ a: Int32Array.from([1, 2, 3, 4]), b: ['w', 'x', 'y', 'z'] });
    const e = acd.exportBatch(table.batches[0], { into });
    expect(p.sum_batch_column(e.schema, e.array, 0n)).toBe(10n);
    e.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test('utf8 strings with nulls and an offset, hashed in C', () => {
    const { p, into } = target();
    const values = ['alpha', null, 'βeta', '', 'gamma', null, 'δ'];
    const v = arrow.vectorFromArray(values, new arrow.Utf8()).slice(1);
    const e = acd.exportVector(v, 's', { into });
    expect(p.hash_utf8(e.schema, e.array) >>> 0).toBe(fnv(values.slice(1)));
    e.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test('a CPU ArrowDeviceArray; a simulated device is refused', () => {
    const { p, into } = target();
    const batch = arrow.tableFromArrays({ a: Int32Array.from([4, 5, 6]) }).batches[0];
    const e = acd.exportDeviceBatch(batch, { into });
    expect(into.space.view.getInt32(e.array + into.space.structs.offsetOf('ArrowDeviceArray', 'device_type'), true)).toBe(1);
    expect(p.sum_device_int32(e.schema, e.array)).toBe(15n);
    e.release();
    expect(error(() => acd.exportDeviceBatch(batch, { into, device: 'cuda:0' })).errno).toBe(ENOSYS);
    expect(into.bytesAllocated()).toBe(0);
  });

  test('not consumed: release() of the handle calls our callbacks through its table and frees everything', () => {
    const { into } = target();
    const table = arrow.tableFromArrays({ a: Int32Array.from([1, 2]), d: arrow.vectorFromArray(['u', 'v'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())) });
    const e = acd.exportBatch(table.batches[0], { into });
    const schema = acd.exportSchema(table.schema, { into });
    expect(into.bytesAllocated()).toBeGreaterThan(0);
    e.release();
    schema.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test('what it exports reads back with { from }: a round trip through its memory', () => {
    const { into } = target();
    const table = arrow.tableFromArrays({ a: Int32Array.from([1, 2, 3]), s: ['x', 'y', null] });
    const e = acd.exportBatch(table.batches[0], { into });
    const back = acd.importBatch(e.schema, e.array, { from: into, validate: 'full' });
    expect(back.value.toArray().map((r) => r.toJSON())).toEqual([{ a: 1, s: 'x' }, { a: 2, s: 'y' }, { a: 3, s: null }]);
    back.release();
    e.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a pull stream: its C code drains it through our callbacks in its table, and releases it', () => {
    const { p, into } = target();
    const batches = [0, 1, 2].map((b) => arrow.tableFromArrays({ a: Int32Array.from([b, b * 10, b * 100]), s: ['x', 'y', 'z'] }).batches[0]);
    const slots = p.__indirect_function_table.length;
    const stream = acd.exportArrayStream(batches, { into });
    expect(stream.space).toBe(into.space);
    expect(p.drain_stream(stream.ptr)).toBe(0n + 0n + 0n + 1n + 10n + 100n + 2n + 20n + 200n);
    expect(into.space.structs.ptr('ArrowArrayStream', stream.ptr, 'release')).toBe(0);
    stream.release();
    expect(into.bytesAllocated()).toBe(0);
    // The stream's four callbacks (and the two of the structs) took slots once; a second stream reuses the stream's.
    const again = acd.exportArrayStream(batches, { into });
    expect(p.drain_stream(again.ptr)).toBe(333n);
    again.release();
    expect(p.__indirect_function_table.length).toBe(slots + 4 + 2);
    expect(into.bytesAllocated()).toBe(0);
  });

  test("a stream whose source fails: get_next's code and message reach its C code", () => {
    const { p, into } = target();
    const good = arrow.tableFromArrays({ a: Int32Array.from([1, 2]) }).batches[0];
    const source = (function* () {
      yield good;
      throw new Error('the source broke');
    })();
    const stream = acd.exportArrayStream(source, { into });
    expect(p.drain_stream(stream.ptr)).toBe(-BigInt(EIO));
    const at = p.consumer_message_ptr();
    const message = new TextDecoder().decode(into.space.bytes.subarray(at, into.space.bytes.indexOf(0, at)));
    expect(message).toBe('the source broke');
    stream.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test('a stream not consumed: release() of its handle calls its release through the table', () => {
    const { into } = target();
    const stream = acd.exportDeviceArrayStream([arrow.tableFromArrays({ a: Int32Array.from([1]) }).batches[0]], { into });
    stream.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(error(() => acd.exportDeviceArrayStream([], { into, device: 'cuda:0', schema: new arrow.Schema([new arrow.Field('a', new arrow.Int32())]) })).errno).toBe(ENOSYS);
  });

  test('a module without an allocator or a table cannot be exported into, and says why', () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const noAlloc = acd.foreign({ memory, table: new WebAssembly.Table({ initial: 1, element: 'anyfunc' }) }, 'bare');
    expect(error(() => acd.exportVector(arrow.vectorFromArray([1], new arrow.Int32()), 'x', { into: noAlloc })).message)
      .toBe('into: bare has no allocator (malloc and free), so nothing can be exported into it');
    let next = 8;
    const noTable = acd.foreign({ memory, malloc: (n: number) => { const p = next; next += n + 8; return p; }, free: () => {} }, 'tableless');
    expect(error(() => acd.exportVector(arrow.vectorFromArray([1], new arrow.Int32()), 'x', { into: noTable })).message)
      .toBe('tableless: no function table was given, so no callback can be installed in it');
    const fixed = acd.foreign({ memory, table: new WebAssembly.Table({ initial: 1, maximum: 1, element: 'anyfunc' }), malloc: (n: number) => { const p = next; next += n + 8; return p; }, free: () => {} }, 'fixed');
    expect(error(() => acd.exportVector(arrow.vectorFromArray([1], new arrow.Int32()), 'x', { into: fixed })).message)
      .toMatch(/^fixed: its function table cannot grow \(.*\); callbacks cannot be installed in it: build it with a growable table \(emcc -sALLOW_TABLE_GROWTH\)$/);
  });
});

test("the README's example of exporting into another module runs as written", () => {
  const root = join(__dirname, '..');
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Exporting into another wasm module'));
  const build = /```sh\n([\s\S]*?)```/.exec(section)![1];
  expect(build.replace(/\\\n\s*/g, '')).toBe('emcc -O2 -sSTANDALONE_WASM --no-entry -sALLOW_TABLE_GROWTH -sEXPORTED_FUNCTIONS=_malloc,_free -Icsrc test/foreign/producer.c -o producer.wasm\n');
  const code = /```js\n([\s\S]*?)```/.exec(section)![1];
  const dir = mkdtempSync(join(tmpdir(), 'acd-readme-'));
  writeFileSync(join(dir, 'producer.wasm'), producerWasm()); // built by the same command (test/foreign/module.ts)
  const file = join(dir, 'example.mjs');
  writeFileSync(file, code
    .replace("from 'arrow-c-device'", `from '${join(root, 'dist', 'index.mjs')}'`)
    .replace("from 'apache-arrow'", `from '${join(root, 'node_modules', 'apache-arrow', 'Arrow.node.mjs')}'`));
  expect(execFileSync(process.execPath, [file], { encoding: 'utf8', cwd: dir })).toBe('10n\n0 bytes left in its memory\n');
});
