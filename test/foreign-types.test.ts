// Issue 11, tests: a foreign C producer and consumer in a module of its own
// (test/foreign/types*.c, built by emcc with its own memory and allocator;
// nothing of arrow-c-device linked in). It produces one array per type of
// the spec, sliced and with nulls, as ArrowArray and ArrowDeviceArray, and a
// stream of record batches of them; here each is imported { from } it in
// copy and view mode at 'full'. It consumes, checks and hashes in C what is
// exported { into } it, batches and streams, releasing them through our
// callbacks. The expected values below are written by hand from the C data
// (in the normalization of ts/model/raw-values.ts), not read from the module.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import { fromArrowData } from '../ts/arrow-js/arrow-data.js';
import { fromArrowType } from '../ts/arrow-js/arrow-types.js';
import { formatOf } from '../ts/model/format.js';
import type { RawArray } from '../ts/model/raw.js';
import { rawValues } from '../ts/model/raw-values.js';
import { error, instantiate, producerWasm, type Producer } from './foreign/module.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  producerWasm();
  acd = await ArrowCDevice.load();
}, 120_000);

const convert = ['run_end_encoded', 'list_view'] as const;
const INT_LIST = [[null], [], null, [15, 16]];

/** Each case of the module in its order: its format, and its 4 logical values (slot 3 null where the type allows). */
const CASES: [string, string, unknown[]][] = [
  ['null', 'n', [null, null, null, null]],
  ['bool', 'b', [false, false, null, true]],
  ['int8', 'c', [-128, 127, null, -7]],
  ['int16', 's', [-32768, 32767, null, 300]],
  ['int32', 'i', [-2147483648, 2147483647, null, 42]],
  ['int64', 'l', ['-9223372036854775808', '9223372036854775807', null, '-5']],
  ['uint8', 'C', [255, 1, null, 128]],
  ['uint16', 'S', [65535, 1, null, 32768]],
  ['uint32', 'I', [4294967295, 1, null, 2147483648]],
  ['uint64', 'L', ['18446744073709551615', '1', null, '9223372036854775808']],
  ['float16', 'e', [1, -2, null, 'Infinity']],
  ['float32', 'f', [1.5, -0.25, null, 65504]],
  ['float64', 'g', [3.14159, -1e300, null, 'NaN']],
  ['decimal32', 'd:9,2,32', ['12345', '-99999', null, '999999999']],
  ['decimal64', 'd:18,3,64', ['123456789012345678', '-1', null, '42']],
  ['decimal128', 'd:38,10', ['-2', '18446744073709551616', null, '7']],
  ['decimal256', 'd:76,0,256', ['-3', '340282366920938463463374607431768211456', null, '5']],
  ['date32', 'tdD', [19000, -1, null, 1]],
  ['date64', 'tdm', ['1641600000000', '-86400000', null, '0']],
  ['time32_s', 'tts', [0, 86399, null, 3600]],
  ['time32_ms', 'ttm', [1, 86399999, null, 43200000]],
  ['time64_us', 'ttu', ['1', '86399999999', null, '5']],
  ['time64_ns', 'ttn', ['86399999999999', '2', null, '7']],
  ['timestamp_ms_tz', 'tsm:Europe/Paris', ['1700000000000', '-1', null, '0']],
  ['duration_s', 'tDs', ['-5', '86400', null, '1']],
  ['interval_months', 'tiM', [{ months: 12 }, { months: -3 }, null, { months: 1 }]],
  ['interval_day_time', 'tiD', [{ days: 1, milliseconds: 500 }, { days: -2, milliseconds: -1000 }, null, { days: 30, milliseconds: 0 }]],
  ['interval_month_day_nano', 'tin', [{ months: 1, days: 2, nanoseconds: '3' }, { months: -1, days: -2, nanoseconds: '-3000000000' }, null,
    { months: 0, days: 31, nanoseconds: '1' }]],
  ['binary', 'z', ['ABCD', '', null, 'FFEE']],
  ['large_binary', 'Z', ['ABCD', '', null, 'FFEE']],
  ['utf8', 'u', ['α', '', null, 'wörld']],
  ['large_utf8', 'U', ['long value', 'b', null, '€']],
  ['binary_view', 'vz', ['ABCD', '808182838485868788898A8B8C', null, '0102030405060708090A0B0C0D0E']],
  ['utf8_view', 'vu', ['exactly12byt', 'longer than twelve bytes', null, 'in the second buffer: β']],
  ['fixed_size_binary', 'w:3', ['000102', 'FFFEFD', null, 'ABCDEF']],
  ['list', '+l', INT_LIST],
  ['large_list', '+L', [[11, null, 13], [], null, [16]]],
  ['list_view', '+vl', [[15, 16], [10, 11, null], null, []]],
  ['large_list_view', '+vL', [[16], [11, null], null, [10, 11, null]]],
  ['fixed_size_list', '+w:2', [[22, 23], [24, null], null, [28, 29]]],
  ['struct', '+s', [[['a', 2], ['b', null]], [['a', null], ['b', 'r']], null, [['a', 5], ['b', 't']]]],
  ['map', '+m', [[['k2', 1], ['k3', null]], [], null, [['k5', 4], ['k6', 5]]]],
  ['sparse_union', '+us:3,7', [{ typeId: 7, value: 's1' }, { typeId: 3, value: 102 }, null, { typeId: 3, value: 104 }]],
  ['dense_union', '+ud:0,1', [{ typeId: 1, value: 'd0' }, { typeId: 0, value: 8 }, null, { typeId: 1, value: 'd1' }]],
  ['dictionary', 'i', ['blue', 'red', null, 'green']],
  ['run_end_encoded', '+r', ['a', null, 'c', 'c']],
];

