// Issue 11, acceptance: no import or export path reads or writes an address
// without knowing which memory it belongs to. Two fresh cores, A (this
// library's) and B (seen from A as another module), make the same
// allocations in the same order, so their exports sit at the same addresses
// with different values: a path that read A's memory where B's was meant
// would return A's values (or fail), and one that wrote there would change
// A's bytes. Every import takes B's addresses { from } B, in both modes;
// every export goes { into } B while A's whole memory is compared before and
// after.
import { describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDevice } from '../ts/api.js';
import type { ArrowCProvider } from '../ts/exchange/protocol.js';
import { rawValues } from '../ts/model/raw-values.js';

const batch = (k: number) => arrow.tableFromArrays({ a: Int32Array.from([k, k + 1, k + 2]), s: [`x${k}`, null, `z${k}`] }).batches[0];
const rows = (b: arrow.RecordBatch) => b.toArray().map((r) => r.toJSON());

/** Two fresh cores; B seen from A as another module. */
async function twins() {
  const a = await ArrowCDevice.load();
  const b = await ArrowCDevice.load();
  const from = a.foreign({ memory: b.memory, table: b.core.table, malloc: (n) => b.core.alloc(n), free: (p) => b.core.free(p) }, 'B');
  return { a, b, from };
}

/** A's bytes at [ptr, ptr + size), for comparing later. */
const bytesAt = (acd: ArrowCDevice, ptr: number, size: number) => acd.core.space.bytes.slice(ptr, ptr + size);

type Exported = { schema: number; array: number; release(): void };
const arrayImports: [string, 'array' | 'device', (acd: ArrowCDevice, e: Exported, options: object) => { value: unknown; release(): void }, (v: unknown) => unknown][] = [
  ['importBatch', 'array', (acd, e, o) => acd.importBatch(e.schema, e.array, o), (v) => rows(v as arrow.RecordBatch)],
  ['importVector', 'array', (acd, e, o) => acd.importVector(e.schema, e.array, o), (v) => [...(v as arrow.Vector)].map((r) => r?.toJSON())],
  ['importRaw', 'array', (acd, e, o) => acd.importRaw(e.schema, e.array, o), (v) => rawValues((v as { array: Parameters<typeof rawValues>[0] }).array)],
  ['importDeviceBatch', 'device', (acd, e, o) => acd.importDeviceBatch(e.schema, e.array, o), (v) => rows(v as arrow.RecordBatch)],
  ['importDeviceRaw', 'device', (acd, e, o) => acd.importDeviceRaw(e.schema, e.array, o), (v) => rawValues((v as { array: Parameters<typeof rawValues>[0] }).array)],
];

describe.each(['copy', 'view'] as const)("imports { from } read only the other module's memory (%s mode)", (mode) => {
  test.each(arrayImports)('%s', async (_name, kind, importIt, valuesOf) => {
    const { a, b, from } = await twins();
    const ea = kind === 'device' ? a.exportDeviceBatch(batch(1)) : a.exportBatch(batch(1));
    const eb = kind === 'device' ? b.exportDeviceBatch(batch(100)) : b.exportBatch(batch(100));
    // The precondition that makes the test bite: the same addresses in both memories.
    expect([eb.schema, eb.array]).toEqual([ea.schema, ea.array]);
    const size = a.core.structs.size(kind === 'device' ? 'ArrowDeviceArray' : 'ArrowArray');
    const before = [bytesAt(a, ea.schema, a.core.structs.size('ArrowSchema')), bytesAt(a, ea.array, size)];
    const imported = importIt(a, eb, { from, mode, validate: 'full' });
    const fresh = (acd: ArrowCDevice, k: number) => (kind === 'device' ? acd.exportDeviceBatch(batch(k)) : acd.exportBatch(batch(k))) as Exported;
    const expected = importIt(b, fresh(b, 100), { mode: 'copy' });
    expect(valuesOf(imported.value)).toEqual(valuesOf(expected.value));
    expected.release();
    // A's structs at those addresses: untouched, still live.
    expect([bytesAt(a, ea.schema, before[0].length), bytesAt(a, ea.array, size)]).toEqual(before);
    imported.release();
    const own = importIt(a, ea, { mode });
    expect(valuesOf(own.value)).toEqual(valuesOf(importIt(a, fresh(a, 1), {}).value));
    own.release();
    eb.release();
    ea.release();
    expect(from.bytesAllocated()).toBe(0);
  });

  test('importSchema, importArrayStream and importDeviceArrayStream', async () => {
    const { a, b, from } = await twins();
    const sa = a.exportSchema(new arrow.Schema([new arrow.Field('left', new arrow.Int32())]));
    const sb = b.exportSchema(new arrow.Schema([new arrow.Field('right', new arrow.Int32())]));
    expect(sb.ptr).toBe(sa.ptr);
    const schema = a.importSchema(sb.ptr, { from });
    expect(schema.schema.fields.map((f) => f.name)).toEqual(['right']);
    expect(a.core.structs.ptr('ArrowSchema', sa.ptr, 'release')).not.toBe(0);
    schema.release();
    sa.release();
    sb.release();
    for (const kind of ['array', 'device'] as const) {
      const stream = (acd: ArrowCDevice, k: number) => (kind === 'array' ? acd.exportArrayStream([batch(k), batch(k + 10)]) : acd.exportDeviceArrayStream([batch(k), batch(k + 10)]));
      const xa = stream(a, 1);
      const xb = stream(b, 100);
      expect(xb.ptr).toBe(xa.ptr);
      const reader = kind === 'array' ? a.importArrayStream(xb.ptr, { from, mode }) : a.importDeviceArrayStream(xb.ptr, { from, mode });
      expect(reader.readAll().map(rows)).toEqual([rows(batch(100)), rows(batch(110))]);
      reader.release();
      const own = kind === 'array' ? a.importArrayStream(xa.ptr, { mode }) : a.importDeviceArrayStream(xa.ptr, { mode });
      expect(own.readAll().map(rows)).toEqual([rows(batch(1)), rows(batch(11))]);
      own.release();
      xa.release();
      xb.release();
    }
    expect(from.bytesAllocated()).toBe(0);
  });
});

