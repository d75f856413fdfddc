// Issue 9, items 1, 2, 5 and 7: lifetimes of imported data (no use after
// release, no double free), leaks and foreign exception types on import, and
// the spec deviations (binary metadata, CPU device_id 0, describing device
// arrays, date64 and decimal content checks).
// Longer than 400 lines because the four items share the import routes and
// leak guards; each test is named after its item.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError, EINVAL } from '../ts/abi/errors.js';
import { writeSchema } from '../ts/model/schema.js';
import { readIpc } from '../ts/io/ipc/read.js';
import { roundtripRaw } from '../ts/roundtrip/roundtrip.js';
import { deviceTree } from '../ts/inspect/batch.js';
import { treeText } from '../ts/inspect/text.js';
import { structTree } from '../ts/inspect/tree.js';
import type { RawArray } from '../ts/model/raw.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import * as t from '../ts/model/types.js';
import { bytesMark, core, FULL_CONTENT_ERROR, goldFiles, INVALID_AT_FULL } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const markBytes = bytesMark(() => acd);
let start = 0;
const mark = () => {
  start = markBytes();
};

const int32Batch = (xs: number[]) => new arrow.Table({ x: arrow.vectorFromArray(xs, new arrow.Int32()) }).batches[0];
const u8 = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const leaf = (type: t.DataType, values: ArrayBufferView, length: number): RawArray =>
  ({ type, length, nullCount: 0, offset: 0, buffers: [null, u8(values)], children: [], dictionary: null });

/** Grows wasm memory (by allocating as much as is there) and frees the block again. */
function growMemory(): void {
  const before = acd.memory.buffer;
  const big = acd.core.alloc(before.byteLength);
  acd.core.free(big);
  expect(acd.memory.buffer).not.toBe(before);
}

