// Integration JSON: every gold file read → written → read back equal, its
// values checked against the IPC file of the same case read by apache-arrow;
// hand-written files for what the gold files lack; errors; rawValues on
// arrays with an offset. No wasm involved.
// Longer than 400 lines because its cases share the gold-file loaders and the
// hand-written files; they are one table of what the reader must do.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as arrow from 'apache-arrow';
import { fromArrowData } from '../ts/arrow-js/arrow-data.js';
import { Core } from '../ts/abi/core.js';
import { writeSchema } from '../ts/model/schema.js';
import { fromArrowBatch } from '../ts/arrow-js/arrow-types.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../ts/abi/errors.js';
import { parseJson } from '../ts/io/json/parse.js';
import { readIntegrationJson, type IntegrationFile } from '../ts/io/json/read.js';
import { writeIntegrationJson } from '../ts/io/json/write.js';
import { readRaw, writeRaw, type RawArray } from '../ts/model/raw.js';
import { compareRaw, rawValues } from '../ts/model/raw-values.js';
import * as t from '../ts/model/types.js';
import { goldLevel } from './helpers.js';
import { fieldsEqual, metadataEqual, typeToString, type DataType, type Field, type Schema } from '../ts/model/types.js';

const GOLD = join(__dirname, '..', '..', 'shared', 'testdata', 'arrow-testing');

/** Every gold JSON file: [folder/case, path]. */
function goldJson(): [string, string][] {
  const out: [string, string][] = [];
  for (const folder of readdirSync(GOLD, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of readdirSync(join(GOLD, folder)).sort()) {
      if (name.endsWith('.json.gz')) out.push([`${folder}/${name.replace(/\.json\.gz$/, '')}`, join(GOLD, folder, name)]);
    }
  }
  return out;
}

const gunzip = (path: string) => gunzipSync(readFileSync(path)).toString('utf8');

/** Schema differences, field by field. */
function schemaDifferences(a: Schema, b: Schema, options: t.EqualOptions = {}): string[] {
  const out: string[] = [];
  if (a.fields.length !== b.fields.length) out.push(`expected ${a.fields.length} fields, found ${b.fields.length}`);
  a.fields.forEach((f, i) => {
    const g = b.fields[i];
    if (g !== undefined && !fieldsEqual(f, g, options)) out.push(`field ${i}: expected ${describeField(f)}, found ${describeField(g)}`);
  });
  if (options.checkMetadata !== false && !metadataEqual(a.metadata, b.metadata)) out.push('schema metadata differs');
  return out;
}

