// Issue 11, tests: the other direction of test/foreign-types.test.ts. The
// C consumer of the foreign module (test/foreign/types-consume.c, built by
// emcc as a module of its own, nothing of arrow-c-device linked in) takes
// record batches and streams exported { into } it, checks them by hand,
// hashes their logical values in C (FNV-1a, offsets and validity
// respected) and releases them through our callbacks in its table; the same
// hash is computed here from the apache-arrow batches.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { EINVAL } from '../ts/abi/errors.js';
import { ArrowCDevice } from '../ts/api.js';
import type { RawArray } from '../ts/model/raw.js';
import type { DataType, Field } from '../ts/model/types.js';
import { instantiate, producerWasm, type Producer } from './foreign/module.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  producerWasm();
  acd = await ArrowCDevice.load();
}, 120_000);

const cString = (p: Producer, at: number) => {
  const bytes = new Uint8Array(p.memory.buffer);
  return new TextDecoder().decode(bytes.subarray(at, bytes.indexOf(0, at)));
};

/** FNV-1a of a batch's logical values as types-consume.c defines it (a tag byte per slot, then the value). */
class Fnv {
  h = 2166136261;
  bytes(b: ArrayLike<number>): void {
    for (let i = 0; i < b.length; i++) this.h = Math.imul(this.h ^ b[i]!, 16777619) >>> 0;
  }
  le(n: number | bigint, width: 4 | 8, float = false): void {
    const v = new DataView(new ArrayBuffer(width));
    if (float) v.setFloat64(0, Number(n), true);
    else if (width === 4) v.setInt32(0, Number(n), true);
    else v.setBigInt64(0, BigInt(n), true);
    this.bytes(new Uint8Array(v.buffer));
  }
  value(type: arrow.DataType, value: unknown): void {
    if (value === null || value === undefined) return this.bytes([0]);
    this.bytes([1]);
    if (arrow.DataType.isDictionary(type)) return this.value(type.dictionary, value);
    if (arrow.DataType.isInt(type)) return this.le(value as number | bigint, type.bitWidth === 64 ? 8 : 4);
    if (arrow.DataType.isFloat(type)) return this.le(value as number, 8, true);
    if (arrow.DataType.isBool(type)) return this.bytes([value ? 1 : 0]);
    // (Not instanceof: the bytes of a wasm memory may be another realm's Uint8Array.)
    if (typeof value === 'string' || (ArrayBuffer.isView(value) && arrow.DataType.isBinary(type))) {
      const bytes = typeof value === 'string' ? new TextEncoder().encode(value) : (value as Uint8Array);
      this.le(bytes.length, 4);
      return this.bytes(bytes);
    }
    if (arrow.DataType.isList(type)) {
      const items = [...(value as arrow.Vector)];
      this.le(items.length, 4);
      for (const item of items) this.value(type.children[0].type, item);
      return;
    }
    if (arrow.DataType.isStruct(type)) {
      for (const f of type.children) this.value(f.type, (value as Record<string, unknown>)[f.name]);
      return;
    }
    throw new Error(`no hash for ${String(type)}`);
  }
  columns(columns: arrow.Vector[]): this {
    for (const column of columns) for (let i = 0; i < column.length; i++) this.value(column.type, column.get(i));
    return this;
  }
  batch(batch: arrow.RecordBatch): this {
    return this.columns(batch.schema.fields.map((_, k) => batch.getChildAt(k)!));
  }

}

