// Issue 11, item 1 (the foundation): another wasm module as an address space.
// test/foreign/producer.c is built by emcc (test/foreign/module.ts) as a
// standalone module with its own memory, allocator and table; its structs are
// read with the same readers as the core's, and its callbacks are called
// through the run-time trampoline, which the engine checks: a wrong index or
// signature is an error before any foreign code runs, never a trap of ours.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { releaseThrough } from '../ts/abi/address-space.js';
import { ArrowCDeviceError, EINVAL, EIO } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { CALLBACK_SIGNATURES, ForeignModule, partsFromExports } from '../ts/foreign/module.js';
import { trampolineBinary } from '../ts/foreign/trampoline.js';
import { rawValues } from '../ts/model/raw-values.js';
import { readRaw } from '../ts/model/raw.js';
import { readField } from '../ts/model/schema.js';
import { error, instantiate, producerWasm } from './foreign/module.js';

beforeAll(() => { producerWasm(); }, 120_000);

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
    expect(err.errno).toBe(EINVAL);
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
    expect(error(() => t.call(length + 5, 'vi', [schema], 'schema.release')).errno).toBe(EINVAL);
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
    expect(err.errno).toBe(EIO);
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

test("load() refuses an option it does not know ({ memory } once looked like a way to read another module), naming the way that works", async () => {
  const err = await ArrowCDevice.load({ memory: new WebAssembly.Memory({ initial: 1 }) } as never).then(() => null, (e: unknown) => e as Error);
  expect(err).toBeInstanceOf(TypeError);
  expect(err!.message).toMatch(/^load: unknown option 'memory' \(known options: wasmBinary\); to read or write another module's memory, use acd\.foreign/);
});