const describeField = (f: Field) => `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;

/** Differences between two files: schema, batch count, then batches (compareRaw). */
function fileDifferences(a: IntegrationFile, b: IntegrationFile): string[] {
  const out = schemaDifferences(a.schema, b.schema);
  if (a.batches.length !== b.batches.length) out.push(`expected ${a.batches.length} batches, found ${b.batches.length}`);
  a.batches.forEach((batch, i) => {
    const other = b.batches[i];
    if (other !== undefined) out.push(...compareRaw(batch, other, `batches[${i}]`));
  });
  return out;
}

const roundtrip = (file: IntegrationFile) => readIntegrationJson(writeIntegrationJson(file));

// The testdata README: arrow-js misreads the IPC of these unions (V4 metadata with a validity buffer).
const ARROW_JS_MISREADS = /^0\.17\.1\/generated_union$/;
// arrow-js renames non-canonical map children to entries/key/value.
const ARROW_JS_RENAMES = /generated_map_non_canonical$/;

/** The values of a vector read by apache-arrow, normalized like rawValues, for the types where that is plain. */
function arrowJsValues(v: arrow.Vector, type: DataType): unknown[] | null {
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
  let f: ((x: unknown) => unknown) | null = null;
  switch (type.kind) {
    case 'bool': case 'utf8': case 'large_utf8':
      f = (x) => x;
      break;
    case 'int':
      f = type.bitWidth === 64 ? (x) => String(x) : (x) => x;
      break;
    case 'float':
      f = (x) => (Number.isFinite(x) ? x : String(x));
      break;
    case 'binary': case 'large_binary': case 'fixed_size_binary':
      f = (x) => hex(x as Uint8Array);
      break;
    default:
      return null;
  }
  return Array.from({ length: v.length }, (_, i) => {
    const x = v.get(i);
    return x === null || x === undefined ? null : f!(x);
  });
}

describe('gold files', () => {
  const files = goldJson();
  test('all 33 cases are there', () => {
    expect(files.length).toBe(33);
  });

  test.each(files)('%s: read → write → read gives the same schema and batches', (_, path) => {
    const file = readIntegrationJson(gunzip(path));
    const back = roundtrip(file);
    expect(fileDifferences(file, back)).toEqual([]);
    // Physical details a round trip keeps: lengths, null counts.
    back.batches.forEach((b, i) => {
      b.children.forEach((c, k) => {
        expect([c.length, c.nullCount]).toEqual([file.batches[i]!.children[k]!.length, file.batches[i]!.children[k]!.nullCount]);
      });
    });
    // And writing again gives the same text.
    expect(writeIntegrationJson(back)).toBe(writeIntegrationJson(file));
  });

  test.each(files)('%s: the values agree with the IPC file read by apache-arrow', (name, path) => {
    const file = readIntegrationJson(gunzip(path));
    const table = arrow.tableFromIPC(readFileSync(path.replace(/\.json\.gz$/, '.arrow_file')));
    if (file.batches.length === 0) {
      // arrow-js gives one empty placeholder batch for a file without batches.
      expect(table.numRows).toBe(0);
      expect(table.schema.fields.length).toBe(file.schema.fields.length);
      return;
    }
    if (ARROW_JS_MISREADS.test(name)) return;
    expect(table.batches.length).toBe(file.batches.length);
    let compared = 0;
    table.batches.forEach((batch, i) => {
      const ipcSchema = fromArrowBatch(batch);
      // arrow-js merges top-level fields of the same name (generated_union has two 'sparse' and two
      // 'dense'): fromArrowBatch takes their types from the data, but their nullability is lost.
      const names = file.schema.fields.map((f) => f.name);
      const ipcFields = ipcSchema.fields.map((g, k) => (names.indexOf(g.name) !== names.lastIndexOf(g.name) ? { ...g, nullable: file.schema.fields[k]!.nullable } : g));
      expect(schemaDifferences(file.schema, { ...ipcSchema, fields: ipcFields }, { checkNames: !ARROW_JS_RENAMES.test(name) })).toEqual([]);
      file.schema.fields.forEach((f, k) => {
        const json = file.batches[i]!.children[k]!;
        const data = batch.data.children[k]!;
        const ipc = fromArrowData(data, ipcSchema.fields[k]!.type, `batches[${i}].columns[${k}]`);
        expect([f.name, rawValues(ipc)]).toEqual([f.name, rawValues(json)]);
        expect([f.name, json.nullCount]).toEqual([f.name, ipc.nullCount]);
        const plain = arrowJsValues(batch.getChildAt(k)!, f.type);
        if (plain !== null) {
          expect([f.name, plain]).toEqual([f.name, rawValues(json)]);
          compared++;
        }
      });
    });
    if (/primitive$/.test(name)) expect(compared).toBeGreaterThan(0);
  });
});

// ---- hand-written files -------------------------------------------------------------

type J = Record<string, unknown>;
const fld = (name: string, type: J, children: J[] = [], extra: J = {}): J => ({ name, nullable: true, type, children, ...extra });
const col = (name: string, count: number, buffers: J = {}, children?: J[]): J => ({ name, count, ...buffers, ...(children ? { children } : {}) });
const jsonFile = (fields: J[], columns: J[], count: number, dictionaries?: J[], metadata?: J[]) =>
  JSON.stringify({ schema: { fields, ...(metadata ? { metadata } : {}) }, ...(dictionaries ? { dictionaries } : {}), batches: [{ count, columns }] });
const hexOf = (s: string) => Buffer.from(s).toString('hex').toUpperCase();
const INT32: J = { name: 'int', isSigned: true, bitWidth: 32 };
const UTF8: J = { name: 'utf8' };

/** Every valid hand-written file, for the C core checks below. */
const HAND_WRITTEN: string[] = [];

/** Reads a file, checks that it round-trips, returns it. */
function readChecked(text: string): IntegrationFile {
  HAND_WRITTEN.push(text);
  const file = readIntegrationJson(text);
  expect(fileDifferences(file, roundtrip(file))).toEqual([]);
  return file;
}
const columnValues = (file: IntegrationFile, k: number) => rawValues(file.batches[0]!.children[k]!);

describe('hand-written files', () => {
  test('binary view and utf8 view: inline and out-of-line values, 2 variadic buffers', () => {
    const long0 = 'this is a long string';
    const long1 = 'xxxanother string!';
    const views = (encode: (s: string) => string) => ({
      VALIDITY: [1, 1, 0, 1, 1],
      VIEWS: [
        { SIZE: 5, INLINED: encode('hello') },
        { SIZE: 20, PREFIX_HEX: hexOf('this'), BUFFER_INDEX: 0, OFFSET: 0 },
        { SIZE: 0, INLINED: encode('') },
        { SIZE: 13, PREFIX_HEX: hexOf('anot'), BUFFER_INDEX: 1, OFFSET: 3 },
        { SIZE: 12, INLINED: encode('twelve bytes') },
      ],
      VARIADIC_DATA_BUFFERS: [hexOf(long0), hexOf(long1)],
    });
    const file = readChecked(jsonFile(
      [fld('s', { name: 'utf8view' }), fld('b', { name: 'binaryview' })],
      [col('s', 5, views((s) => s)), col('b', 5, views(hexOf))],
      5,
    ));
    const expected = ['hello', 'this is a long strin', null, 'another strin', 'twelve bytes'];
    expect(columnValues(file, 0)).toEqual(expected);
    expect(columnValues(file, 1)).toEqual(expected.map((s) => (s === null ? null : hexOf(s))));
    const s = file.batches[0]!.children[0]!;
    // [validity, views, 2 variadic buffers, sizes]
    expect(s.buffers.length).toBe(5);
    expect(Array.from(new BigInt64Array(s.buffers[4]!.slice().buffer))).toEqual([21n, 18n]);
    expect(s.nullCount).toBe(1);
  });

  test('list view and large list view: out of order and overlapping views', () => {
    const child = col('item', 6, { VALIDITY: [1, 1, 1, 1, 0, 1], DATA: [10, 20, 30, 40, 50, 60] });
    const file = readChecked(jsonFile(
      [fld('lv', { name: 'listview' }, [fld('item', INT32)]), fld('llv', { name: 'largelistview' }, [fld('item', INT32)])],
      [
        col('lv', 5, { VALIDITY: [1, 1, 1, 0, 1], OFFSET: [3, 0, 1, 5, 2], SIZE: [2, 3, 3, 0, 0] }, [child]),
        col('llv', 5, { VALIDITY: [1, 1, 1, 0, 1], OFFSET: ['3', '0', '1', '5', '2'], SIZE: ['2', '3', '3', '0', '0'] }, [child]),
      ],
      5,
    ));
    const expected = [[40, null], [10, 20, 30], [20, 30, 40], null, []];
    expect(columnValues(file, 0)).toEqual(expected);
    expect(columnValues(file, 1)).toEqual(expected);
    expect(file.schema.fields.map((f) => typeToString(f.type))).toEqual(['list_view<item: int32>', 'large_list_view<item: int32>']);
  });

  test.each([16, 32, 64])('run-end encoded with int%d run ends', (bitWidth) => {
    const ends = bitWidth === 64 ? ['2', '3', '6'] : [2, 3, 6];
    const file = readChecked(jsonFile(
      [fld('ree', { name: 'runendencoded' }, [
        { ...fld('run_ends', { name: 'int', isSigned: true, bitWidth }), nullable: false },
        fld('values', UTF8),
      ])],
      [col('ree', 6, {}, [
        col('run_ends', 3, { VALIDITY: [1, 1, 1], DATA: ends }),
        col('values', 3, { VALIDITY: [1, 0, 1], OFFSET: [0, 1, 1, 2], DATA: ['a', '', 'c'] }),
      ])],
      6,
    ));
    expect(columnValues(file, 0)).toEqual(['a', 'a', null, 'c', 'c', 'c']);
    const ree = file.batches[0]!.children[0]!;
    expect([ree.buffers.length, ree.nullCount, ree.children[0]!.buffers[1]!.length]).toEqual([0, 0, 3 * bitWidth / 8]);
  });

  test('decimal32 and decimal64 (and the default decimal128)', () => {
    const file = readChecked(jsonFile(
      [
        fld('d32', { name: 'decimal', precision: 9, scale: 2, bitWidth: 32 }),
        fld('d64', { name: 'decimal', precision: 18, scale: -3, bitWidth: 64 }),
        fld('d128', { name: 'decimal', precision: 38, scale: 10 }),
      ],
      [
        col('d32', 3, { VALIDITY: [1, 1, 0], DATA: ['12345', '-999999999', '0'] }),
        col('d64', 3, { VALIDITY: [1, 1, 1], DATA: ['-123456789012345678', '999999999999999999', '-1'] }),
        col('d128', 3, { VALIDITY: [1, 1, 1], DATA: ['-99999999999999999999999999999999999999', '1', '0'] }),
      ],
      3,
    ));
    expect(file.schema.fields.map((f) => typeToString(f.type))).toEqual(['decimal32(9, 2)', 'decimal64(18, -3)', 'decimal128(38, 10)']);
    expect(columnValues(file, 0)).toEqual(['12345', '-999999999', null]);
    expect(columnValues(file, 1)).toEqual(['-123456789012345678', '999999999999999999', '-1']);
    expect(columnValues(file, 2)).toEqual(['-99999999999999999999999999999999999999', '1', '0']);
    const d32 = file.batches[0]!.children[0]!;
    expect(Array.from(new Int32Array(d32.buffers[1]!.slice().buffer))).toEqual([12345, -999999999, 0]);
  });

  test('sparse and dense unions with type ids that are not child positions', () => {
    const file = readChecked(jsonFile(
      [
        fld('sparse', { name: 'union', mode: 'SPARSE', typeIds: [3, 1] }, [fld('i', { name: 'int', isSigned: true, bitWidth: 8 }), fld('s', UTF8)]),
        fld('dense', { name: 'union', mode: 'DENSE', typeIds: [7, 2] }, [fld('i', { name: 'int', isSigned: true, bitWidth: 8 }), fld('s', UTF8)]),
      ],
      [
        col('sparse', 4, { TYPE_ID: [1, 3, 3, 1] }, [
          col('i', 4, { VALIDITY: [1, 1, 0, 1], DATA: [9, 5, 0, 9] }),
          col('s', 4, { VALIDITY: [1, 0, 1, 1], OFFSET: [0, 1, 1, 2, 4], DATA: ['a', '', 'b', 'cd'] }),
        ]),
        col('dense', 4, { TYPE_ID: [2, 7, 2, 7], OFFSET: [1, 0, 0, 1] }, [
          col('i', 2, { VALIDITY: [1, 0], DATA: [-5, 0] }),
          col('s', 2, { VALIDITY: [1, 1], OFFSET: [0, 1, 3], DATA: ['x', 'yz'] }),
        ]),
      ],
      4,
    ));
    expect(columnValues(file, 0)).toEqual([{ typeId: 1, value: 'a' }, { typeId: 3, value: 5 }, null, { typeId: 1, value: 'cd' }]);
    expect(columnValues(file, 1)).toEqual([{ typeId: 2, value: 'yz' }, { typeId: 7, value: -5 }, { typeId: 2, value: 'x' }, null]);
    expect(file.batches[0]!.children.map((c) => [c.buffers.length, c.nullCount])).toEqual([[1, 0], [2, 0]]);
  });

  test('dictionaries: unsigned index types, and a dictionary of lists of dictionary-encoded strings', () => {
    const dictField = (name: string, bitWidth: number, id: number, type: J = UTF8, children: J[] = []) =>
      fld(name, type, children, { dictionary: { id, indexType: { name: 'int', isSigned: false, bitWidth }, isOrdered: bitWidth === 16 } });
    const file = readChecked(jsonFile(
      [
        dictField('u8', 8, 0),
        dictField('u16', 16, 0),
        dictField('u32', 32, 0),
        dictField('u64', 64, 0),
        dictField('nested', 8, 1, { name: 'list' }, [dictField('item', 8, 0)]),
      ],
      [
        col('u8', 3, { VALIDITY: [1, 0, 1], DATA: [2, 200, 0] }),
        col('u16', 3, { VALIDITY: [1, 1, 1], DATA: [0, 1, 2] }),
        col('u32', 3, { VALIDITY: [1, 1, 1], DATA: [4294967295, 1, 2].map((v, i) => (i === 0 ? 1 : v)) }),
        col('u64', 3, { VALIDITY: [1, 1, 0], DATA: ['2', '0', '18446744073709551615'] }),
        col('nested', 3, { VALIDITY: [1, 1, 1], DATA: [1, 0, 1] }),
      ],
      3,
      [
        { id: 0, data: { count: 3, columns: [col('DICT0', 3, { VALIDITY: [1, 1, 1], OFFSET: [0, 1, 2, 3], DATA: ['x', 'y', 'z'] })] } },
        { id: 1, data: { count: 2, columns: [col('DICT1', 2, { VALIDITY: [1, 1], OFFSET: [0, 2, 3] }, [col('item', 3, { VALIDITY: [1, 1, 1], DATA: [2, 0, 1] })])] } },
      ],
    ));
    expect([0, 1, 2, 3, 4].map((k) => columnValues(file, k))).toEqual([
      ['z', null, 'x'],
      ['x', 'y', 'z'],
      ['y', 'y', 'z'],
      ['z', 'x', null],
      [['y'], ['z', 'x'], ['y']],
    ]);
    const types = file.schema.fields.map((f) => typeToString(f.type));
    expect(types[1]).toBe('dictionary<values=utf8, indices=uint16, ordered>');
    expect(types[4]).toBe('dictionary<values=list<item: dictionary<values=utf8, indices=uint8>>, indices=uint8>');
    // One dictionary of id 0, shared by the columns and the nested lists' items.
    const columns = file.batches[0]!.children;
    expect(columns[1]!.dictionary).toBe(columns[0]!.dictionary);
    expect(columns[4]!.dictionary!.children[0]!.dictionary).toBe(columns[0]!.dictionary);
    // Written back: two dictionaries, the shared one once.
    const written = parseJson(writeIntegrationJson(file)) as { dictionaries: { id: number }[] };
    expect(written.dictionaries.map((d) => d.id)).toEqual([0, 1]);
  });

  test('map with keysSorted and non-canonical names', () => {
    const entries = { ...fld('pairs', { name: 'struct' }, [{ ...fld('k', UTF8), nullable: false }, fld('v', INT32)]), nullable: false };
    const file = readChecked(jsonFile(
      [fld('m', { name: 'map', keysSorted: true }, [entries])],
      [col('m', 3, { VALIDITY: [1, 0, 1], OFFSET: [0, 2, 2, 3] }, [
        col('pairs', 3, { VALIDITY: [1, 1, 1] }, [
          col('k', 3, { VALIDITY: [1, 1, 1], OFFSET: [0, 1, 2, 3], DATA: ['a', 'b', 'c'] }),
          col('v', 3, { VALIDITY: [1, 0, 1], DATA: [1, 2, 3] }),
        ]),
      ])],
      3,
    ));
    expect(typeToString(file.schema.fields[0]!.type)).toBe('map<k: utf8 not null, v: int32, keys_sorted>');
    const type = file.schema.fields[0]!.type as Extract<DataType, { kind: 'map' }>;
    expect(type.entries.name).toBe('pairs');
    expect(columnValues(file, 0)).toEqual([[['a', 1], ['b', null]], null, [['c', 3]]]);
  });

  test('extension metadata, schema metadata, duplicate keys, null type, half floats, intervals, bools as 1/0', () => {
    const ext = [{ key: 'ARROW:extension:name', value: 'my.ext' }, { key: 'ARROW:extension:metadata', value: '{"a":1}' }, { key: 'dup', value: '1' }, { key: 'dup', value: '2' }];
    const text = jsonFile(
      [
        fld('e', { name: 'fixedsizebinary', byteWidth: 2 }, [], { metadata: ext }),
        fld('n', { name: 'null' }),
        fld('h', { name: 'floatingpoint', precision: 'HALF' }),
        fld('mdn', { name: 'interval', unit: 'MONTH_DAY_NANO' }),
        fld('dt', { name: 'interval', unit: 'DAY_TIME' }),
        fld('ym', { name: 'interval', unit: 'YEAR_MONTH' }),
        fld('b', { name: 'bool' }),
        fld('ts', { name: 'timestamp', unit: 'NANOSECOND', timezone: 'UTC' }),
      ],
      [
        col('e', 2, { VALIDITY: [1, 1], DATA: ['ABCD', '0001'] }),
        col('n', 2),
        col('h', 2, { VALIDITY: [1, 1], DATA: [1.5, -0.333] }),
        col('mdn', 2, { VALIDITY: [1, 0], DATA: [{ months: 1, days: -2, nanoseconds: 'BIGNANOS' }, { months: 0, days: 0, nanoseconds: 0 }] }),
        col('dt', 2, { VALIDITY: [1, 1], DATA: [{ days: 3, milliseconds: -4 }, { days: 0, milliseconds: 86400000 }] }),
        col('ym', 2, { VALIDITY: [1, 1], DATA: [-13, 24] }),
        col('b', 2, { VALIDITY: [1, 1], DATA: [1, 0] }),
        col('ts', 2, { VALIDITY: [1, 1], DATA: ['-9223372036854775808', 'BIGTS'] }),
      ],
      2,
      undefined,
      [{ key: 'schema', value: 'level' }],
    ).replace('"BIGNANOS"', '9223372036854775807').replace('"BIGTS"', '9007199254740993'); // bare, above 2^53
    const file = readChecked(text);
    const [e, n, h, mdn, dt, ym, b, ts] = file.schema.fields;
    expect(t.extensionName(e!)).toBe('my.ext');
    expect(e!.metadata).toEqual(new Map([['ARROW:extension:name', 'my.ext'], ['ARROW:extension:metadata', '{"a":1}'], ['dup', '2']]));
    expect(file.schema.metadata).toEqual(new Map([['schema', 'level']]));
    expect([n, h, mdn, dt, ym, b, ts].map((f) => typeToString(f!.type))).toEqual([
      'null', 'float16', 'interval[month_day_nano]', 'interval[day_time]', 'interval[months]', 'bool', 'timestamp[ns, tz=UTC]',
    ]);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((k) => columnValues(file, k))).toEqual([
      ['ABCD', '0001'],
      [null, null],
      [1.5, -0.3330078125], // the nearest half to -0.333
      [{ months: 1, days: -2, nanoseconds: '9223372036854775807' }, null],
      [{ days: 3, milliseconds: -4 }, { days: 0, milliseconds: 86400000 }],
      [{ months: -13 }, { months: 24 }],
      [true, false],
      ['-9223372036854775808', '9007199254740993'],
    ]);
    expect(file.batches[0]!.children[1]!.nullCount).toBe(2);
    // Nanoseconds are written as a bare JSON integer, exactly.
    expect(writeIntegrationJson(file)).toContain('"nanoseconds":9223372036854775807');
  });

  test('values in null slots are kept, as data', () => {
    const file = readChecked(jsonFile([fld('i', INT32)], [col('i', 2, { VALIDITY: [0, 1], DATA: [77, 1] })], 2));
    const raw = file.batches[0]!.children[0]!;
    expect(Array.from(new Int32Array(raw.buffers[1]!.slice().buffer))).toEqual([77, 1]);
    expect(writeIntegrationJson(file)).toContain('"DATA":[77,1]');
  });

  test('a JSON null in the DATA of a null slot stands for zero; in a valid slot it is an error', () => {
    const file = readChecked(jsonFile(
      [fld('i', INT32), fld('s', UTF8), fld('v', { name: 'utf8view' }), fld('f', { name: 'fixedsizebinary', byteWidth: 2 })],
      [
        col('i', 2, { VALIDITY: [0, 1], DATA: [null, 5] }),
        col('s', 2, { VALIDITY: [0, 1], OFFSET: [0, 0, 1], DATA: [null, 'a'] }),
        col('v', 2, { VALIDITY: [0, 1], VIEWS: [null, { SIZE: 1, INLINED: 'b' }] }),
        col('f', 2, { VALIDITY: [1, 0], DATA: ['ABCD', null] }),
      ],
      2,
    ));
    expect([0, 1, 2, 3].map((k) => columnValues(file, k))).toEqual([[null, 5], [null, 'a'], [null, 'b'], ['ABCD', null]]);
    expect(Array.from(new Int32Array(file.batches[0]!.children[0]!.buffers[1]!.slice().buffer))).toEqual([0, 5]);
    expect(errorOf(() => readIntegrationJson(jsonFile([fld('i', INT32)], [col('i', 1, { VALIDITY: [1], DATA: [null] })], 1))))
      .toBe("batches[0].columns[0] 'i'.DATA[0]: expected an integer, found null");
  });

  test('pre-1.0 unions: an all-valid VALIDITY is dropped, one with nulls is refused', () => {
    const union = (validity: number[]) => jsonFile(
      [fld('u', { name: 'union', mode: 'SPARSE', typeIds: [0] }, [fld('i', INT32)])],
      [col('u', 2, { VALIDITY: validity, TYPE_ID: [0, 0] }, [col('i', 2, { VALIDITY: [1, 1], DATA: [1, 2] })])],
      2,
    );
    const file = readChecked(union([1, 1]));
    expect(file.batches[0]!.children[0]!.buffers.length).toBe(1);
    expect(() => readIntegrationJson(union([1, 0]))).toThrow(/batches\[0\]\.columns\[0\] 'u'\.VALIDITY: a union with 1 null slots/);
    try {
      readIntegrationJson(union([1, 0]));
    } catch (e) {
      expect((e as ArrowCDeviceError).errno).toBe(ENOSYS);
    }
  });
});

// ---- errors -------------------------------------------------------------------------

/** The message of the ArrowCDeviceError (EINVAL) that fn throws. */
function errorOf(fn: () => unknown, code = EINVAL): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ArrowCDeviceError);
    expect((e as ArrowCDeviceError).errno).toBe(code);
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('errors name the place, what was expected and what was found', () => {
  const utf8Column = (count: number, offsets: number[]) => col('utf8_nullable', count, { VALIDITY: Array(count).fill(1), OFFSET: offsets, DATA: Array(count).fill('') });
  const ints = (name: string, count: number) => col(name, count, { VALIDITY: Array(count).fill(1), DATA: Array(count).fill(0) });

  test('wrong number of offsets', () => {
    const fields = [fld('a', INT32), fld('b', INT32), fld('c', INT32), fld('utf8_nullable', UTF8)];
    const text = JSON.stringify({
      schema: { fields },
      batches: [
        { count: 7, columns: [ints('a', 7), ints('b', 7), ints('c', 7), utf8Column(7, [0, 0, 0, 0, 0, 0, 0, 0])] },
        { count: 7, columns: [ints('a', 7), ints('b', 7), ints('c', 7), utf8Column(7, [0, 0, 0, 0, 0, 0, 0])] },
      ],
    });
    expect(errorOf(() => readIntegrationJson(text))).toBe("batches[1].columns[3] 'utf8_nullable'.OFFSET: expected 8 entries, found 7");
  });

  const oneColumn = (field: J, column: J, count = (column.count as number)) => jsonFile([field], [column], count);

  test.each<[string, string, string]>([
    ['unknown type name', oneColumn(fld('x', { name: 'foo' }), col('x', 0)),
      `schema.fields[0] 'x'.type.name: unknown type name "foo"; expected one of null, bool, int`],
    ['bad hex', oneColumn(fld('b', { name: 'binary' }), col('b', 1, { VALIDITY: [1], OFFSET: [0, 1], DATA: ['0G'] })),
      `batches[0].columns[0] 'b'.DATA[0]: expected a hex string of whole bytes, found "0G"`],
    ['odd hex', oneColumn(fld('f', { name: 'fixedsizebinary', byteWidth: 2 }), col('f', 1, { VALIDITY: [1], DATA: ['ABC'] })),
      `batches[0].columns[0] 'f'.DATA[0]: expected a hex string of whole bytes, found "ABC"`],
    ['fixed size binary width', oneColumn(fld('f', { name: 'fixedsizebinary', byteWidth: 2 }), col('f', 1, { VALIDITY: [1], DATA: ['AB'] })),
      `batches[0].columns[0] 'f'.DATA[0]: expected 2 bytes, found 1`],
    ['data that disagrees with offsets', oneColumn(fld('s', UTF8), col('s', 2, { VALIDITY: [1, 1], OFFSET: [0, 3, 4], DATA: ['ab', 'c'] })),
      `batches[0].columns[0] 's'.DATA[0]: expected 3 bytes (OFFSET[1] - OFFSET[0]), found 2`],
    ['wrong number of values', oneColumn(fld('i', INT32), col('i', 3, { VALIDITY: [1, 1, 1], DATA: [1, 2] })),
      `batches[0].columns[0] 'i'.DATA: expected 3 entries, found 2`],
    ['wrong column count', oneColumn(fld('i', INT32), col('i', 2, { VALIDITY: [1, 1], DATA: [1, 2] }), 3),
      `batches[0].columns[0] 'i'.count: expected 3, found 2`],
    ['validity that is not 0 or 1', oneColumn(fld('i', INT32), col('i', 1, { VALIDITY: [2], DATA: [1] })),
      `batches[0].columns[0] 'i'.VALIDITY[0]: expected 1 or 0, found 2`],
    ['integer out of range', oneColumn(fld('i', { name: 'int', isSigned: true, bitWidth: 8 }), col('i', 1, { VALIDITY: [1], DATA: [300] })),
      `batches[0].columns[0] 'i'.DATA[0]: expected an integer in [-128, 127], found 300`],
    ['uint64 out of range', oneColumn(fld('i', { name: 'int', isSigned: false, bitWidth: 64 }), col('i', 1, { VALIDITY: [1], DATA: ['-1'] })),
      `batches[0].columns[0] 'i'.DATA[0]: expected an uint64, found -1`],
    ['not an integer', oneColumn(fld('i', { name: 'int', isSigned: true, bitWidth: 64 }), col('i', 1, { VALIDITY: [1], DATA: ['1.5'] })),
      `batches[0].columns[0] 'i'.DATA[0]: expected an integer, found "1.5"`],
    ['decimal too wide', oneColumn(fld('d', { name: 'decimal', precision: 9, scale: 0, bitWidth: 32 }), col('d', 1, { VALIDITY: [1], DATA: ['2147483648'] })),
      `batches[0].columns[0] 'd'.DATA[0]: expected an integer that fits 32 bits, found 2147483648`],
    ['missing children', oneColumn(fld('s', { name: 'struct' }, [fld('a', INT32)]), col('s', 1, { VALIDITY: [1] }, [])),
      `batches[0].columns[0] 's'.children: expected 1 entries, found 0`],
    ['short struct child', oneColumn(fld('s', { name: 'struct' }, [fld('a', INT32)]), col('s', 2, { VALIDITY: [1, 1] }, [ints('a', 1)])),
      `batches[0].columns[0] 's'.children[0] 'a'.count: expected at least 2, found 1`],
    ['unknown dictionary id', oneColumn(fld('d', UTF8, [], { dictionary: { id: 5, indexType: INT32, isOrdered: false } }), ints('d', 1)),
      `batches[0].columns[0] 'd': dictionary id 5 is not in "dictionaries"`],
    ['union type id', oneColumn(fld('u', { name: 'union', mode: 'SPARSE', typeIds: [4] }, [fld('i', INT32)]), col('u', 1, { TYPE_ID: [3] }, [ints('i', 1)])),
      `batches[0].columns[0] 'u'.TYPE_ID[0]: expected one of the type ids 4, found 3`],
    ['dense union offset', oneColumn(fld('u', { name: 'union', mode: 'DENSE', typeIds: [4] }, [fld('i', INT32)]), col('u', 2, { TYPE_ID: [4, 4], OFFSET: [0, 1] }, [ints('i', 1)])),
      `batches[0].columns[0] 'u'.OFFSET[1]: expected an offset into child 0 'i' of 1 slots, found 1`],
    ['list offset past the child', oneColumn(fld('l', { name: 'list' }, [fld('item', INT32)]), col('l', 1, { VALIDITY: [1], OFFSET: [0, 3] }, [ints('item', 2)])),
      `batches[0].columns[0] 'l'.OFFSET[1]: expected an integer in [0, 2], found 3`],
    ['time bit width', oneColumn(fld('t', { name: 'time', unit: 'SECOND', bitWidth: 64 }), ints('t', 0)),
      `schema.fields[0] 't'.type.bitWidth: expected 32 for a time in SECOND, found 64`],
    ['view prefix', oneColumn(fld('v', { name: 'binaryview' }), col('v', 1, { VALIDITY: [1], VIEWS: [{ SIZE: 13, PREFIX_HEX: 'FFFFFFFF', BUFFER_INDEX: 0, OFFSET: 0 }], VARIADIC_DATA_BUFFERS: [hexOf('0123456789abc')] })),
      `batches[0].columns[0] 'v'.VIEWS[0].PREFIX_HEX: expected the first 4 bytes of the viewed data, found "FFFFFFFF"`],
    ['view past its buffer', oneColumn(fld('v', { name: 'utf8view' }), col('v', 1, { VALIDITY: [1], VIEWS: [{ SIZE: 13, PREFIX_HEX: hexOf('1234'), BUFFER_INDEX: 0, OFFSET: 1 }], VARIADIC_DATA_BUFFERS: [hexOf('1234567890abc')] })),
      `batches[0].columns[0] 'v'.VIEWS[0].OFFSET: bytes [1, 14) run past buffer 0 of 13 bytes`],
    ['union mode', oneColumn(fld('u', { name: 'union', mode: 'WIDE', typeIds: [0] }, [fld('i', INT32)]), col('u', 0)),
      `schema.fields[0] 'u'.type.mode: expected SPARSE or DENSE, found "WIDE"`],
    ['missing nullable', JSON.stringify({ schema: { fields: [{ name: 'x', type: INT32, children: [] }] }, batches: [] }),
      `schema.fields[0] 'x'.nullable: expected true or false, found nothing`],
    ['not a file', '[1, 2]', 'file: expected an object, found an array of 2 entries'],
  ])('%s', (_, text, message) => {
    expect(errorOf(() => readIntegrationJson(text))).toContain(message);
  });

  test('malformed JSON: the byte offset, what was expected and what was found', () => {
    expect(errorOf(() => readIntegrationJson('{"schema": [1, 2,]}'))).toBe('JSON at byte offset 17: expected a JSON value, found "]}"');
    // é is 2 bytes in UTF-8.
    expect(errorOf(() => parseJson('{"é": tru}'))).toBe('JSON at byte offset 7: expected a JSON value, found "tru}"');
    expect(errorOf(() => parseJson('1 2'))).toBe('JSON at byte offset 2: expected the end of the text, found "2"');
    expect(errorOf(() => parseJson('{"a" 1}'))).toBe(`JSON at byte offset 5: expected ':', found "1}"`);
    expect(errorOf(() => parseJson('"abc'))).toBe(`JSON at byte offset 4: expected a closing '"', found the end of the text`);
    expect(errorOf(() => parseJson('01'))).toContain('expected no leading zeros');
    expect(errorOf(() => parseJson('"\\x"'))).toContain('JSON at byte offset 2: expected an escape');
    expect(errorOf(() => parseJson('[1.]'))).toContain('expected a digit after the decimal point');
    expect(errorOf(() => parseJson('['.repeat(2000)))).toContain('expected at most 1000 levels of nesting');
    expect(errorOf(() => parseJson(''))).toBe('JSON at byte offset 0: expected a JSON value, found the end of the text');
  });
});

describe('parseJson', () => {
  test('integers outside the safe range become bigint, others number', () => {
    expect(parseJson('[1, -2, 9007199254740991, 9007199254740992, -9007199254740993, 1.5, 1e3, 12345678901234567890, -0, 1E-2]')).toEqual([
      1, -2, 9007199254740991, 9007199254740992n, -9007199254740993n, 1.5, 1000, 12345678901234567890n, -0, 0.01,
    ]);
    expect(Object.is(parseJson('-0'), -0)).toBe(true);
    expect(parseJson('123456789012345')).toBe(123456789012345);
    expect(parseJson('1234567890123456')).toBe(1234567890123456);
  });

  test('strings, escapes, literals, objects', () => {
    expect(parseJson(' {"a": "\\u00e9\\ud83d\\ude00\\n\\"x\\\\\\/", "b": [true, false, null], "c": {}, "d": [], "a2": "plain"} ')).toEqual({
      a: 'é😀\n"x\\/', b: [true, false, null], c: {}, d: [], a2: 'plain',
    });
    const o = parseJson('{"__proto__": 1, "k": 1, "k": 2}') as Record<string, unknown>;
    expect(Object.keys(o)).toEqual(['__proto__', 'k']);
    expect(o.k).toBe(2);
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
  });

  test.each(goldJson())('%s: the same as JSON.parse (no integer there is outside the safe range)', (_, path) => {
    const text = gunzip(path);
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });
});

// ---- raw arrays with an offset --------------------------------------------------------

const bitmap = (...bits: number[]) => {
  const out = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((b, i) => { if (b) out[i >> 3] |= 1 << (i & 7); });
  return out;
};
const i32 = (...v: number[]) => new Uint8Array(Int32Array.from(v).buffer);
const text = (s: string) => new TextEncoder().encode(s);
const raw = (type: DataType, length: number, offset: number, buffers: (Uint8Array | null)[], children: RawArray[] = [], dictionary: RawArray | null = null): RawArray =>
  ({ type, length, nullCount: -1, offset, buffers, children, dictionary });
const utf8Of = (strings: string[], offset = 0, validity: number[] | null = null): RawArray => {
  const offsets = [0];
  for (const s of strings) offsets.push(offsets[offsets.length - 1]! + text(s).length);
  return raw(t.utf8(), strings.length - offset, offset, [validity && bitmap(...validity), i32(...offsets), text(strings.join(''))]);
};
const int32Of = (values: number[], offset = 0, validity: number[] | null = null) =>
  raw(t.int32(), values.length - offset, offset, [validity && bitmap(...validity), i32(...values)]);

describe('raw arrays with an offset', () => {
  const structType = t.struct([t.field('a', t.int32()), t.field('b', t.utf8())]);
  const cases: [string, RawArray, unknown[]][] = [
    ['utf8', utf8Of(['a', 'bb', '', 'ccc', 'dd'], 2, [1, 1, 1, 0, 1]), ['', null, 'dd']],
    ['list', raw(t.list(t.int32()), 2, 1, [null, i32(0, 2, 3, 5)], [int32Of([99, 1, 2, 3, 4, 5], 1)]), [[3], [4, 5]]],
    ['struct', raw(structType, 2, 1, [bitmap(1, 0, 1)], [int32Of([1, 2, 3]), utf8Of(['w', 'x', 'y', 'z'], 1)]), [null, [['a', 3], ['b', 'z']]]],
    ['run-end encoded', raw(t.runEndEncoded(t.int32(), t.utf8()), 3, 2, [], [int32Of([2, 3, 6]), utf8Of(['a', '', 'c'], 0, [1, 0, 1])]), [null, 'c', 'c']],
    ['sparse union', raw(t.sparseUnion([t.field('i', t.int32()), t.field('s', t.utf8())]), 3, 1, [new Uint8Array([0, 1, 0, 1])],
      [int32Of([10, 20, 30, 40]), utf8Of(['p', 'q', 'r', 's'])]), [{ typeId: 1, value: 'q' }, { typeId: 0, value: 30 }, { typeId: 1, value: 's' }]],
    ['dense union', raw(t.denseUnion([t.field('i', t.int32()), t.field('s', t.utf8())], [5, 6]), 2, 1, [new Uint8Array([5, 6, 5]), i32(0, 1, 0)],
      [int32Of([0, 7], 1), utf8Of(['p', 'q'])]), [{ typeId: 6, value: 'q' }, { typeId: 5, value: 7 }]],
    ['bool', raw(t.bool(), 4, 5, [bitmap(0, 0, 0, 0, 0, 1, 1, 0, 1), bitmap(0, 0, 0, 0, 0, 1, 0, 1, 1)]), [true, false, null, true]],
    ['fixed-size list', raw(t.fixedSizeList(2, t.int32()), 2, 1, [null], [int32Of([1, 2, 3, 4, 5, 6])]), [[3, 4], [5, 6]]],
    ['dictionary', raw(t.dictionary(t.int8(), t.utf8()), 2, 1, [null, new Uint8Array([0, 2, 1])], [], utf8Of(['x', 'y', 'z', 'w'], 1)), ['w', 'z']],
    ['list view', raw(t.listView(t.int32()), 2, 1, [null, i32(0, 3, 0), i32(0, 1, 4)], [int32Of([1, 2, 3, 4])]), [[4], [1, 2, 3, 4]]],
  ];

  test.each(cases)('%s: rawValues applies the offset', (_, array, expected) => {
    expect(rawValues(array)).toEqual(expected);
  });

  test.each(cases)('%s: written as its logical slice, read back equal', (_, array) => {
    const file: IntegrationFile = {
      schema: t.schema([t.field('c', array.type)]),
      batches: [raw(t.struct([t.field('c', array.type)]), array.length, 0, [null], [array])],
    };
    const back = roundtrip(file);
    expect(compareRaw(array, back.batches[0]!.children[0]!)).toEqual([]);
    expect(back.batches[0]!.children[0]!.offset).toBe(0);
  });

  test('a batch with an offset: its columns are sliced by it too', () => {
    const columns = [int32Of([1, 2, 3, 4]), utf8Of(['_', 'a', 'b', 'c', 'd'], 1)];
    const type = t.struct([t.field('i', t.int32()), t.field('s', t.utf8())]);
    const file: IntegrationFile = { schema: t.schema(type.kind === 'struct' ? type.children : []), batches: [raw(type, 2, 2, [null], columns)] };
    const back = roundtrip(file);
    expect(back.batches[0]!.children.map((c) => rawValues(c))).toEqual([[3, 4], ['c', 'd']]);
    expect(compareRaw(file.batches[0]!, back.batches[0]!)).toEqual([]);
  });
});

// ---- compareRaw and the writer's checks --------------------------------------------------

describe('compareRaw', () => {
  test('ignores physical layout: offsets, unused bitmap bits, null slots', () => {
    const a = int32Of([1, 0, 3], 0, [1, 0, 1]);
    const b: RawArray = { ...int32Of([9, 1, 12345, 3], 1), buffers: [new Uint8Array([0xfb]), i32(9, 1, 12345, 3)] };
    expect(rawValues(b)).toEqual([1, null, 3]);
    expect(compareRaw(a, b)).toEqual([]);
  });

  test('reports type, length, null count and values, up to the limit', () => {
    expect(compareRaw(int32Of([1]), utf8Of(['a']))).toEqual(['array: expected type int32, found utf8']);
    expect(compareRaw(int32Of([1]), int32Of([1, 2]), 'col')).toEqual(['col: expected length 1, found 2']);
    expect(compareRaw({ ...int32Of([1, 2]), nullCount: 0 }, { ...int32Of([1, 2], 0, [1, 0]), nullCount: 1 })).toEqual([
      'array: expected null count 0, found 1',
      'array[1]: expected 2, found null',
    ]);
    expect(compareRaw(utf8Of(['a', 'b', 'c']), utf8Of(['a', 'x', 'y']), 'batches[0].columns[1]', 1)).toEqual([
      'batches[0].columns[1][1]: expected "b", found "x"',
    ]);
    const nan = (v: number) => raw(t.float64(), 1, 0, [null, new Uint8Array(Float64Array.of(v).buffer)]);
    expect(compareRaw(nan(NaN), nan(NaN))).toEqual([]);
    expect(compareRaw(nan(0), nan(-0))).toEqual(['array[0]: expected 0, found "-0"']);
  });
});

describe('writeIntegrationJson', () => {
  test('refuses utf8 data that is not valid UTF-8', () => {
    const bad = raw(t.utf8(), 1, 0, [null, i32(0, 1), new Uint8Array([0xff])]);
    const file: IntegrationFile = { schema: t.schema([t.field('s', t.utf8())]), batches: [raw(t.struct([t.field('s', t.utf8())]), 1, 0, [null], [bad])] };
    expect(errorOf(() => writeIntegrationJson(file))).toContain("batches[0].columns[0] 's' slot 0: expected valid UTF-8");
  });

  test('one dictionary per field: equal copies are fine, different ones are refused', () => {
    const type = t.dictionary(t.int8(), t.utf8());
    const batch = (dict: RawArray) => raw(t.struct([t.field('d', type)]), 1, 0, [null], [raw(type, 1, 0, [null, new Uint8Array([1])], [], dict)]);
    const schema = t.schema([t.field('d', type)]);
    const copies = roundtrip({ schema, batches: [batch(utf8Of(['a', 'b'])), batch(utf8Of(['a', 'b']))] });
    expect(copies.batches.map((b) => rawValues(b.children[0]!))).toEqual([['b'], ['b']]);
    expect(errorOf(() => writeIntegrationJson({ schema, batches: [batch(utf8Of(['a', 'b'])), batch(utf8Of(['a', 'c']))] })))
      .toContain("batches[1].columns[0] 'd'.dictionary: the JSON format has one dictionary per field");
  });

  test('a schema without batches keeps its dictionary fields', () => {
    const schema = t.schema([t.field('d', t.dictionary(t.uint16(), t.list(t.utf8()), true))], new Map([['k', 'v']]));
    const back = roundtrip({ schema, batches: [] });
    expect(schemaDifferences(schema, back.schema)).toEqual([]);
    expect(back.batches).toEqual([]);
  });
});

// ---- through the C core ---------------------------------------------------------------

/**
 * Writes a file's batches into C structs, runs the C validator at its full
 * level, reads them back (copy mode) and compares; checks nothing leaks.
 */
function throughC(core: Core, file: IntegrationFile, level = 3): string[] {
  const start = core.bytesAllocated();
  const out: string[] = [];
  const field = t.field('', t.struct(file.schema.fields), false, file.schema.metadata);
  file.batches.forEach((batch, i) => {
    const schemaPtr = core.alloc(core.structs.size('ArrowSchema'));
    const arrayPtr = core.alloc(core.structs.size('ArrowArray'));
    try {
      writeSchema(core, schemaPtr, field);
      writeRaw(core, arrayPtr, batch);
      core.arrayValidate(schemaPtr, arrayPtr, level);
      out.push(...compareRaw(batch, readRaw(core, arrayPtr, field.type, 'copy'), `batches[${i}]`));
    } finally {
      core.schemaRelease(schemaPtr);
      core.arrayRelease(arrayPtr);
      core.free(schemaPtr);
      core.free(arrayPtr);
    }
  });
  expect(core.bytesAllocated()).toBe(start);
  return out;
}

describe('through the C core: what the JSON reader builds passes full validation and reads back equal', () => {
  let core: Core;
  beforeAll(async () => { core = await Core.load(); });

  test.each(goldJson())('%s', (name, path) => {
    expect(throughC(core, readIntegrationJson(gunzip(path)), goldLevel(name) === 'full' ? 3 : 2)).toEqual([]);
  });

  test('the hand-written files', () => {
    for (const text of HAND_WRITTEN) expect(throughC(core, readIntegrationJson(text))).toEqual([]);
    expect(HAND_WRITTEN.length).toBeGreaterThanOrEqual(10);
  });
});
