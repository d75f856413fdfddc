// Issue 11, item 2, view mode: imports { from } another wasm module with
// mode 'view' read typed arrays over that module's memory (no byte of a
// buffer is copied), after the C validator checked the struct there through
// the foreign window (csrc/abi/window.c). The producers: test/foreign/producer.c
// built by emcc as a module of its own, and every gold file exported { into }
// such a module by this library, then read back from its memory.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { EINVAL, ENOSYS } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { compareBatches, schemaDifferences } from '../ts/arrow-js/compare.js';
import { rawValues } from '../ts/model/raw-values.js';
import { error, instantiate, producerWasm } from './foreign/module.js';
import { goldFiles, goldLevel } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  producerWasm();
  acd = await ArrowCDevice.load();
}, 120_000);

const expected = (length: number, offset: number) =>
  Array.from({ length }, (_, i) => (((i + offset) % 3 === 2) ? null : 10 + i + offset));

function produce(length = 7, offset = 2) {
  const p = instantiate();
  const from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
  return { p, from, schema: p.make_schema(), array: p.make_array(BigInt(length), BigInt(offset)) };
}

describe("a C producer's column in view mode", () => {
  test.each(['none', 'minimal', 'default', 'full'] as const)('validated at %s: views over its memory, moved out of the caller\'s struct, released through its table on release()', (validate) => {
    const { p, from, schema, array } = produce();
    const v = acd.importVector(schema, array, { from, mode: 'view', validate });
    expect([...v.value]).toEqual(expected(7, 2));
    const data = v.value.data[0];
    // No copy: the values and the validity bitmap are views over the producer's memory.
    expect(data.values.buffer).toBe(p.memory.buffer);
    expect(data.nullBitmap!.buffer).toBe(p.memory.buffer);
    const s = from.space.structs;
    const buffers = s.ptr('ArrowArray', array, 'buffers');
    const address = s.ptrAt(buffers + 4); // the producer's own address of its values
    expect(data.values.byteOffset - address).toBeGreaterThanOrEqual(0);
    expect(data.values.byteOffset - address).toBeLessThanOrEqual(2 * 4); // at most past the slice offset
    // The schema was copied and released at once; the array is moved: the caller's struct is marked released.
    expect(s.ptr('ArrowSchema', schema, 'release')).toBe(0);
    expect(s.ptr('ArrowArray', array, 'release')).toBe(0);
    expect(p.released_count()).toBe(1);
    v.release();
    expect(p.released_count()).toBe(2);
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('its memory grows: the value is rebuilt over the new buffer, with the same values', () => {
    const { p, from, schema, array } = produce(5, 1);
    const v = acd.importVector(schema, array, { from, mode: 'view', validate: 'full' });
    const before = v.value.data[0].values;
    p.memory.grow(2);
    expect(before.byteLength).toBe(0); // detached
    expect(v.value.data[0].values.buffer).toBe(p.memory.buffer);
    expect([...v.value]).toEqual(expected(5, 1));
    v.release();
    expect(p.released_count()).toBe(2);
  });

  test('importRaw, a CPU ArrowDeviceArray, and a pull stream, in view mode', () => {
    const { p, from, schema, array } = produce(4, 0);
    const s = acd.importSchema(schema, { from });
    const raw = acd.importRaw(s, array, { from, mode: 'view', validate: 'full' });
    expect(rawValues(raw.value.array)).toEqual(expected(4, 0));
    expect(raw.value.array.buffers[1]!.buffer).toBe(p.memory.buffer);
    raw.release();
    s.release();

    const x = produce(5, 1);
    const st = x.from.space.structs;
    const device = x.from.space.allocator!.alloc(st.size('ArrowDeviceArray'));
    x.from.space.bytes.copyWithin(device, x.array, x.array + st.size('ArrowArray'));
    st.setI64('ArrowDeviceArray', device, 'device_id', -1);
    x.from.space.view.setInt32(device + st.offsetOf('ArrowDeviceArray', 'device_type'), 1, true);
    st.setPtr('ArrowArray', x.array, 'release', 0);
    const d = acd.importDeviceRaw(x.schema, device, { from: x.from, mode: 'view', validate: 'full' });
    expect(rawValues(d.value.array)).toEqual(expected(5, 1));
    expect(d.value.array.buffers[1]!.buffer).toBe(x.p.memory.buffer);
    expect(st.ptr('ArrowArray', device, 'release')).toBe(0);
    d.release();
    x.from.space.allocator!.free(device);

    const y = instantiate();
    const yf = acd.foreign(y as unknown as Record<string, unknown>, 'producer');
    const reader = acd.importArrayStream(y.make_stream(3n, -1n), { from: yf, mode: 'view', validate: 'full' });
    const batches = reader.readAll();
    expect(batches.map((b) => b.toArray().map((r) => (r.toJSON() as { x: number }).x))).toEqual([[0, 1, 2], [10, 11, 12], [20, 21, 22]]);
    for (const b of batches) expect(b.getChildAt(0)!.data[0].values.buffer).toBe(y.memory.buffer);
    reader.release();
    expect(acd.bytesAllocated()).toBe(0);
    for (const q of [p, x.p]) expect(q.live_blocks()).toBeGreaterThanOrEqual(0);
  });

  test('content the validator reads in its memory: a bad offset, a null count, caught at the level that reads it; nothing moved', () => {
    const { p, from, schema, array } = produce(6, 0);
    from.space.structs.setI64('ArrowArray', array, 'null_count', 0);
    // At 'default' the null count is not recounted: that pair imports (and is released: 2 calls).
    acd.importVector(p.make_schema(), p.make_array(2n, 0n), { from, mode: 'view', validate: 'default' }).release();
    const err = error(() => acd.importVector(schema, array, { from, mode: 'view', validate: 'full' }));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe('producer: root.null_count: expected 2 (the 0 bits of the validity bitmap), found 0');
    expect(from.space.structs.ptr('ArrowArray', array, 'release')).not.toBe(0); // not moved: still the caller's
    from.space.structs.setI64('ArrowArray', array, 'length', 1e9);
    expect(error(() => acd.importVector(schema, array, { from, mode: 'view' })).message)
      .toMatch(/^producer: root\.buffers\[0\]: expected 1000000000 validity bits \(125000000 bytes\), found 0x[0-9a-f]+ \(address \d+ of the other module's memory, whose checked part ends at \d+\)$/);
    expect(p.released_count()).toBe(2); // the two imports' own pair above
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('views over its memory exported back into it: copied right although the allocations grow that memory (and detach the views)', () => {
    const n = 3_000_000;
    const { p, from, schema, array } = produce(n, 5);
    const v = acd.importVector(schema, array, { from, mode: 'view', validate: 'default' });
    const bytes = p.memory.buffer.byteLength;
    const e = acd.exportVector(v.value, 'x', { into: from });
    expect(p.memory.buffer.byteLength).toBeGreaterThan(bytes); // it grew
    const back = acd.importVector(e, { from, validate: 'full' } as never) as unknown as { value: arrow.Vector; release(): void };
    const values = back.value;
    expect(values.length).toBe(n);
    for (const i of [0, 1, 2, n - 2, n - 1]) expect(values.get(i)).toBe(expected(n, 5)[i]);
    back.release();
    e.release();
    v.release();
    expect(from.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test("a release that is no function of its table is refused before anything moves; one of the wrong kind is reported by release(), without a trap; both instances work on", () => {
    const { p, from, schema, array } = produce(4, 0);
    const st = from.space.structs;
    const release = st.ptr('ArrowArray', array, 'release');
    st.setPtr('ArrowArray', array, 'release', 99999);
    const err = error(() => acd.importVector(schema, array, { from, mode: 'view' }));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe("producer: array.release: 99999 is not a function in the module's table");
    expect(st.ptr('ArrowArray', array, 'release')).toBe(99999); // not moved
    st.setPtr('ArrowArray', array, 'release', p.add_ptr()); // int(int, int): the wrong kind
    const v = acd.importVector(p.make_schema(), array, { from, mode: 'view', validate: 'full' });
    expect([...v.value]).toEqual(expected(4, 0));
    const bad = error(() => v.release());
    expect(bad.message).toMatch(/^producer: array\.release: not a function that can be called as void\(struct\*\)/);
    expect(v.released).toBe(true);
    st.setPtr('ArrowArray', array, 'release', release);
    // Both instances work on.
    const w = acd.importVector(schema, p.make_array(3n, 0n), { from, mode: 'view' });
    expect([...w.value]).toEqual(expected(3, 0));
    w.release();
    const e = acd.exportVector(arrow.vectorFromArray([1, 2], new arrow.Int32()), 'x');
    const core = acd.importVector(e as never) as unknown as { value: arrow.Vector; release(): void };
    expect([...core.value]).toEqual([1, 2]);
    core.release();
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a module without an allocator cannot hand over in view mode, and says why', () => {
    const { p, schema, array } = produce();
    const bare = acd.foreign({ memory: p.memory, table: p.__indirect_function_table }, 'bare');
    const err = error(() => acd.importVector(schema, array, { from: bare, mode: 'view' }));
    expect(err.errno).toBe(ENOSYS);
    expect(err.message).toMatch(/^bare: mode 'view' moves the struct within the module's memory and needs its allocator/);
    expect(p.released_count()).toBe(0);
  });
});

// A module whose memory is shared (as a worker's may be): its only code is
// two releases (schema, array) that mark their struct released. Hand-made
// wasm: (import "m" "memory" (memory 1 16 shared)), a table of the two.
const SHARED_RELEASES = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00,
  0x02, 0x0e, 0x01, 0x01, 0x6d, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x03, 0x01, 0x10,
  0x03, 0x03, 0x02, 0x00, 0x00,
  0x04, 0x04, 0x01, 0x70, 0x00, 0x03,
  0x07, 0x09, 0x01, 0x05, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x01, 0x00,
  0x09, 0x08, 0x01, 0x00, 0x41, 0x01, 0x0b, 0x02, 0x00, 0x01,
  // release(p): *(p + 40) = 0 (ArrowSchema.release), *(p + 52) = 0 (ArrowArray.release) on wasm32
  0x0a, 0x15, 0x02, 0x09, 0x00, 0x20, 0x00, 0x41, 0x00, 0x36, 0x02, 0x28, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x41, 0x00, 0x36, 0x02, 0x34, 0x0b,
]);

test("a shared memory: copy mode reads it (the copy is validated after it is taken); view mode is refused, nothing released; growth is seen", () => {
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
  const instance = new WebAssembly.Instance(new WebAssembly.Module(SHARED_RELEASES), { m: { memory } });
  const from = acd.foreign({ memory, table: instance.exports.table as WebAssembly.Table }, 'worker');
  const s = from.space.structs;
  expect(s.offsetOf('ArrowSchema', 'release')).toBe(40);
  expect(s.offsetOf('ArrowArray', 'release')).toBe(52);
  const pair = () => {
    const bytes = from.space.bytes;
    bytes.set([0x69, 0], 1024); // "i"
    s.setPtr('ArrowSchema', 64, 'format', 1024);
    s.setI64('ArrowSchema', 64, 'flags', 2);
    s.setPtr('ArrowSchema', 64, 'release', 1);
    s.setI64('ArrowArray', 128, 'length', 3);
    s.setI64('ArrowArray', 128, 'n_buffers', 2);
    s.setPtr('ArrowArray', 128, 'buffers', 2048);
    from.space.view.setUint32(2052, 4096, true);
    new Int32Array(memory.buffer, 4096, 3).set([1, 2, 3]);
    s.setPtr('ArrowArray', 128, 'release', 2);
  };
  pair();
  const err = error(() => acd.importVector(64, 128, { from, mode: 'view' }));
  expect(err.errno).toBe(EINVAL);
  expect(err.message).toMatch(/^worker: its memory is shared \(a SharedArrayBuffer\): another agent may write it at any time.*use mode: 'copy'/);
  expect(s.ptr('ArrowSchema', 64, 'release')).toBe(1);
  expect(s.ptr('ArrowArray', 128, 'release')).toBe(2);
  const v = acd.importVector(64, 128, { from, validate: 'full' });
  expect([...v.value]).toEqual([1, 2, 3]);
  expect(s.ptr('ArrowSchema', 64, 'release')).toBe(0); // its releases ran, through its table
  expect(s.ptr('ArrowArray', 128, 'release')).toBe(0);
  v.release();
  memory.grow(1);
  expect(from.space.bytes.length).toBe(2 * 65536); // a shared buffer is never detached: its length tells
  expect(acd.bytesAllocated()).toBe(0);
});

// Every gold file (IPC file form; the stream form holds the same batches),
// exported { into } a module, then imported back from its memory at full
// validation (default for the files full rightly refuses), in both modes:
// values, and the schema with its metadata, equal.
const ARROW_JS_MISREADS = /^0\.17\.1\/generated_union\./;
describe.each(['view', 'copy'] as const)('every gold file, exported into a module and read back from its memory in %s mode', (mode) => {
  const files = goldFiles().filter(([name]) => name.endsWith('.arrow_file') && !ARROW_JS_MISREADS.test(name));
  test('the cases are there', () => expect(files.length).toBeGreaterThan(25));
  test.each(files)('%s', (name, path) => {
    const table = arrow.tableFromIPC(readFileSync(path));
    const p = instantiate();
    const into = acd.foreign(p as unknown as Record<string, unknown>, 'module');
    table.batches.forEach((batch, i) => {
      const e = acd.exportBatch(batch, { into });
      const back = acd.importBatch(e.schema, e.array, { from: into, mode, validate: goldLevel(name) });
      expect(compareBatches(batch, back.value, i)).toEqual([]);
      expect(schemaDifferences(batch, back.value)).toEqual([]);
      if (mode === 'copy') {
        back.release();
        e.release();
        return;
      }
      // Every buffer of every column is a view over the module's memory.
      const views = (d: arrow.Data): boolean => [d.values, d.valueOffsets, d.nullBitmap, d.typeIds]
        .every((b) => b === undefined || b === null || b.byteLength === 0 || b.buffer === p.memory.buffer) &&
        d.children.every(views) && (d.dictionary === undefined || d.dictionary.data.every(views));
      expect(back.value.data.children.every(views)).toBe(true);
      back.release();
      e.release();
    });
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });
});
