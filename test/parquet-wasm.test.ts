// Issue 11 (tests, in part): parquet-wasm 0.8.0 (arrow-rs compiled to wasm by
// wasm-bindgen, code this project did not write) as a producer. A Parquet
// file written by it from an apache-arrow table is read back by it and
// handed over through Table.intoFFI(): ArrowSchema / ArrowArray addresses in
// its own memory, with its own release callbacks in its own table. They are
// imported with { from } in copy mode and in view mode (views over its
// memory, no copy) at 'full' validation and compared with what parquet-wasm's
// own IPC output gives for the same file.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as pq from 'parquet-wasm/node';
import { ArrowCDevice } from '../ts/api.js';
import { compareBatches, schemaDifferences } from '../ts/arrow-js/compare.js';
import type { ForeignModule } from '../ts/foreign/module.js';
import { libraryError as error } from './helpers.js';

let acd: ArrowCDevice;
let from: ForeignModule;
beforeAll(async () => {
  acd = await ArrowCDevice.load();
  from = acd.foreign({ memory: pq.wasmMemory() as WebAssembly.Memory, table: pq._functionTable() as unknown as WebAssembly.Table }, 'parquet-wasm');
});

/** ints with nulls, strings, large strings, a dictionary, timestamps, lists and structs, in two batches (parquet-wasm reads them back as one). */
function sample(): arrow.Table {
  const n = 50;
  // One type object per column, shared by both batches (a dictionary's id with it).
  const dictType = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
  const listType = new arrow.List(new arrow.Field('item', new arrow.Int32(), true));
  const structType = new arrow.Struct([new arrow.Field('a', new arrow.Int32(), true), new arrow.Field('b', new arrow.Utf8(), true)]);
  const batch = (start: number) => {
    const ids = Array.from({ length: n }, (_, i) => start + i);
    return new arrow.RecordBatch({
      int: arrow.vectorFromArray(ids.map((i) => (i % 7 === 3 ? null : i * 3 - 20)), new arrow.Int32()).data[0],
      big: arrow.vectorFromArray(ids.map((i) => (i % 5 === 0 ? null : BigInt(i) * 1_000_000_007n)), new arrow.Int64()).data[0],
      str: arrow.vectorFromArray(ids.map((i) => (i % 4 === 1 ? null : `s${i}-${'x'.repeat(i % 9)}`)), new arrow.Utf8()).data[0],
      large: arrow.vectorFromArray(ids.map((i) => (i % 6 === 2 ? null : `large ${i} é`)), new arrow.LargeUtf8()).data[0],
      dict: arrow.vectorFromArray(ids.map((i) => ['red', 'green', null, 'blue'][i % 4]), dictType).data[0],
      ts: arrow.vectorFromArray(ids.map((i) => (i % 8 === 5 ? null : 1_700_000_000_000 + i * 1000)), new arrow.TimestampMillisecond()).data[0],
      list: arrow.vectorFromArray(ids.map((i) => (i % 9 === 4 ? null : Array.from({ length: i % 4 }, (_, k) => i + k))), listType).data[0],
      struct: arrow.vectorFromArray(ids.map((i) => (i % 10 === 7 ? null : { a: i, b: i % 3 === 0 ? null : `b${i}` })), structType).data[0],
    });
  };
  return new arrow.Table([batch(0), batch(n)]);
}