/** A batch of every type the consumer reads, with nulls, sliced from row `from` (its columns then have offsets). */
function consumable(seed: number, from = 2): arrow.RecordBatch {
  const n = 9;
  const pick = <T>(f: (i: number) => T) => Array.from({ length: n }, (_, i) => ((i + seed) % 4 === 3 ? null : f(i + seed)));
  const item = new arrow.Field('item', new arrow.Int32(), true);
  const table = new arrow.Table({
    i: arrow.vectorFromArray(pick((i) => i * 1000 - 2 ** 31 + 7), new arrow.Int32()),
    l: arrow.vectorFromArray(pick((i) => BigInt(i) * -(2n ** 40n) + 3n), new arrow.Int64()),
    g: arrow.vectorFromArray(pick((i) => (i === 5 ? NaN : i / 3 - 1e10)), new arrow.Float64()),
    b: arrow.vectorFromArray(pick((i) => i % 3 === 0), new arrow.Bool()),
    u: arrow.vectorFromArray(pick((i) => ['', 'α', 'plain', 'wörld €'][i % 4]), new arrow.Utf8()),
    U: arrow.vectorFromArray(pick((i) => `large ${'x'.repeat(i)}`), new arrow.LargeUtf8()),
    z: arrow.vectorFromArray(pick((i) => Uint8Array.from({ length: i % 5 }, (_, k) => 255 - k * i)), new arrow.Binary()),
    list: arrow.vectorFromArray(pick((i) => Array.from({ length: i % 4 }, (_, k) => (k === 1 ? null : i * 10 + k))), new arrow.List(item)),
    struct: arrow.vectorFromArray(pick((i) => ({ a: i % 2 ? null : i, b: `s${i}` })),
      new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true), new arrow.Field('b', new arrow.Utf8(), true)])),
    dict: arrow.vectorFromArray(pick((i) => ['red', 'green', 'blue'][i % 3]), new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
  });
  return table.batches[0].slice(from, n);
}

