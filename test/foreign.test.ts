// Issue 11, item 1 (the foundation): another wasm module as an address space.
// test/foreign/producer.c is built by emcc here as a standalone module with
// its own memory, allocator and table; its structs are read with the same
// readers as the core's, and its callbacks are called through the run-time
// trampoline, which the engine checks: a wrong index or signature is an
// error before any foreign code runs, never a trap of ours.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseThrough } from '../ts/abi/address-space.js';
import { ArrowCDeviceError, EINVAL, EIO, ENOSYS } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { CALLBACK_SIGNATURES, ForeignModule, partsFromExports } from '../ts/foreign/module.js';
import { trampolineBinary } from '../ts/foreign/trampoline.js';
import { rawValues } from '../ts/model/raw-values.js';
import { readRaw } from '../ts/model/raw.js';
import { readField } from '../ts/model/schema.js';

const ROOT = join(__dirname, '..');

interface Producer {
  memory: WebAssembly.Memory;
  __indirect_function_table: WebAssembly.Table;
  malloc(n: number): number;
  free(p: number): void;
  live_blocks(): number;
  released_count(): number;
  add_ptr(): number;
  boom_ptr(): number;
  make_schema(): number;
  make_array(length: bigint, offset: bigint): number;
  free_struct(p: number): void;
}

let wasm: Uint8Array;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'acd-foreign-'));
  const out = join(dir, 'producer.wasm');
  execFileSync('emcc', ['-O2', '-std=c11', '-Wall', '-Werror', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH',
    '-sEXPORTED_FUNCTIONS=_malloc,_free', `-I${join(ROOT, 'csrc')}`, join(ROOT, 'test', 'foreign', 'producer.c'), '-o', out],
  { env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') }, stdio: 'pipe' });
  wasm = readFileSync(out);
}, 120_000);

/** A new instance of the producer module: its own memory and table. */
function instantiate(): Producer {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm), { env: { emscripten_notify_memory_growth() {} } });
  (instance.exports._initialize as () => void)();
  return instance.exports as unknown as Producer;
}

function error(f: () => unknown): ArrowCDeviceError {
  try {
    f();
  } catch (e) {
    if (e instanceof ArrowCDeviceError) return e;
    throw e;
  }
  throw new Error('expected an ArrowCDeviceError');
}

describe('a foreign module', () => {
  test("its parts are found under Emscripten's names in its exports", () => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>, 'producer');
    expect(f.name).toBe('producer');
    expect(f.space.memory).toBe(p.memory);
    expect(f.table).toBe(p.__indirect_function_table);
    expect(f.space.allocator).not.toBeNull();
    expect(f.space.layout.pointerSize).toBe(4);
  });

  test("wasm-bindgen's names: its one table, and a free that is given the size", () => {
    const memory = new WebAssembly.Memory({ initial: 1 });
    const table = new WebAssembly.Table({ initial: 2, element: 'anyfunc' });
    const calls: string[] = [];
    const parts = partsFromExports({
      memory, __wbindgen_export_2: table,
      __wbindgen_malloc: (size: number, align: number) => { calls.push(`malloc ${size} ${align}`); return 64; },
      __wbindgen_free: (ptr: number, size: number, align: number) => { calls.push(`free ${ptr} ${size} ${align}`); },
    });
    expect(parts.table).toBe(table);
    const f = new ForeignModule(parts);
    const p = f.space.allocator!.alloc(24);
    f.space.allocator!.free(p);
    expect(calls).toEqual(['malloc 24 8', 'free 64 24 8']);
  });

  test('exports without a memory are refused, naming what to pass', () => {
    const err = error(() => new ForeignModule({ f: () => 0 }));
    expect(err.code).toBe(EINVAL);
    expect(err.message).toBe('foreign: the exports have no WebAssembly.Memory; pass { memory, table, malloc, free } explicitly');
  });

  test('its allocator hands out zeroed memory there, freed by its free', () => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>);
    const at = f.space.allocator!.alloc(32);
    expect(at).toBeGreaterThan(0);
    expect([...f.space.bytes.subarray(at, at + 32)]).toEqual(new Array(32).fill(0));
    f.space.allocator!.free(at);
  });

  test.each([[5n, 0n], [7n, 4n]])('its structs (length %d, offset %d) read with the same readers as the core memory', (length, offset) => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>, 'producer');
    const schema = p.make_schema();
    const array = p.make_array(length, offset);
    const field = readField(f.space.structs, schema);
    expect(field).toEqual({ name: 'x', type: { kind: 'int', bitWidth: 32, signed: true }, nullable: true, metadata: null });
    const expected = Array.from({ length: Number(length) }, (_, i) => (((i + Number(offset)) % 3 === 2) ? null : 10 + i + Number(offset)));
    expect(rawValues(readRaw(f.space, array, field.type, 'view'))).toEqual(expected);
    // Released through its table: its own callbacks run, once each, and free what they hold.
    expect(f.space.release('ArrowArray', array)).toBe(0);
    expect(f.space.release('ArrowSchema', schema)).toBe(0);
    expect(p.released_count()).toBe(2);
    expect(f.space.release('ArrowArray', array)).toBe(0); // released already: not called again
    expect(p.released_count()).toBe(2);
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
  });
});