describe("exports { into } write only the other module's memory", () => {
  type Made = { release(): void };
  /** Each export into B, and how A reads back what it made there (a count of rows or values). */
  const exports: [string, (acd: ArrowCDevice, into: ReturnType<ArrowCDevice['foreign']>) => Made, ((acd: ArrowCDevice, e: Made) => number) | null][] = [
    ['exportSchema', (acd, into) => acd.exportSchema(batch(1).schema, { into }), null],
    ['exportBatch', (acd, into) => acd.exportBatch(batch(1), { into }), (acd, e) => once(acd.importBatch(e as unknown as ArrowCProvider), (v) => v.numRows)],
    ['exportVector', (acd, into) => acd.exportVector(batch(1).getChild('s')!, 's', { into }), (acd, e) => once(acd.importVector(e as unknown as ArrowCProvider), (v) => v.length)],
    ['exportTable', (acd, into) => {
      const handles = acd.exportTable(arrow.tableFromArrays({ a: Int32Array.from([1, 2, 3]) }), { into });
      return { release: () => handles.forEach((h) => h.release()) };
    }, null],
    ['exportDeviceBatch', (acd, into) => acd.exportDeviceBatch(batch(1), { into }), (acd, e) => once(acd.importDeviceBatch(e as unknown as ArrowCProvider), (v) => v.numRows)],
    ['exportArrayStream', (acd, into) => acd.exportArrayStream([batch(1), batch(2)], { into }), (acd, e) => once(acd.importArrayStream(e as unknown as ArrowCProvider), (r) => r.readAll().length)],
    ['exportDeviceArrayStream', (acd, into) => acd.exportDeviceArrayStream([batch(1), batch(2)], { into }), (acd, e) => once(acd.importDeviceArrayStream(e as unknown as ArrowCProvider), (r) => r.readAll().length)],
  ];
  /** f of what h holds, then h released. */
  function once<H extends { release(): void }, R>(h: H, f: (v: H extends { value: infer V } ? V : H) => R): R {
    try {
      return f(('value' in h ? (h as { value: unknown }).value : h) as never);
    } finally {
      h.release();
    }
  }
  test.each(exports)("%s: A's memory is byte for byte the same after; B's holds the export", async (_name, exportIt, readBack) => {
    const { a, b, from } = await twins();
    const before = a.core.space.bytes.slice();
    const startB = b.bytesAllocated();
    const e = exportIt(a, from);
    expect(b.bytesAllocated()).toBeGreaterThan(startB);
    const after = a.core.space.bytes;
    expect(after.length).toBe(before.length);
    let first = -1;
    for (let i = 0; i < after.length; i++) if (after[i] !== before[i]) { first = i; break; }
    expect(first).toBe(-1);
    expect(a.bytesAllocated()).toBe(0);
    // What it made is read back from B (by the protocol: its descriptor names B's memory).
    if (readBack !== null) expect(readBack(a, e)).toBeGreaterThan(1);
    e.release();
    expect(from.bytesAllocated()).toBe(0);
  });
});