describe('its C consumer: batches and streams exported into it, checked and hashed in C, released through our callbacks', () => {
  function target() {
    const p = instantiate();
    return { p, into: acd.foreign(p as unknown as Record<string, unknown>, 'consumer') };
  }
  const message = (p: Producer) => cString(p, p.types_message());

  test.each([0, 1, 2, 3])('a sliced batch of every type it reads (seed %d): the same hash in C as here; everything freed', (seed) => {
    const { p, into } = target();
    const batch = consumable(seed);
    const e = acd.exportBatch(batch, { into });
    expect(p.consume_batch(e.schema, e.array)).toBe(BigInt(new Fnv().batch(batch).h));
    expect(into.space.structs.ptr('ArrowArray', e.array, 'release')).toBe(0);
    e.release(); // the base structs: their content went with its releases
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test("columns with offsets of their own: the producer's cases, imported raw from one module and exported raw into it", () => {
    const src = instantiate();
    const from = acd.foreign(src as unknown as Record<string, unknown>, 'producer');
    const { p, into } = target();
    const names = ['int32', 'int64', 'float64', 'bool', 'utf8', 'large_utf8', 'binary', 'list', 'struct', 'dictionary'];
    const index = (name: string) => Array.from({ length: src.case_count() }, (_, i) => cString(src, src.case_name(i))).indexOf(name);
    const ptrs: number[] = [];
    const raws = names.map((name) => {
      const [schema, array] = [src.case_schema(index(name)), src.case_array(index(name))];
      ptrs.push(schema, array);
      return acd.importRaw(schema, array, { from, validate: 'full' });
    });
    const type: DataType = { kind: 'struct', children: raws.map((r) => r.value.field) };
    const field: Field = { name: '', type, nullable: false, metadata: null };
    const raw: RawArray = { type, length: 4, nullCount: 0, offset: 0, buffers: [null], children: raws.map((r) => r.value.array), dictionary: null };
    const e = acd.exportRaw(field, raw, { into });
    // Exported as they are: every column from slot 1.
    const s = into.space.structs;
    const children = s.ptr('ArrowArray', e.array, 'children');
    expect(names.map((_, k) => s.i64('ArrowArray', s.ptrAt(children + 4 * k), 'offset'))).toEqual(names.map(() => 1));
    // The expected hash: of the same columns of the module's batch, as apache-arrow reads them
    // (test/foreign-types.test.ts checks those values against the ones written by hand).
    const [bs, ba] = [src.batch_schema(), src.batch_array()];
    const batch = acd.importBatch(bs, ba, { from, validate: 'full', convert: ['run_end_encoded', 'list_view'] });
    expect(p.consume_batch(e.schema, e.array)).toBe(BigInt(new Fnv().columns(names.map((n) => batch.value.getChild(n)!)).h));
    e.release();
    batch.release();
    for (const r of raws) r.release();
    for (const ptr of [...ptrs, bs, ba]) src.types_free(ptr);
    expect(src.types_live_blocks()).toBe(0);
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test('a different value gives a different hash (the hash reads the values)', () => {
    const { p, into } = target();
    const hashes = [0, 1].map((seed) => {
      const e = acd.exportBatch(consumable(seed), { into });
      const h = p.consume_batch(e.schema, e.array);
      e.release();
      return h;
    });
    expect(hashes[0]).not.toBe(hashes[1]);
  });

  test('a type it does not read: its check says so, and it still releases everything', () => {
    const { p, into } = target();
    const batch = new arrow.Table({ i: arrow.vectorFromArray([1, 2], new arrow.Int32()), f: arrow.vectorFromArray([1, 2], new arrow.Float32()) }).batches[0];
    const e = acd.exportBatch(batch, { into });
    expect(p.consume_batch(e.schema, e.array)).toBe(-BigInt(EINVAL));
    expect(message(p)).toBe('batch.f: a format this consumer does not read');
    e.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test.each([
    ['utf8 offsets that decrease', 'u', 1, 'batch.u: offsets: they decrease'],
    ['a list offset past its child', 'list', 1, "batch.list: offsets: the last is past the child's length"],
  ])('%s (written into its memory after the export): its check finds them, and it still releases everything', (_what, column, buffer, reason) => {
    const { p, into } = target();
    const batch = consumable(1);
    const e = acd.exportBatch(batch, { into });
    const s = into.space.structs;
    const child = s.ptrAt(s.ptr('ArrowArray', e.array, 'children') + 4 * batch.schema.fields.findIndex((f) => f.name === column));
    const offsets = s.ptrAt(s.ptr('ArrowArray', child, 'buffers') + 4 * buffer) + 4 * s.i64('ArrowArray', child, 'offset');
    const length = s.i64('ArrowArray', child, 'length');
    // The second offset of the slice above the third; for the list, the last past its child.
    if (column === 'u') into.space.view.setInt32(offsets + 4, into.space.view.getInt32(offsets + 8, true) + 1, true);
    else into.space.view.setInt32(offsets + 4 * length, 1e6, true);
    expect(p.consume_batch(e.schema, e.array)).toBe(-BigInt(EINVAL));
    expect(message(p)).toBe(reason);
    e.release();
    expect(into.bytesAllocated()).toBe(0);
  });

  test('a stream of such batches, drained by its C code: one hash over every batch; the stream and each batch released', () => {
    const { p, into } = target();
    const batches = [0, 1, 2].map((seed) => consumable(seed, seed));
    const stream = acd.exportArrayStream(batches, { into });
    const expected = new Fnv();
    for (const b of batches) expected.batch(b);
    expect(p.consume_stream(stream.ptr)).toBe(BigInt(expected.h));
    expect(into.space.structs.ptr('ArrowArrayStream', stream.ptr, 'release')).toBe(0);
    stream.release();
    expect(into.bytesAllocated()).toBe(0);
    expect(acd.bytesAllocated()).toBe(0);
  });

  test("a stream whose source fails: the error code and get_last_error's message reach its C code", () => {
    const { p, into } = target();
    const source = (function* () {
      yield consumable(0);
      throw new Error('the source broke');
    })();
    const stream = acd.exportArrayStream(source, { into });
    expect(p.consume_stream(stream.ptr)).toBeLessThan(0n);
    expect(message(p)).toBe('get_next: the source broke');
    stream.release();
    expect(into.bytesAllocated()).toBe(0);
  });
});