describe('calls through its table', () => {
  test('a function of the right signature is called', () => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>, 'producer');
    expect(f.space.table!.call(p.add_ptr(), 'iii', [40, 2], 'add')).toBe(42);
    expect(f.space.table!.signatureOf(p.add_ptr())).toBe('?');
    expect(f.space.table!.signatureOf(0)).toBeNull();
  });

  test('another signature, an empty slot or an index past the table is an error before anything runs', () => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>, 'producer');
    const schema = p.make_schema();
    const t = f.space.table!;
    const length = p.__indirect_function_table.length;
    expect(error(() => t.call(p.add_ptr(), 'vi', [schema], 'schema.release')).message)
      .toBe(`schema.release: function pointer ${p.add_ptr()} is not a function of signature 'vi' in producer's table`);
    expect(error(() => t.call(0, 'vi', [schema], 'schema.release')).message)
      .toBe(`schema.release: 0 is not a function in producer's table of ${length} slots`);
    expect(error(() => t.call(length + 5, 'vi', [schema], 'schema.release')).code).toBe(EINVAL);
    expect(p.released_count()).toBe(0);
    // A release of the wrong kind is not called: the struct is marked released, EINVAL.
    const s = f.space.structs;
    s.setPtr('ArrowSchema', schema, 'release', p.add_ptr());
    expect(releaseThrough(f.space, 'ArrowSchema', schema)).toBe(EINVAL);
    expect(s.ptr('ArrowSchema', schema, 'release')).toBe(0);
    expect(p.released_count()).toBe(0);
    // The module works on.
    expect(t.call(p.add_ptr(), 'iii', [1, 2], 'add')).toBe(3);
    p.free_struct(schema);
    expect(p.live_blocks()).toBe(0);
  });

  test('a trap inside the callee is EIO, and this library and its core keep working', async () => {
    const p = instantiate();
    const f = new ForeignModule(p as unknown as Record<string, unknown>, 'producer');
    const err = error(() => f.space.table!.call(p.boom_ptr(), 'vi', [0], 'array.release'));
    expect(err.code).toBe(EIO);
    expect(err.message).toMatch(/^array\.release: the callback trapped in producer \(.*unreachable.*\)$/);
    const acd = await ArrowCDevice.load();
    const e = acd.exportVector(arrow.vectorFromArray([1, 2, 3], new arrow.Int32()));
    const back = acd.importVector(e.schema, e.array);
    expect([...back.value]).toEqual([1, 2, 3]);
    back.release();
    e.release();
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('the trampoline module is valid wasm for every callback signature of the spec', () => {
    expect(WebAssembly.validate(trampolineBinary(CALLBACK_SIGNATURES))).toBe(true);
    expect(CALLBACK_SIGNATURES).toEqual(['vi', 'iii', 'ii', 'iiii', 'viiii', 'vij']);
  });
});

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

  test('a CPU ArrowDeviceArray in its memory', () => {
    const { p, from, schema, array } = produce(5, 1);
    const s = from.space.structs;
    const device = from.space.allocator!.alloc(s.size('ArrowDeviceArray'));
    from.space.bytes.copyWithin(device, array, array + s.size('ArrowArray'));
    s.setI64('ArrowDeviceArray', device, 'device_id', -1);
    from.space.view.setInt32(device + s.offsetOf('ArrowDeviceArray', 'device_type'), 1, true);
    s.setPtr('ArrowArray', array, 'release', 0); // moved into the device array
    const raw = acd.importDeviceRaw(schema, device, { from });
    expect(rawValues(raw.value.array)).toEqual(expected(5, 1));
    raw.release();
    from.space.allocator!.free(device);
    p.free_struct(schema);
    p.free_struct(array);
    expect(p.live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
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

  test("view mode and streams are refused for now, with nothing released", () => {
    const { p, from, schema, array } = produce();
    expect(error(() => acd.importVector(schema, array, { from, mode: 'view' })).message)
      .toBe("mode: 'view' imports from another module are not available yet; use mode: 'copy'");
    expect(error(() => acd.importArrayStream(schema, { from })).message).toBe('from: streams from another module are not available yet');
    expect(error(() => acd.importDeviceBatch(schema, array, { from, device: 'keep' })).code).toBe(ENOSYS);
    expect(p.released_count()).toBe(0);
  });

  describe('bad input from it: the library error naming the place, nothing released, both sides working', () => {
    test.each([
      ['a schema address past its memory', (x: ReturnType<typeof produce>) => ({ schema: x.from.space.bytes.length + 64 }),
        /^producer: schema: address \d+ \(\+48 bytes\) is outside the memory of \d+ bytes$/],
      ['a released schema', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowSchema', x.schema, 'release', 0); return {}; },
        /^producer: schema: expected a live schema, found a released one$/],
      ['a released array', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowArray', x.array, 'release', 0); return {}; },
        /^producer: array: expected a live array, found a released one$/],
      ['a length past its memory', (x: ReturnType<typeof produce>) => { x.from.space.structs.setI64('ArrowArray', x.array, 'length', 1e12); return {}; },
        /^producer: array\.buffers\[0\]: address \d+ \(\+\d+ bytes\) is outside the memory of \d+ bytes$/],
      ['a wild buffers pointer', (x: ReturnType<typeof produce>) => { x.from.space.structs.setPtr('ArrowArray', x.array, 'buffers', 0xfffffff0); return {}; },
        /^producer: array\.buffers: address 4294967280 \(\+4 bytes\) is outside the memory of \d+ bytes$/],
      ['a schema that is its own child', (x: ReturnType<typeof produce>) => {
        const children = x.from.space.allocator!.alloc(4);
        x.from.space.view.setUint32(children, x.schema, true);
        x.from.space.structs.setI64('ArrowSchema', x.schema, 'n_children', 1);
        x.from.space.structs.setPtr('ArrowSchema', x.schema, 'children', children);
        return {};
      }, /^producer: schema\.children\[0\]: the node at \d+ is reached twice \(the tree is a DAG or has a cycle\)$/],
      ['a format the spec does not have', (x: ReturnType<typeof produce>) => {
        const zz = x.from.space.allocator!.alloc(4);
        x.from.space.bytes.set([0x7a, 0x7a, 0], zz);
        x.from.space.structs.setPtr('ArrowSchema', x.schema, 'format', zz);
        return {};
      }, /^producer: .*'zz'/],
    ])('%s', (_name, corrupt, message) => {
      const x = produce();
      const { schema = x.schema } = corrupt(x);
      const err = error(() => acd.importVector(schema, x.array, { from: x.from, validate: 'full' }));
      expect(err.code).toBe(EINVAL);
      expect(err.message).toMatch(message);
      expect(x.p.released_count()).toBe(0);
      expect(acd.bytesAllocated()).toBe(0);
      // Both sides work on: a fresh pair imports.
      const y = { schema: x.p.make_schema(), array: x.p.make_array(3n, 0n) };
      const v = acd.importVector(y.schema, y.array, { from: x.from });
      expect([...v.value]).toEqual(expected(3, 0));
      v.release();
      expect(acd.bytesAllocated()).toBe(0);
    });

    test('a release of the wrong kind: the copy is dropped, the struct marked released, the error says so', () => {
      const { p, from, schema, array } = produce();
      from.space.structs.setPtr('ArrowSchema', schema, 'release', p.add_ptr());
      const err = error(() => acd.importVector(schema, array, { from }));
      expect(err.code).toBe(EINVAL);
      expect(err.message).toBe('producer: schema.release: not a function that can be called as void(struct*); the struct was marked released');
      expect(from.space.structs.ptr('ArrowSchema', schema, 'release')).toBe(0);
      expect(p.released_count()).toBe(1); // the array's, before the schema's was tried
      expect(acd.bytesAllocated()).toBe(0);
    });
  });
});