/** What apache-arrow's own accessors give for some cases (the rest are compared through fromArrowData). */
const ARROW_VALUES: Record<string, (v: arrow.Vector) => unknown[]> = {
  int32: (v) => [...v],
  utf8: (v) => [...v],
  bool: (v) => [...v],
  float64: (v) => [...v].map((x) => (Number.isNaN(x) ? 'NaN' : x)),
  dictionary: (v) => [...v],
  run_end_encoded: (v) => [...v],
  list: (v) => [...v].map((x) => (x === null ? null : [...(x as arrow.Vector)])),
  list_view: (v) => [...v].map((x) => (x === null ? null : [...(x as arrow.Vector)])),
  struct: (v) => [...v].map((r) => (r === null ? null : (r as arrow.StructRow).toJSON())),
};
const ARROW_EXPECTED: Record<string, unknown[]> = {
  float64: [3.14159, -1e300, null, 'NaN'],
  list_view: [[15, 16], [10, 11, null], null, []],
  struct: [{ a: 2, b: null }, { a: null, b: 'r' }, null, { a: 5, b: 't' }],
};

function module() {
  const p = instantiate();
  return { p, from: acd.foreign(p as unknown as Record<string, unknown>, 'producer') };
}

const cString = (p: Producer, at: number) => {
  const bytes = new Uint8Array(p.memory.buffer);
  return new TextDecoder().decode(bytes.subarray(at, bytes.indexOf(0, at)));
};

/** Every buffer of a raw array and its descendants is empty or a view over `memory`. */
function rawViews(raw: RawArray, memory: WebAssembly.Memory): boolean {
  return raw.buffers.every((b) => b === null || b.byteLength === 0 || b.buffer === memory.buffer) &&
    raw.children.every((c) => rawViews(c, memory)) && (raw.dictionary === null || rawViews(raw.dictionary, memory));
}