/** Runs the collector and lets finalizers run, a few rounds. */
async function collect(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run jest with node --expose-gc');
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The error a function throws (fails the test when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected an exception');
}

describe('item 1: use after release in copy mode', () => {
  test('item 1: a copy-mode value read after memory growth is the imported data, not a freed array', () => {
    mark();
    const first = acd.exportBatch(int32Batch([1, 2, 3, 4]));
    const imported = acd.importBatch(first.schema, first.array, { mode: 'copy' });
    const value = imported.value;
    first.release();
    // Another batch takes the blocks the copy import freed, then memory grows.
    const other = acd.exportBatch(int32Batch([1000, 1001, 1002, 1003]));
    growMemory();
    expect(imported.value).toBe(value);
    expect([...imported.value.getChild('x')!.toArray()]).toEqual([1, 2, 3, 4]);
    other.release();
    imported.release();
    // A view-mode value is still rebuilt over the grown memory (it owns its C array).
    const viewed = acd.exportBatch(int32Batch([1, 2, 3, 4]));
    const view = acd.importBatch(viewed.schema, viewed.array, { mode: 'view' });
    const before = view.value;
    growMemory();
    expect(view.value).not.toBe(before);
    expect([...view.value.getChild('x')!.toArray()]).toEqual([1, 2, 3, 4]);
    view.release();
    viewed.release();
  });

  test('item 1: a copy-mode vector and raw import own no wasm memory, before and after growth', () => {
    mark();
    const exported = acd.exportVector(arrow.vectorFromArray([5, 6, 7], new arrow.Int32()));
    const vector = acd.importVector(exported.schema, exported.array, { mode: 'copy' });
    exported.release();
    const raw = acd.exportRaw(t.field('r', t.int32()), leaf(t.int32(), Int32Array.from([8, 9]), 2));
    const rawImport = acd.importRaw(raw.schema, raw.array, { mode: 'copy' });
    raw.release();
    expect(acd.bytesAllocated()).toBe(start);
    const other = acd.exportVector(arrow.vectorFromArray([-1, -1, -1], new arrow.Int32()));
    growMemory();
    expect([...vector.value.toArray()]).toEqual([5, 6, 7]);
    expect([...new Int32Array(rawImport.value.array.buffers[1]!.slice().buffer)]).toEqual([8, 9]);
    expect(rawImport.value.array.buffers[1]!.buffer).not.toBe(acd.memory.buffer);
    other.release();
    vector.release();
    rawImport.release();
  });

});

describe('item 2: double free through the finalizer', () => {
  const ree = t.runEndEncoded(t.int32(), t.int32());
  const reeRaw: RawArray = {
    type: ree, length: 3, nullCount: 0, offset: 0, buffers: [], dictionary: null,
    children: [leaf(t.int32(), Int32Array.from([2, 3]), 2), leaf(t.int32(), Int32Array.from([7, 8]), 2)],
  };

  test('item 2: an import that fails while reading frees the moved array once, after collection too', async () => {
    mark();
    for (let i = 0; i < 40; i++) {
      const mode = i % 2 === 0 ? 'view' : 'copy';
      const exported = acd.exportRaw(t.field('r', ree), reeRaw);
      const e = thrown(() => acd.importVector(exported.schema, exported.array, { mode }));
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      expect((e as Error).message).toMatch(/run_end_encoded<.*> is not supported by apache-arrow/);
      // Nothing was moved: the export still owns both structs.
      expect(acd.core.structs.ptr('ArrowArray', exported.array, 'release')).not.toBe(0);
      expect(acd.core.structs.ptr('ArrowSchema', exported.schema, 'release')).not.toBe(0);
      exported.release();
    }
    expect(acd.bytesAllocated()).toBe(start);
    await collect();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('item 2: the same failure on a device batch import leaves nothing for a finalizer', async () => {
    mark();
    const schema = t.field('', t.struct([t.field('r', ree)]), false);
    const batch: RawArray = { type: schema.type, length: 3, nullCount: 0, offset: 0, buffers: [null], children: [reeRaw], dictionary: null };
    for (let i = 0; i < 20; i++) {
      const exported = acd.exportDeviceRaw(schema, batch);
      expect(() => acd.importDeviceBatch(exported.schema, exported.array, { mode: 'view' })).toThrow(ArrowCDeviceError);
      exported.release();
    }
    await collect();
    expect(acd.bytesAllocated()).toBe(start);
  });
});

describe('item 5: leaks and foreign exception types', () => {
  test('item 5: importArrayStream of a stream whose schema is not a struct leaks nothing and moves nothing', () => {
    mark();
    const core = acd.core;
    const ptr = core.alloc(core.structs.size('ArrowArrayStream'));
    const calls: string[] = [];
    streamRuntime(core).register('arrayStream', ptr, {
      getSchema: (out) => {
        calls.push('get_schema');
        writeSchema(core, out, t.field('x', t.int32()));
        return 0;
      },
      getNext: () => 5,
      getLastError: () => 0,
      release: () => { calls.push('release'); },
    });
    const e = thrown(() => acd.importArrayStream(ptr));
    expect(e).toBeInstanceOf(ArrowCDeviceError);
    expect((e as Error).message).toBe("schema: a record batch schema is a struct ('+s'), found int");
    // The stream is still the caller's, unreleased.
    expect(calls).toEqual(['get_schema']);
    expect(core.structs.ptr('ArrowArrayStream', ptr, 'release')).not.toBe(0);
    core.stream.arrayStreamRelease(ptr);
    expect(calls).toEqual(['get_schema', 'release']);
    core.free(ptr);
  });

  test('item 5: a name read from a block freed before the import is an ArrowCDeviceError, not a TypeError', async () => {
    mark();
    const core = acd.core;
    const s = core.structs;
    const exported = acd.exportSchema(t.field('x', t.int32()));
    // A copy of the format string at an address whose low byte is a lone UTF-8 continuation byte.
    const spare = core.alloc(512);
    const format = spare + ((0x90 - (spare & 0xff) + 256) % 256);
    core.bytes.set([0x69, 0], format); // "i"
    const originalFormat = s.ptr('ArrowSchema', exported.ptr, 'format');
    const originalName = s.ptr('ArrowSchema', exported.ptr, 'name');
    s.setPtr('ArrowSchema', exported.ptr, 'format', format);
    // The name lives in a block of the size the import allocates, freed just before the import.
    const freed = core.alloc(s.size('ArrowSchema'));
    core.bytes.set([0x6e, 0], freed); // "n"
    core.free(freed);
    s.setPtr('ArrowSchema', exported.ptr, 'name', freed);
    let e: unknown;
    try {
      const imported = acd.importSchema(exported.ptr);
      // When the allocator did not reuse the block, the name is still "n".
      expect(imported.field.name).toBe('n');
      imported.release();
      throw new Error('the import did not reuse the freed block: the test needs another setup');
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(ArrowCDeviceError);
    expect((e as Error).message).toMatch(/^schema\.name: /);
    // Nothing moved: the export still owns its struct.
    expect(s.ptr('ArrowSchema', exported.ptr, 'release')).not.toBe(0);
    s.setPtr('ArrowSchema', exported.ptr, 'format', originalFormat);
    s.setPtr('ArrowSchema', exported.ptr, 'name', originalName);
    exported.release();
    core.free(spare);
    // No half-built schema handle is left for a finalizer to free again (item 2's kind of double free).
    expect(acd.bytesAllocated()).toBe(start);
    await collect();
  });

  test.each(['buffers', 'children'] as const)('item 5: at validate none, a wild %s pointer is an ArrowCDeviceError, not a RangeError', (field) => {
    mark();
    const s = acd.core.structs;
    const exported = acd.exportBatch(int32Batch([1, 2, 3]));
    const target = field === 'buffers' ? s.ptrAt(s.ptr('ArrowArray', exported.array, 'children')) : exported.array;
    const original = s.ptr('ArrowArray', target, field);
    s.setPtr('ArrowArray', target, field, 0xfffffff0);
    for (const mode of ['copy', 'view'] as const) {
      const e = thrown(() => acd.importBatch(exported.schema, exported.array, { mode, validate: 'none' }));
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      expect((e as ArrowCDeviceError).errno).toBe(EINVAL);
      expect((e as Error).message).toMatch(/outside the memory/);
    }
    s.setPtr('ArrowArray', target, field, original);
    exported.release();
  });

  test('item 5: at validate none, what apache-arrow cannot build is an ArrowCDeviceError naming the slot', () => {
    mark();
    // A list view of 2^40 values: only 'full' reads sizes; apache-arrow's builder could not
    // make the list (RangeError: invalid array length), and the shape check finds it first.
    const type = t.largeListView(t.int32());
    const raw: RawArray = {
      type, length: 1, nullCount: 0, offset: 0, dictionary: null,
      buffers: [null, u8(BigInt64Array.from([0n])), u8(BigInt64Array.from([2n ** 40n]))],
      children: [leaf(t.int32(), Int32Array.from([1]), 1)],
    };
    for (const mode of ['copy', 'view'] as const) {
      const exported = acd.exportRaw(t.field('v', type), raw);
      const e = thrown(() => acd.importVector(exported.schema, exported.array, { mode, validate: 'none', convert: ['list_view'] }));
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      expect((e as Error).message).toBe('array: slot 0 views child slots [0, 1099511627776), outside array.children[0] of length 1');
      // At 'full' the validator finds it first, naming the slot.
      const full = thrown(() => acd.importVector(exported.schema, exported.array, { mode, validate: 'full', convert: ['list_view'] }));
      expect(full).toBeInstanceOf(ArrowCDeviceError);
      expect((full as { cause?: unknown }).cause).toBeUndefined();
      expect(acd.core.structs.ptr('ArrowArray', exported.array, 'release')).not.toBe(0);
      exported.release();
    }
  });
});

describe('item 7: spec deviations', () => {
  /** Metadata bytes: pairs of byte strings. */
  function metadataBytes(pairs: [number[], number[]][]): Uint8Array {
    const parts: number[] = [];
    const int = (n: number) => parts.push(n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff);
    int(pairs.length);
    for (const [k, v] of pairs) {
      int(k.length);
      parts.push(...k);
      int(v.length);
      parts.push(...v);
    }
    return Uint8Array.from(parts);
  }
  const enc = (s: string) => [...new TextEncoder().encode(s)];
  // A key with an invalid byte, a value that is binary (0xff, NUL, a lone continuation, a truncated sequence).
  const binary = metadataBytes([[[...enc('k'), 0xff], [0x80, 0x00, 0xfe, 0xc3]], [enc('plain'), enc('é')]]);
  // ArrowSchema.metadata of pyarrow 26.0.1's export (Schema._export_to_c) of
  // pa.schema([...], metadata={b'k\xff': b'\x80\x00\xfe\xc3', b'plain': 'é'.encode()}).
  const PYARROW_26 = '02000000020000006bff040000008000fec305000000706c61696e02000000c3a9';

  /** The metadata bytes of the ArrowSchema at ptr. */
  function metadataAt(ptr: number): Uint8Array {
    const s = acd.core.structs;
    const at = s.ptr('ArrowSchema', ptr, 'metadata');
    const view = new DataView(acd.memory.buffer);
    let offset = at + 4;
    for (let i = 0; i < view.getInt32(at, true) * 2; i++) offset += 4 + view.getInt32(offset, true);
    return new Uint8Array(acd.memory.buffer.slice(at, offset));
  }

  test.each(['schema', 'field'] as const)('item 7: %s metadata that is not UTF-8 imports and re-exports byte-exact', (where) => {
    mark();
    expect(Buffer.from(binary).toString('hex')).toBe(PYARROW_26);
    const core = acd.core;
    const s = core.structs;
    const exported = acd.exportBatch(int32Batch([1, 2]));
    const node = where === 'schema' ? exported.schema : s.ptrAt(s.ptr('ArrowSchema', exported.schema, 'children'));
    const bytes = core.alloc(binary.length);
    core.bytes.set(binary, bytes);
    s.setPtr('ArrowSchema', node, 'metadata', bytes);
    const imported = acd.importBatch(exported.schema, exported.array);
    const metadata = where === 'schema' ? imported.value.schema.metadata : imported.value.schema.fields[0].metadata;
    // Invalid bytes as lone surrogates U+DC80..U+DCFF (PEP 383), the rest as UTF-8.
    expect([...metadata]).toEqual([['k\udcff', '\udc80\u0000\udcfe\udcc3'], ['plain', 'é']]);
    const again = acd.exportBatch(imported.value);
    const back = where === 'schema' ? again.schema : s.ptrAt(s.ptr('ArrowSchema', again.schema, 'children'));
    expect([...metadataAt(back)]).toEqual([...binary]);
    // And through the raw path.
    const raw = acd.importRaw(again.schema, again.array);
    const meta = where === 'schema' ? raw.value.field.metadata : (raw.value.field.type as { children: t.Field[] }).children[0].metadata;
    expect(meta).toEqual(metadata);
    const rawAgain = acd.exportRaw(raw.value.field, raw.value.array);
    expect([...metadataAt(where === 'schema' ? rawAgain.schema : s.ptrAt(s.ptr('ArrowSchema', rawAgain.schema, 'children')))]).toEqual([...binary]);
    rawAgain.release();
    raw.release();
    again.release();
    imported.release();
    s.setPtr('ArrowSchema', node, 'metadata', 0);
    exported.release();
    core.free(bytes);
    // A lone surrogate outside U+DC80..U+DCFF stands for no byte: it still cannot be exported.
    const e = thrown(() => acd.exportSchema(t.field('x', t.int32(), true, new Map([['k', 'a\ud800']]))));
    expect(e).toBeInstanceOf(ArrowCDeviceError);
    expect((e as Error).message).toMatch(/metadata value 0 \(key 'k'\): not well-formed UTF-16/);
  });

  test('item 7: the own IPC reader reads metadata that is not UTF-8 as the structs do, and exports it byte-exact', () => {
    mark();
    // apache-arrow writes only UTF-8: write placeholders of the same length,
    // then put the bytes in their place (flatbuffer strings carry their length).
    const table = arrow.tableFromArrays({ x: Int32Array.from([1, 2]) });
    table.schema.metadata.set('K@@', 'V@@@');
    const bytes = arrow.tableToIPC(table, 'file');
    const swap = (from: string, to: number[]) => {
      const at = Buffer.from(bytes).indexOf(Buffer.from(from));
      expect(at).toBeGreaterThan(0);
      bytes.set(to, at);
    };
    swap('K@@', [0x6b, 0xff, 0x80]); // 'k', then two bytes that are no UTF-8
    swap('V@@@', [0x00, 0xfe, 0xc3, 0x41]); // a NUL, a stray byte, a cut sequence, 'A'
    const file = readIpc(bytes);
    expect([...file.schema.metadata!]).toEqual([['k\udcff\udc80', '\u0000\udcfe\udcc3A']]);
    const exported = acd.exportSchema(t.field('', t.struct(file.schema.fields), false, file.schema.metadata));
    const m = metadataAt(exported.ptr);
    // One pair: key length 3, 'k' 0xff 0x80, value length 4, 0x00 0xfe 0xc3 'A'.
    expect([...m]).toEqual([1, 0, 0, 0, 3, 0, 0, 0, 0x6b, 0xff, 0x80, 4, 0, 0, 0, 0x00, 0xfe, 0xc3, 0x41]);
    exported.release();
  });

  test("item 7: device 'keep' accepts a CPU array with device_id 0, as the default import does", () => {
    mark();
    const s = acd.core.structs;
    for (const policy of ['keep', 'copy'] as const) {
      const exported = acd.exportDeviceBatch(int32Batch([4, 5]));
      s.setI64('ArrowDeviceArray', exported.array, 'device_id', 0);
      if (policy === 'keep') {
        const resident = acd.importDeviceBatch(exported.schema, exported.array, { device: 'keep' });
        expect(resident.device.name).toBe('cpu');
        expect(resident.numRows).toBe(2);
        const host = resident.toHost();
        expect([...host.value.getChild('x')!.toArray()]).toEqual([4, 5]);
        host.release();
      } else {
        const imported = acd.importDeviceBatch(exported.schema, exported.array);
        expect([...imported.value.getChild('x')!.toArray()]).toEqual([4, 5]);
        imported.release();
      }
      exported.release();
    }
  });

  test.each(['cuda_host', 'cuda'] as const)('item 7: the struct tree waits on the sync event before showing %s buffer bytes', (device) => {
    mark();
    const exported = acd.exportDeviceBatch(int32Batch([1, 2, 3, 4]), { device });
    const waited = acd.deviceStats().eventsWaited;
    const text = (tree: ReturnType<typeof structTree>) => treeText(tree, 'the core').join('\n');
    // Without a way to wait, the bytes are not shown at all.
    const blind = text(structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array }));
    expect(blind).not.toMatch(/buffers\[1\] values @ 0x[0-9a-f]+: [0-9a-f]{2}/);
    expect(blind).toMatch(/buffers\[1\] values @ 0x[0-9a-f]+ \(device memory: not read without waiting on sync_event\)/);
    expect(acd.deviceStats().eventsWaited).toBe(waited);
    // With the library, it waits, then reads through the device.
    const lines = text(deviceTree(acd, exported.schema, exported.array));
    expect(acd.deviceStats().eventsWaited).toBe(waited + 1);
    expect(lines).toMatch(/buffers\[1\] values @ 0x[0-9a-f]+: 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00 \.\.\./);
    exported.release();
    // A CPU array (no event) shows its bytes from the address space alone, with its size.
    const cpu = acd.exportDeviceBatch(int32Batch([1, 2]));
    expect(text(structTree(acd.core, cpu.schema, { struct: 'ArrowDeviceArray', address: cpu.array })))
      .toMatch(/buffers\[1\] values @ 0x[0-9a-f]+, 8 bytes: 01 00 00 00 02 00 00 00$/m);
    cpu.release();
  });

  /** Exports a raw array, imports it at `validate`, returns the error (or null) and releases everything. */
  function importAt(field: t.Field, raw: RawArray, validate: 'default' | 'full'): ArrowCDeviceError | null {
    const exported = acd.exportRaw(field, raw);
    try {
      acd.importRaw(exported.schema, exported.array, { validate }).release();
      return null;
    } catch (e) {
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      return e as ArrowCDeviceError;
    } finally {
      exported.release();
    }
  }

  test('item 7: at full, a date64 that is not a whole number of days is an error', () => {
    mark();
    const day = 86400000n;
    const ok = leaf(t.date('ms'), BigInt64Array.from([0n, day, -3n * day]), 3);
    expect(importAt(t.field('d', t.date('ms')), ok, 'full')).toBeNull();
    const bad = leaf(t.date('ms'), BigInt64Array.from([day, -day - 1n]), 2);
    expect(importAt(t.field('d', t.date('ms')), bad, 'default')).toBeNull();
    expect(importAt(t.field('d', t.date('ms')), bad, 'full')?.message)
      .toBe('root: date64 value 1 is -86400001 ms, not a whole number of days (a multiple of 86400000)');
    // A null slot holds anything.
    const nullSlot: RawArray = { ...bad, nullCount: 1, buffers: [Uint8Array.from([0b01]), bad.buffers[1]] };
    expect(importAt(t.field('d', t.date('ms')), nullSlot, 'full')).toBeNull();
  });

  const pow10 = (n: number) => 10n ** BigInt(n);
  /** Little-endian two's complement bytes of each value, width bytes each. */
  function decimals(values: bigint[], width: number): Uint8Array {
    const out = new Uint8Array(values.length * width);
    values.forEach((v, i) => {
      let x = BigInt.asUintN(width * 8, v);
      for (let b = 0; b < width; b++, x >>= 8n) out[i * width + b] = Number(x & 0xffn);
    });
    return out;
  }

  test.each([[32, 9], [64, 18], [128, 38], [256, 76], [128, 5], [256, 40]] as const)(
    'item 7: at full, a decimal%i(%i) value exceeding its precision is an error', (bits, precision) => {
      mark();
      const type = t.decimal(precision, 2, bits);
      const field = t.field('v', type);
      const width = bits / 8;
      const max = pow10(precision) - 1n;
      const ok = leaf(type, decimals([0n, max, -max, 7n], width), 4);
      expect(importAt(field, ok, 'full')).toBeNull();
      for (const v of [max + 1n, -max - 1n]) {
        const bad = leaf(type, decimals([1n, v], width), 2);
        expect(importAt(field, bad, 'default')).toBeNull();
        expect(importAt(field, bad, 'full')?.message)
          .toBe(`root: decimal${bits}(${precision}, 2) value 1 has more than ${precision} digits`);
      }
    });

  test('item 7: the old gold files holding such values are refused at full for that reason only, and read at default', () => {
    mark();
    const files = goldFiles().filter(([name]) => INVALID_AT_FULL.test(name));
    expect(files.map(([name]) => name.replace(/\.(arrow_file|stream)$/, '')).filter((n, i, a) => a.indexOf(n) === i)).toEqual([
      '0.14.1/generated_datetime', '0.14.1/generated_decimal',
      '1.0.0-littleendian/generated_datetime', '1.0.0-littleendian/generated_decimal', '1.0.0-littleendian/generated_decimal256',
    ]);
    for (const [name, path] of files) {
      const file = readIpc(readFileSync(path));
      const full = roundtripRaw(acd, file, name, { validate: 'full' });
      expect(full.errors.length).toBeGreaterThan(0);
      for (const e of full.errors) expect(e).toMatch(FULL_CONTENT_ERROR);
      const byDefault = roundtripRaw(acd, file, name, { validate: 'default' });
      expect(byDefault).toMatchObject({ ok: true, errors: [], mismatches: [], bytesLeaked: 0 });
    }
  });
});
