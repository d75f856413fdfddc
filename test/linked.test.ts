// Issue 11, item 4: linked mode. csrc/examples/linked/batch.c is linked with
// the core's static library (dist/lib, dist/include) by the README's emcc
// command, once per file; ArrowCDevice.attach binds the facade to that module:
// one memory, pointers passed as they are. Also the modules attach refuses
// (no library, missing link flags, no binary), each with its reason.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EINVAL } from '../ts/abi/errors.js';
import { wasm32 } from '../ts/abi/generated/layout.js';
import { parseTableSignatures } from '../ts/abi/wasm-table.js';
import { ArrowCDevice } from '../ts/api.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { attach } from '../ts/index.js';
import { libraryError as error } from './helpers.js';

const ROOT = join(__dirname, '..');
const DIR = mkdtempSync(join(tmpdir(), 'acd-linked-'));
const ENV = { ...process.env, NODE_PATH: join(ROOT, 'node_modules') };

function readmeSection(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return readme.slice(readme.indexOf('### Linking the core into your own C/C++ module'));
}

/** The README's emcc command as arguments, its paths made absolute (repository files) or put in DIR (the output). */
function readmeCommand(): string[] {
  const sh = /```sh\n([\s\S]*?)```/.exec(readmeSection())![1].replace(/\\\n\s*/g, '').trim();
  const words = sh.split(/\s+/);
  expect(words[0]).toBe('emcc');
  return words.slice(1).map((w, i, all) => {
    if (all[i - 1] === '-o') return join(DIR, w);
    if (w.startsWith('-I')) return `-I${join(ROOT, w.slice(2))}`;
    if (/\.(c|a)$/.test(w)) return join(ROOT, w);
    return w;
  });
}

/** Links with emcc into DIR/<out>.cjs; returns the factory and the binary. */
function link(args: string[], out: string): { factory: (o: object) => Promise<Record<string, unknown>>; wasm: Uint8Array } {
  const i = args.indexOf('-o');
  const argv = [...args.slice(0, i), '-o', join(DIR, `${out}.cjs`), ...args.slice(i + 2)];
  execFileSync('emcc', argv, { env: ENV, stdio: 'pipe' });
  return { factory: require(join(DIR, `${out}.cjs`)), wasm: readFileSync(join(DIR, `${out}.wasm`)) };
}

type Linked = Record<string, unknown> & {
  _sum_int32_column(schema: number, batch: number, column: bigint): bigint;
  _make_int32_batch(schema: number, array: number, length: bigint, offset: bigint): number;
  _batch_last_error(): number;
  _malloc(n: number): number;
  _free(p: number): void;
};

let built: { factory: (o: object) => Promise<Record<string, unknown>>; wasm: Uint8Array };
beforeAll(() => { built = link(readmeCommand(), 'batch'); }, 120_000);

async function instance(): Promise<Linked> {
  return (await built.factory({ wasmBinary: built.wasm })) as Linked;
}