/** The same for apache-arrow Data. */
function dataViews(d: arrow.Data, memory: WebAssembly.Memory): boolean {
  return [d.values, d.valueOffsets, d.nullBitmap, d.typeIds].every((b) => b === undefined || b === null || b.byteLength === 0 || b.buffer === memory.buffer) &&
    d.children.every((c) => dataViews(c, memory)) && (d.dictionary === undefined || d.dictionary.data.every((c) => dataViews(c, memory)));
}

/** The logical values of an apache-arrow vector, in the raw normalization. */
const arrowValues = (v: arrow.Vector | arrow.Data) => {
  const data = v instanceof arrow.Data ? v : v.data[0];
  return rawValues(fromArrowData(data, fromArrowType(data.type)));
};

test("its C code is its own: libc and the spec's header only, no import but the memory-growth notice", () => {
  for (const file of ['types.h', 'types.c', 'types-nested.c', 'types-consume.c']) {
    const includes = [...readFileSync(join(__dirname, 'foreign', file), 'utf8').matchAll(/^#include [<"](.*)[>"]$/gm)].map((m) => m[1]);
    expect(includes.filter((h) => !/^(errno|math|stdarg|stddef|stdint|stdio|stdlib|string)\.h$/.test(h))).toEqual(file === 'types.h' ? ['arrow_c_device.h'] : ['types.h']);
  }
  expect(WebAssembly.Module.imports(new WebAssembly.Module(producerWasm())).map((i) => `${i.module}.${i.name}`)).toEqual(['env.emscripten_notify_memory_growth']);
});

describe.each(['copy', 'view'] as const)('every type its C code produces, imported from it in %s mode at full', (mode) => {
  test('the module has the cases listed here, in this order', () => {
    const { p } = module();
    expect(Array.from({ length: p.case_count() }, (_, i) => cString(p, p.case_name(i)))).toEqual(CASES.map(([name]) => name));
    expect(p.case_schema(p.case_count())).toBe(0);
  });

  test.each(CASES.map((c, i) => [c[0], i, c[1], c[2]] as const))('%s', (name, i, format, expected) => {
    const { p, from } = module();
    const roots = () => p.types_roots_released();
    const options = { from, mode, validate: 'full', convert } as const;

    // importRaw: every type.
    let schema = p.case_schema(i);
    let array = p.case_array(i);
    const raw = acd.importRaw(schema, array, options);
    expect(formatOf(raw.value.field.type)).toBe(format);
    expect(rawValues(raw.value.array)).toEqual(expected);
    expect(raw.value.array.offset).toBe(1);
    if (mode === 'view') expect(rawViews(raw.value.array, p.memory)).toBe(true);
    expect(roots()).toBe(mode === 'copy' ? 2 : 1); // the schema is copied and released at once
    raw.release();
    expect(roots()).toBe(2);
    p.types_free(schema);
    p.types_free(array);

    // The same as an ArrowDeviceArray on the CPU.
    schema = p.case_schema(i);
    const device = p.case_device_array(i);
    const d = acd.importDeviceRaw(schema, device, options);
    expect(rawValues(d.value.array)).toEqual(expected);
    if (mode === 'view') expect(rawViews(d.value.array, p.memory)).toBe(true);
    d.release();
    expect(roots()).toBe(4);
    p.types_free(schema);
    p.types_free(device);

    // apache-arrow: every type, run-end encoded and list views converted.
    schema = p.case_schema(i);
    array = p.case_array(i);
    const v = acd.importVector(schema, array, options);
    expect(v.value.length).toBe(4);
    expect(arrowValues(v.value)).toEqual(expected);
    if (ARROW_VALUES[name]) expect(ARROW_VALUES[name](v.value)).toEqual(ARROW_EXPECTED[name] ?? expected);
    if (mode === 'view' && name !== 'run_end_encoded' && !name.endsWith('list_view')) expect(dataViews(v.value.data[0], p.memory)).toBe(true);
    v.release();
    expect(roots()).toBe(6);
    p.types_free(schema);
    p.types_free(array);

    // Each release once: the case's own, and its children's by it.
    expect(roots()).toBe(6);
    expect(p.types_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a record batch of every case as columns (each sliced on its own), as ArrowArray and ArrowDeviceArray', () => {
    const { p, from } = module();
    const options = { from, mode, validate: 'full', convert } as const;
    const check = (batch: arrow.RecordBatch) => {
      expect(batch.schema.fields.map((f) => f.name)).toEqual(CASES.map(([name]) => name));
      expect(batch.numRows).toBe(4);
      CASES.forEach(([name, , expected], k) => expect([name, arrowValues(batch.getChildAt(k)!)]).toEqual([name, expected]));
    };
    const schema = p.batch_schema();
    const array = p.batch_array();
    const b = acd.importBatch(schema, array, options);
    check(b.value);
    b.release();
    const schema2 = p.batch_schema();
    const device = p.batch_device_array();
    const d = acd.importDeviceBatch(schema2, device, options);
    check(d.value);
    d.release();
    expect(p.types_roots_released()).toBe(4);
    for (const ptr of [schema, array, schema2, device]) p.types_free(ptr);
    expect(p.types_live_blocks()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('its pull stream of those batches, drained through its table', () => {
    const { p, from } = module();
    const stream = p.types_stream(3n);
    const reader = acd.importArrayStream(stream, { from, mode, validate: 'full', convert });
    const batches = reader.readAll();
    expect(batches.length).toBe(3);
    for (const batch of batches) {
      CASES.forEach(([name, , expected], k) => expect([name, arrowValues(batch.getChildAt(k)!)]).toEqual([name, expected]));
      if (mode === 'view') expect(batch.getChildAt(4)!.data[0].values.buffer).toBe(p.memory.buffer);
    }
    reader.release();
    expect(p.types_streams_released()).toBe(1);
    expect(p.types_roots_released()).toBe(1 + 3); // the schema and each batch
    p.types_free(stream);
    expect(p.types_live_blocks()).toBe(0);
    expect(from.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test.each([
    ['a utf8 view whose prefix differs from its data', 'utf8_view', (p: Producer, buffers: number) => {
      const views = new DataView(p.memory.buffer).getUint32(buffers + 4, true);
      new Uint8Array(p.memory.buffer)[views + 16 * 2 + 4] ^= 0x20; // slot 2: out of line, in buffer 1 at 3
    }, /^producer: root\.buffers\[1\]: view 2: expected the prefix to equal the first 4 bytes of its data \(buffer 1, offset 3\), found different bytes$/],
    ['a dense union offset past its child', 'dense_union', (p: Producer, buffers: number) => {
      const offsets = new DataView(p.memory.buffer).getUint32(buffers + 4, true);
      new DataView(p.memory.buffer).setInt32(offsets + 4 * 4, 2, true); // slot 4 into "s" of 2 slots
    }, /^producer: root\.buffers\[1\]: expected 0 <= offsets\[4\] < 2 \(the length of children\[1\]\), found 2$/],
  ])('%s is refused, naming the place; nothing is released', (_what, name, corrupt, message) => {
    const { p, from } = module();
    const i = CASES.findIndex(([n]) => n === name);
    const schema = p.case_schema(i);
    const array = p.case_array(i);
    corrupt(p, from.space.structs.ptr('ArrowArray', array, 'buffers'));
    const err = error(() => acd.importRaw(schema, array, { from, mode, validate: 'full' }));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toMatch(message);
    expect(p.types_roots_released()).toBe(0);
    expect(from.space.structs.ptr('ArrowArray', array, 'release')).not.toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
    // Still the caller's: its own releases free everything.
    from.space.release('ArrowArray', array);
    from.space.release('ArrowSchema', schema);
    expect(p.types_roots_released()).toBe(2);
    p.types_free(schema);
    p.types_free(array);
    expect(p.types_live_blocks()).toBe(0);
  });
});

