// Memories of 2 GiB and more: another module's wasm32 memory may be up to
// 4 GiB, so its addresses reach 2^32 − 1, and the core's own memory may grow
// to its 2 GiB cap. Addresses at or above 2^31 are negative as int32 (a
// `>> 2`, a wasm export's i32 result, a wasm caller's i32 argument), and a
// length of 2^32 is 0 as uint32: each of those broke every import { from }
// such a module before. The modules here: a WebAssembly.Memory of 4 GiB
// with a table and a bump allocator whose results come back as a wasm
// export's i32 do (signed), placing every struct and buffer above 3 GiB; and
// the C producer of test/foreign/producer.c built to grow to 4 GB, its own
// malloc's results above 2 GiB.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, ENOSYS } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { instantiate, type Producer } from './foreign/module.js';
import { libraryError } from './helpers.js';

const GiB = 2 ** 30;
const PAGES_4GIB = 65536;

let acd: ArrowCDevice;
let memory: WebAssembly.Memory;
let table: WebAssembly.Table;
let next = 0;
const live = new Map<number, number>();

/** Allocations from `at` on, 64-byte aligned, returned as a wasm export's i32 result is: signed. */
function module(at: number, name: string): ForeignModule {
  next = at;
  return acd.foreign({
    memory, table,
    malloc: (n: number) => {
      const p = next;
      next += Math.ceil(Math.max(n, 1) / 64) * 64;
      live.set(p, n);
      return p | 0;
    },
    free: (p: number) => { live.delete(p >>> 0); },
  }, name);
}

beforeAll(async () => {
  acd = await ArrowCDevice.load();
  memory = new WebAssembly.Memory({ initial: PAGES_4GIB, maximum: PAGES_4GIB });
  table = new WebAssembly.Table({ initial: 1, element: 'anyfunc' });
}, 60_000);