describe('parquet-wasm as a producer', () => {
  let parquet: Uint8Array;
  let expected: arrow.Table;
  beforeAll(() => {
    parquet = pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(sample(), 'stream')));
    // What parquet-wasm itself gives for the file, through its IPC output.
    expected = arrow.tableFromIPC(pq.readParquet(parquet).intoIPCStream());
  });

  test.each(['default', 'full'] as const)("its FFI structs, imported with { from } at '%s', equal its IPC output", (validate) => {
    const start = acd.bytesAllocated();
    const ffi = pq.readParquet(parquet).intoFFI();
    const n = ffi.numArrays();
    expect(n).toBe(expected.batches.length);
    const schema = acd.importSchema(ffi.schemaAddr(), { from });
    expect(schema.field.type.kind).toBe('struct');
    const s = from.space.structs;
    expect(s.ptr('ArrowSchema', ffi.schemaAddr(), 'release')).toBe(0); // released by the import, through its table
    let rows = 0;
    for (let i = 0; i < n; i++) {
      const at = ffi.arrayAddr(i);
      const batch = acd.importBatch(schema, at, { from, validate });
      expect(s.ptr('ArrowArray', at, 'release')).toBe(0);
      expect(schemaDifferences(expected.batches[i], batch.value)).toEqual([]);
      expect(compareBatches(expected.batches[i], batch.value, i)).toEqual([]);
      rows += batch.value.numRows;
      batch.release();
    }
    expect(rows).toBe(100);
    schema.release();
    ffi.free(); // its drop finds every struct released and calls nothing twice
    expect(acd.bytesAllocated()).toBe(start);
  });

  test("view mode, in place, at 'full': every buffer a view over parquet-wasm's memory at its own address, no copy; its release called on release()", () => {
    const start = acd.bytesAllocated();
    const ffi = pq.readParquet(parquet).intoFFI();
    const memory = pq.wasmMemory() as WebAssembly.Memory;
    const s = from.space.structs;
    const schema = acd.importSchema(ffi.schemaAddr(), { from });
    // parquet-wasm gives no allocator to move the structs with: they are owned in place, and ffi kept alive until release().
    expect(error(() => acd.importBatch(schema, ffi.arrayAddr(0), { from, mode: 'view' })).message).toMatch(/^parquet-wasm: mode 'view' moves the struct .* or pass inPlace: true/);
    const batches = [];
    for (let i = 0; i < ffi.numArrays(); i++) {
      const at = ffi.arrayAddr(i);
      const batch = acd.importBatch(schema, at, { from, mode: 'view', inPlace: true, validate: 'full' });
      expect(compareBatches(expected.batches[i], batch.value, i)).toEqual([]);
      // Each column's buffers: views over parquet-wasm's memory, at the addresses its ArrowArray holds.
      const columns = s.ptr('ArrowArray', at, 'children');
      batch.value.data.children.forEach((data, c) => {
        const node = s.ptrAt(columns + 4 * c);
        const addresses = Array.from({ length: s.i64('ArrowArray', node, 'n_buffers') }, (_, k) => s.ptrAt(s.ptr('ArrowArray', node, 'buffers') + 4 * k));
        for (const b of [data.values, data.valueOffsets, data.nullBitmap]) {
          if (b === undefined || b === null || b.byteLength === 0) continue;
          expect(b.buffer).toBe(memory.buffer);
          expect(addresses.some((a) => b.byteOffset >= a && b.byteOffset < a + 64)).toBe(true);
        }
      });
      expect(s.ptr('ArrowArray', at, 'release')).not.toBe(0); // in place: still there, owned by the handle
      batches.push({ batch, at });
    }
    for (const { batch, at } of batches) {
      batch.release();
      expect(s.ptr('ArrowArray', at, 'release')).toBe(0); // its release ran, through its table
    }
    schema.release();
    ffi.free(); // finds every struct released: calls nothing twice
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a batch address read as if it were in the core is refused or differs; with { from } it is right', () => {
    const ffi = pq.readParquet(parquet).intoFFI();
    // Without { from } the address means the core's memory: not this batch.
    let wrong: unknown = null;
    try {
      const b = acd.importBatch(ffi.schemaAddr(), ffi.arrayAddr(0));
      wrong = b.value.numRows;
      b.release();
    } catch (e) {
      wrong = e;
    }
    const rows = expected.batches[0].numRows;
    expect(wrong).not.toBe(rows);
    const b = acd.importBatch(ffi.schemaAddr(), ffi.arrayAddr(0), { from });
    expect(b.value.numRows).toBe(rows);
    b.release();
    ffi.free();
    expect(acd.bytesAllocated()).toBe(0);
  });
});

/** Runs the first js block of the README after `heading`, with the package names resolved here; its output. */
function runReadmeExample(heading: string): string {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const code = /```js\n([\s\S]*?)```/.exec(section)![1];
  const dir = mkdtempSync(join(tmpdir(), 'acd-readme-'));
  const file = join(dir, 'example.mjs');
  const root = join(__dirname, '..');
  writeFileSync(file, code
    .replace("from 'arrow-c-device'", `from '${join(root, 'dist', 'index.mjs')}'`)
    .replace("from 'parquet-wasm/node'", `from '${join(root, 'node_modules', 'parquet-wasm', 'node', 'parquet_wasm.js')}'`)
    .replace("from 'apache-arrow'", `from '${join(root, 'node_modules', 'apache-arrow', 'Arrow.node.mjs')}'`));
  return execFileSync(process.execPath, [file], { encoding: 'utf8' });
}

test("the README's example of importing from another module runs as written", () => {
  const out = runReadmeExample('### Importing from another wasm module');
  expect(out).toBe(`[
  { id: 1, name: 'ada' },
  { id: 2, name: 'grace' },
  { id: 3, name: 'linus' }
]
0 bytes still allocated
`);
});

test("the README's example of view mode runs as written: parquet-wasm's memory, no copy", () => {
  expect(runReadmeExample("#### Without a copy: `mode: 'view'`")).toBe('true [ 1, 2, 3 ]\n');
});