describe('a module that linked the core (issue 11, item 4)', () => {
  let m: Linked;
  let acd: ArrowCDevice;
  beforeAll(async () => {
    m = await instance();
    acd = ArrowCDevice.attach(m);
  });
  const cString = (p: number) => new TextDecoder().decode(acd.core.bytes.subarray(p, acd.core.bytes.indexOf(0, p)));

  test('one memory: the facade is over the module\'s memory and table; attaching again gives the same facade', () => {
    const asm = m.asm as { memory: WebAssembly.Memory; __indirect_function_table: WebAssembly.Table };
    expect(acd.memory).toBe(asm.memory);
    expect(acd.core.table).toBe(asm.__indirect_function_table);
    expect(ArrowCDevice.attach(m)).toBe(acd);
    expect(attach(m)).toBe(acd);
    // Every slot's signature comes from the module's own binary, not from the loaded core's.
    const slots = parseTableSignatures(built.wasm);
    expect(slots.length).toBeGreaterThan(1);
    const codes = new Set(['vi', 'iii', 'ii', 'vij', 'iiii', 'viiii']);
    for (let i = 1; i < slots.length; i++) expect(acd.core.space.table!.signatureOf(i)).toBe(codes.has(slots[i]) ? slots[i] : null);
  });

  test('JS → C: a batch exported from apache-arrow is summed by the module\'s C code on the same pointers', () => {
    const start = acd.bytesAllocated();
    const v = arrow.vectorFromArray([5, null, -7, 100, null, 3, 11], new arrow.Int32());
    const strings = ['p', 'q', 'r', 's', 't', 'u', 'w'];
    const table = new arrow.Table({ a: arrow.vectorFromArray(strings, new arrow.Utf8()), b: v, c: arrow.vectorFromArray(strings) });
    const exported = acd.exportDeviceBatch(table.batches[0]);
    expect(exported.struct).toBe('ArrowDeviceArray');
    expect(exported.array + wasm32.structs.ArrowDeviceArray.size).toBeLessThanOrEqual(acd.memory.buffer.byteLength);
    expect(m._sum_int32_column(exported.schema, exported.array, 1n)).toBe(112n);
    // The C code validated it with the core's validator and checks the column's type.
    expect(m._sum_int32_column(exported.schema, exported.array, 0n)).toBe(-(2n ** 63n));
    expect(cString(m._batch_last_error())).toBe('sum_int32_column: column 0 is not an int32 column of a record batch');
    // Dictionary<Int32, Utf8>: format "i" too, but with a dictionary.
    expect(m._sum_int32_column(exported.schema, exported.array, 2n)).toBe(-(2n ** 63n));
    expect(cString(m._batch_last_error())).toBe('sum_int32_column: column 2 is not an int32 column of a record batch');
    // It borrows: the export still owns both structs, and frees them.
    exported.release();
    // Sliced: the batch's offset is honoured.
    const sliced = acd.exportDeviceBatch(table.slice(2, 6).batches[0]);
    expect(m._sum_int32_column(sliced.schema, sliced.array, 1n)).toBe(-7n + 100n + 3n);
    sliced.release();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('C → JS: a batch made by the module\'s C code is imported in view mode, its buffers views over the module\'s memory', () => {
    const start = acd.bytesAllocated();
    const schema = m._malloc(wasm32.structs.ArrowSchema.size);
    const array = m._malloc(wasm32.structs.ArrowArray.size);
    expect(m._make_int32_batch(schema, array, 7n, 2n)).toBe(0);
    expect(acd.bytesAllocated()).toBeGreaterThan(start); // its buffers: the core's allocator, counted
    const imported = acd.importBatch(schema, array, { mode: 'view', validate: 'full' });
    const x = imported.value.getChild('x')!;
    expect(x.toJSON()).toEqual([20, null, 40, 50, null, 70, 80]);
    const data = x.data[0];
    expect(data.values.buffer).toBe(acd.memory.buffer);
    expect(data.nullBitmap!.buffer).toBe(acd.memory.buffer);
    // Moved: the producer's structs are released.
    expect(acd.core.structs.ptr('ArrowSchema', schema, 'release')).toBe(0);
    expect(acd.core.structs.ptr('ArrowArray', array, 'release')).toBe(0);
    // The module's own C code grows the memory: the value is rebuilt over the new buffer.
    const before = acd.memory.buffer;
    const big = m._malloc(before.byteLength);
    expect(big).not.toBe(0);
    expect(acd.memory.buffer).not.toBe(before);
    const grown = imported.value.getChild('x')!;
    expect(grown.data[0].values.buffer).toBe(acd.memory.buffer);
    expect(grown.toJSON()).toEqual([20, null, 40, 50, null, 70, 80]);
    m._free(big);
    imported.release();
    m._free(schema);
    m._free(array);
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('streams: the facade\'s callbacks go into the module\'s table and its C core calls them, checked', () => {
    const start = acd.bytesAllocated();
    streamRuntime(acd.core); // installs the runtime's own callbacks, once per core
    const slots = acd.core.tableSlotsLive();
    const table = new arrow.Table({ b: arrow.vectorFromArray([1, 2, null], new arrow.Int32()) });
    const stream = acd.exportArrayStream([table.batches[0], table.batches[0]]);
    const reader = acd.importArrayStream(stream.ptr);
    expect([...reader].map((b) => b.getChild('b')!.toJSON())).toEqual([[1, 2, null], [1, 2, null]]);
    stream.release();
    expect(acd.core.tableSlotsLive()).toBe(slots);
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a release of the wrong signature in the module\'s table is refused before any call', () => {
    const slots = parseTableSignatures(built.wasm);
    const wrong = slots.findIndex((s, i) => i > 0 && s === 'iii');
    expect(wrong).toBeGreaterThan(0);
    const schema = m._malloc(wasm32.structs.ArrowSchema.size);
    new Uint8Array(acd.memory.buffer, schema, wasm32.structs.ArrowSchema.size).fill(0);
    acd.core.structs.setPtr('ArrowSchema', schema, 'release', wrong);
    expect(acd.core.schemaRelease(schema)).toBe(EINVAL);
    expect(acd.core.lastErrorMessage()).toBe(`release: expected a function void(struct ArrowSchema*) in the function table, found index ${wrong}, which is not one`);
    expect(acd.core.structs.ptr('ArrowSchema', schema, 'release')).toBe(0);
    m._free(schema);
  });
});

describe('modules attach refuses, with the reason', () => {
  const command = () => readmeCommand();
  const without = (flag: string) => command().filter((w) => w !== flag);

  test('not a module', () => {
    expect(error(() => ArrowCDevice.attach(built.factory))).toMatchObject({ code: 'EINVAL' });
    expect(error(() => ArrowCDevice.attach(built.factory)).message).toMatch(/^attach: expected an instantiated Emscripten module object/);
    expect(error(() => ArrowCDevice.attach(null as unknown as object)).message).toBe('attach: expected an instantiated Emscripten module object, found null');
  });

  test('the library linked without --whole-archive: its bindings are missing', async () => {
    const args = command().filter((w) => !w.startsWith('-Wl,'));
    const { factory, wasm } = link(args, 'partial');
    const m = await factory({ wasmBinary: wasm });
    const e = error(() => ArrowCDevice.attach(m));
    expect(e.errno).toBe(EINVAL);
    expect(e.message).toMatch(/^attach: the module lacks all of arrow-c-device's \d+ bindings \(lastError, bytesAllocated, memorySize, alloc, \.\.\.\): link the library into it with every object and embind: emcc \.\.\. -Wl,--whole-archive libarrow_c_device\.a -Wl,--no-whole-archive --bind /);
  }, 60_000);

  test('a module without the library at all', async () => {
    writeFileSync(join(DIR, 'plain.c'), 'int answer(void) { return 42; }\n');
    const { factory, wasm } = link(['-O2', join(DIR, 'plain.c'), '-sMODULARIZE', '-o', 'x'], 'plain');
    const m = await factory({ wasmBinary: wasm });
    expect(error(() => ArrowCDevice.attach(m)).message).toMatch(/^attach: the module lacks all of arrow-c-device's \d+ bindings/);
  }, 60_000);

  test('missing link flags are named', async () => {
    const cases: [string, RegExp][] = [
      ['-sWASM_BIGINT', /^attach: the module was linked without -sWASM_BIGINT/],
      ['-sALLOW_TABLE_GROWTH', /^attach: the module's function table cannot grow .*: link it with -sALLOW_TABLE_GROWTH$/],
    ];
    for (const [flag, message] of cases) {
      const { factory, wasm } = link(without(flag), `without${flag.replace(/\W/g, '_')}`);
      const m = await factory({ wasmBinary: wasm });
      expect(error(() => ArrowCDevice.attach(m)).message).toMatch(message);
    }
    const { factory, wasm } = link(command().map((w) => (w === '-sMAXIMUM_MEMORY=2GB' ? '-sMAXIMUM_MEMORY=4GB' : w)), 'fourgb');
    const m = await factory({ wasmBinary: wasm });
    expect(error(() => ArrowCDevice.attach(m)).message)
      .toBe("attach: the module's memory may grow beyond 2 GiB (maximum 65536 pages), where the simulated devices' addresses are: link it with -sMAXIMUM_MEMORY=2GB (or less)");
  }, 120_000);

  test('its binary is needed, and must be its own', async () => {
    // Instantiated by the caller (Emscripten's instantiateWasm hook): the module keeps no copy of its binary.
    const m = (await built.factory({
      instantiateWasm(imports: WebAssembly.Imports, receive: (i: WebAssembly.Instance) => void) {
        void WebAssembly.instantiate(built.wasm, imports).then((r) => receive(r.instance));
        return {};
      },
    })) as Linked;
    expect(m.wasmBinary).toBeUndefined();
    expect(error(() => ArrowCDevice.attach(m)).message).toBe("attach: the module's wasm binary is needed to know the signature of each slot of its function table " +
      "(C checks them before a call): pass it to the module's factory (createModule({ wasmBinary })) or to attach(module, { wasmBinary })");
    const other = readFileSync(join(DIR, 'plain.wasm'));
    expect(error(() => ArrowCDevice.attach(m, { wasmBinary: other })).message).toBe('attach: wasmBinary is not the binary of this module (their exports differ)');
    expect(error(() => ArrowCDevice.attach(m, { wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 9]) })).message)
      .toMatch(/^attach: wasmBinary: its function table could not be read: wasm: unexpected end/);
    // Given to attach instead of the factory, it works.
    const acd = ArrowCDevice.attach(m, { wasmBinary: built.wasm });
    const schema = acd.exportSchema(new arrow.Schema([new arrow.Field('a', new arrow.Int32())]));
    const imported = acd.importSchema(schema.ptr);
    expect(imported.field.type).toMatchObject({ kind: 'struct' });
    imported.release();
    schema.release();
    expect(acd.bytesAllocated()).toBe(0);
  });
});

test("the README's linked-mode example runs as written", () => {
  const code = /```js\n([\s\S]*?)```/.exec(readmeSection())![1];
  const file = join(DIR, 'example.mjs');
  writeFileSync(file, code
    .replace("from 'arrow-c-device'", `from '${join(ROOT, 'dist', 'index.mjs')}'`)
    .replace("from 'apache-arrow'", `from '${join(ROOT, 'node_modules', 'apache-arrow', 'Arrow.node.mjs')}'`));
  // batch.cjs and batch.wasm: built by the README's command in beforeAll.
  expect(execFileSync(process.execPath, [file], { encoding: 'utf8', cwd: DIR })).toBe('7n\n[ 10, 20, null, 40, 50 ] true\n0 bytes still allocated\n');
});