const batchOf = (n: number, k = 0) => arrow.tableFromArrays({
  i: Int32Array.from({ length: n }, (_, j) => j * 3 + k),
  f: Float64Array.from({ length: n }, (_, j) => j / 4),
  s: Array.from({ length: n }, (_, j) => (j % 4 === 3 ? null : `v${j + k}`)),
  d: arrow.vectorFromArray(Array.from({ length: n }, (_, j) => (j % 2 ? 'odd' : 'even')), new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
}).batches[0]!;

const rows = (b: arrow.RecordBatch) => b.toArray().map((r) => JSON.stringify(r.toJSON()));

describe('another module of 4 GiB, its structs and buffers above 3 GiB', () => {
  test('the memory is 4 GiB (its byte length is 2^32, which no uint32 holds)', () => {
    expect(memory.buffer.byteLength).toBe(4 * GiB);
  });

  test.each(['view', 'copy'] as const)('%s mode: exported into it and imported from it at every validation level', (mode) => {
    const big = module(3 * GiB + 4096, 'big');
    const batch = batchOf(50);
    for (const validate of ['none', 'minimal', 'default', 'full'] as const) {
      const e = acd.exportBatch(batch, { into: big });
      expect(e.schema).toBeGreaterThan(3 * GiB);
      expect(e.array).toBeGreaterThan(3 * GiB);
      const got = acd.importBatch(e.schema, e.array, { from: big, mode, validate });
      expect(rows(got.value)).toEqual(rows(batch));
      const values = got.value.getChild('f')!.data[0]!.values;
      // View mode reads in place, above 3 GiB; copy mode reads a copy.
      if (mode === 'view') {
        expect(values.buffer).toBe(memory.buffer);
        expect(values.byteOffset).toBeGreaterThan(3 * GiB);
      } else {
        expect(values.buffer).not.toBe(memory.buffer);
      }
      got.release();
      e.release();
    }
    expect(big.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('metadata, a list, in place, a CPU device array, a vector and a raw import, from above 3 GiB', () => {
    const big = module(3 * GiB + 8192, 'big');
    const t = arrow.tableFromArrays({
      a: Int32Array.from([1, 2, 3]),
      l: arrow.vectorFromArray([[1], [2, 3], null], new arrow.List(new arrow.Field('item', new arrow.Int32()))),
    });
    const schema = new arrow.Schema(t.schema.fields.map((f) => new arrow.Field(f.name, f.type, f.nullable, new Map([['k', `v${f.name}`]]))),
      new Map([['top', 'yes']]));
    const batch = new arrow.RecordBatch(schema, t.batches[0]!.data);
    const metadata = (b: arrow.RecordBatch) => [[...b.schema.metadata], ...b.schema.fields.map((f) => [...f.metadata])];
    const imports = [
      () => { const e = acd.exportBatch(batch, { into: big }); return [acd.importBatch(e.schema, e.array, { from: big, mode: 'view', inPlace: true }), e] as const; },
      () => { const e = acd.exportDeviceBatch(batch, { into: big }); return [acd.importDeviceBatch(e.schema, e.array, { from: big, mode: 'view' }), e] as const; },
      () => { const e = acd.exportDeviceBatch(batch, { into: big }); return [acd.importDeviceBatch(e.schema, e.array, { from: big, mode: 'copy' }), e] as const; },
    ];
    for (const make of imports) {
      const [got, e] = make();
      expect(e.array).toBeGreaterThan(3 * GiB);
      expect(rows(got.value)).toEqual(rows(batch));
      expect(metadata(got.value)).toEqual([[['top', 'yes']], [['k', 'va']], [['k', 'vl']]]);
      got.release();
      e.release();
    }
    const ev = acd.exportVector(t.getChild('l')!, 'l', { into: big });
    const vector = acd.importVector(ev.schema, ev.array, { from: big, mode: 'view' });
    expect([...vector.value].map((x) => (x === null ? null : [...(x as arrow.Vector)]))).toEqual([[1], [2, 3], null]);
    vector.release();
    ev.release();
    const er = acd.exportBatch(batch, { into: big });
    const raw = acd.importRaw(er.schema, er.array, { from: big, mode: 'view' });
    expect(raw.value.array.children.map((c) => c.length)).toEqual([3, 3]);
    expect(raw.value.field.type.kind).toBe('struct');
    raw.release();
    er.release();
    expect(big.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a schema imported once, then batches of it, from above 2 GiB', () => {
    const big = module(2 * GiB + 64, 'big');
    const batches = [batchOf(10, 0), batchOf(20, 1), batchOf(5, 2)];
    const es = batches.map((b) => acd.exportBatch(b, { into: big }));
    const schema = acd.importSchema(es[0]!.schema, { from: big });
    es.forEach((e, k) => {
      const got = acd.importBatch(schema, e.array, { from: big, mode: k === 1 ? 'copy' : 'view' });
      expect(rows(got.value)).toEqual(rows(batches[k]!));
      got.release();
    });
    schema.release();
    es.forEach((e) => e.release());
    expect(big.bytesAllocated()).toBe(0);
  });

  test('a pull stream exported into it and read from it: its callbacks get their addresses above 2 GiB', () => {
    const big = module(3 * GiB, 'big');
    const batches = [batchOf(7, 0), batchOf(3, 1)];
    const stream = acd.exportArrayStream(batches, { into: big });
    expect(stream.ptr).toBeGreaterThanOrEqual(3 * GiB);
    const reader = acd.importArrayStream(stream.ptr, { from: big, mode: 'view' });
    expect(reader.readAll().map(rows)).toEqual(batches.map(rows));
    reader.release();
    stream.release();
    expect(big.bytesAllocated()).toBe(0);
  });

  test('the async device stream: a producer into it drives a consumer whose handler lives in it', async () => {
    const big = module(3 * GiB + 1024, 'big');
    const batches = [batchOf(4, 0), batchOf(6, 1), batchOf(2, 2)];
    const consumer = acd.asyncConsumer({ from: big, mode: 'view', window: 2, validate: 'full' });
    expect(consumer.handler).toBeGreaterThanOrEqual(3 * GiB);
    const production = acd.produceAsync(consumer.handler, (async function* () { yield* batches; })(), { into: big });
    const got: string[][] = [];
    for await (const { batch } of consumer.entries()) got.push(rows(batch));
    await consumer.done;
    const stats = await production.done;
    expect(stats).toMatchObject({ tasks: 3, extracted: 3, error: null });
    expect(got).toEqual(batches.map(rows));
    consumer.release();
    expect(big.bytesAllocated()).toBe(0);
  });

  test("an array whose buffers lie farther apart than the validator's window: view mode says so (ENOSYS), copy mode and 'none' read it", () => {
    const big = module(2 * GiB, 'big');
    const batch = batchOf(8);
    const far = 3 * GiB + 512 * 1024 * 1024; // 1.5 GiB above the rest
    const e = acd.exportBatch(batch, { into: big });
    // Move column i's values far away: copy the bytes, point buffers[1] there.
    const s = big.space.structs;
    const children = s.ptr('ArrowArray', e.array, 'children');
    const column = s.ptrAt(children);
    const buffers = s.ptr('ArrowArray', column, 'buffers');
    const values = s.ptrAt(buffers + 4);
    big.space.bytes.copyWithin(far, values, values + 8 * 4);
    big.space.view.setUint32(buffers + 4, far, true);
    const err = libraryError(() => acd.importBatch(e.schema, e.array, { from: big, mode: 'view' }));
    expect(err.errno).toBe(ENOSYS);
    expect(err.message).toContain(`array.children[0].buffers[1]: at ${far}, ${2 ** 30 - 1} bytes or more past the array's lowest buffer`);
    // Refused before anything moved: the same structs import in copy mode, and unchecked in view mode.
    const copied = acd.importBatch(e.schema, e.array, { from: big, mode: 'copy' });
    expect(rows(copied.value)).toEqual(rows(batch));
    copied.release();
    const again = acd.exportBatch(batch, { into: big });
    const againColumn = s.ptrAt(s.ptr('ArrowArray', again.array, 'children'));
    const againBuffers = s.ptr('ArrowArray', againColumn, 'buffers');
    big.space.bytes.copyWithin(far, s.ptrAt(againBuffers + 4), s.ptrAt(againBuffers + 4) + 8 * 4);
    big.space.view.setUint32(againBuffers + 4, far, true);
    const unchecked = acd.importBatch(again.schema, again.array, { from: big, mode: 'view', validate: 'none' });
    expect(rows(unchecked.value)).toEqual(rows(batch));
    expect(unchecked.value.getChild('i')!.data[0]!.values.byteOffset).toBe(far);
    unchecked.release();
    e.release();
    again.release();
    expect(big.bytesAllocated()).toBe(0);
  });
});

describe("the core's own memory at its 2 GiB cap", () => {
  test('a batch exported and imported in view and copy mode when the memory is 2^31 bytes', async () => {
    const core = await ArrowCDevice.load();
    const m = core.memory;
    m.grow(32768 - m.buffer.byteLength / 65536);
    expect(m.buffer.byteLength).toBe(2 * GiB);
    const batch = batchOf(40);
    for (const mode of ['view', 'copy'] as const) {
      const e = core.exportBatch(batch);
      const got = core.importBatch(e.schema, e.array, { mode });
      expect(rows(got.value)).toEqual(rows(batch));
      got.release();
      e.release();
    }
    expect(core.bytesAllocated()).toBe(0);
  });
});

describe('an error message from a stream in it', () => {
  test("get_last_error's string above 2 GiB reaches the reader's error", () => {
    const big = module(2 * GiB + 8192, 'big');
    const source = (function* () {
      yield batchOf(3);
      throw new Error('the source ran dry');
    })();
    const stream = acd.exportArrayStream(source, { into: big });
    const reader = acd.importArrayStream(stream.ptr, { from: big });
    const err = libraryError(() => reader.readAll());
    expect(err.message).toContain('the source ran dry');
    reader.release();
    stream.release();
    expect(big.bytesAllocated()).toBe(0);
  });
});

describe('a C module built to grow to 4 GB, whose own malloc gives addresses above 2 GiB', () => {
  let p: Producer;
  let from: ForeignModule;
  beforeAll(() => {
    p = instantiate('4GB');
    // Its first 2.2 GiB taken, so that what it allocates next lies above 2 GiB.
    for (let k = 0; k < 2; k++) expect(p.malloc(1.1 * GiB) >>> 0).toBeGreaterThan(0);
    from = acd.foreign(p as unknown as Record<string, unknown>, 'producer');
  }, 120_000);

  test.each(['view', 'copy'] as const)('%s mode: its column, made by its C code, imported from it and released through its table', (mode) => {
    const schema = p.make_schema();
    const array = p.make_array(7n, 2n);
    // Its exports return the addresses as a wasm i32 is: negative, which the library refuses with the way out.
    expect(array).toBeLessThan(0);
    expect(() => acd.importVector(schema, array, { from })).toThrow(`pass ${schema} >>> 0, that is ${schema >>> 0}`);
    const v = acd.importVector(schema >>> 0, array >>> 0, { from, mode, validate: 'full' });
    expect([...v.value]).toEqual(Array.from({ length: 7 }, (_, i) => (((i + 2) % 3 === 2) ? null : 10 + i + 2)));
    if (mode === 'view') expect(v.value.data[0]!.values.byteOffset).toBeGreaterThan(2 * GiB);
    v.release();
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
  });

  test('a stream exported into it, allocated by its malloc above 2 GiB, drained by its C code', () => {
    const batches = [0, 1].map((b) => arrow.tableFromArrays({ a: Int32Array.from([b, b * 10]) }).batches[0]!);
    const stream = acd.exportArrayStream(batches, { into: from });
    expect(stream.ptr).toBeGreaterThan(2 * GiB);
    expect(p.drain_stream(stream.ptr)).toBe(11n);
    expect(from.space.structs.ptr('ArrowArrayStream', stream.ptr, 'release')).toBe(0);
    stream.release();
    expect(from.bytesAllocated()).toBe(0);
  });
});

describe('corrupted structs above 3 GiB', () => {
  test("lengths, offsets, null counts, buffer counts and buffer pointers changed one at a time: each import succeeds or throws the library's error, at every level, and nothing leaks", () => {
    const big = module(3 * GiB + 16384, 'big');
    const batch = batchOf(20);
    let seed = 0x2545f491;
    const next = () => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return seed >>> 0; };
    const s = big.space.structs;
    const view = big.space.view;
    // The words an import reads and a release does not: length, null_count, offset (both halves), n_buffers, every buffer pointer.
    const targets = (array: number): number[] => {
      const out: number[] = [];
      const node = (ptr: number) => {
        for (const f of ['length', 'null_count', 'offset']) out.push(ptr + s.offsetOf('ArrowArray', f), ptr + s.offsetOf('ArrowArray', f) + 4);
        out.push(ptr + s.offsetOf('ArrowArray', 'n_buffers'));
        const buffers = s.ptr('ArrowArray', ptr, 'buffers');
        for (let b = 0; b < s.i64('ArrowArray', ptr, 'n_buffers'); b++) out.push(buffers + 4 * b);
        const children = s.ptr('ArrowArray', ptr, 'children');
        for (let c = 0; c < s.i64('ArrowArray', ptr, 'n_children'); c++) node(s.ptrAt(children + 4 * c));
        const dictionary = s.ptr('ArrowArray', ptr, 'dictionary');
        if (dictionary !== 0) node(dictionary);
      };
      node(array);
      return out;
    };
    const outcomes = { ok: 0, refused: 0 };
    for (let run = 0; run < 600; run++) {
      const e = acd.exportBatch(batch, { into: big });
      const words = targets(e.array);
      const at = words[next() % words.length]!;
      const was = view.getUint32(at, true);
      const values = [0, 1, 7, 0xffffffff, 0x7fffffff, 0x80000000, was + 8, was - 8, was + GiB, was - GiB, 3 * GiB - 8, next()];
      view.setUint32(at, values[next() % values.length]! >>> 0, true);
      const mode = run % 2 === 0 ? 'view' : 'copy';
      const validate = (['minimal', 'default', 'full'] as const)[run % 3]!;
      try {
        acd.importBatch(e.schema, e.array, { from: big, mode, validate }).release();
        outcomes.ok++;
      } catch (err) {
        if (!(err instanceof ArrowCDeviceError)) throw new Error(`run ${run}: ${mode}, ${validate}, word at ${at} from ${was}: ${String(err)}`);
        outcomes.refused++;
      }
      view.setUint32(at, was, true);
      e.release();
    }
    expect(outcomes.ok).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(100);
    expect(big.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });
});
