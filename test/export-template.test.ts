// Schema trees made again from a copy (csrc/model/flat_template.c): an
// export whose descriptor starts with the schema words and strings of a tree
// made twice before (of 8 nodes or more) gets a copy of that tree's block, its
// pointers moved to the copy. The copy must be the tree the descriptor
// describes (a difference in any word or string byte makes a tree of its
// own), live in its own block (readable after the first export is released
// and its memory written over), and release as any exported tree does, in
// any order, leaking nothing.

import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { readField } from '../ts/model/schema.js';
import type { Field } from '../ts/model/types.js';
import { bytesMark, core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

const s = () => acd.core.structs;
const P = () => s().layout.pointerSize;
const schemaChild = (ptr: number, i: number) => s().ptrAt(s().ptr('ArrowSchema', ptr, 'children') + i * P());

/** A batch of 10 columns of 3 rows (11 schema nodes), each column named and typed as given. */
function batchOf(names: string[], type: () => arrow.DataType = () => new arrow.Int32(), options: { nullable?: boolean; metadata?: Map<string, string> } = {}): arrow.RecordBatch {
  const fields = names.map((n) => new arrow.Field(n, type(), options.nullable ?? true, options.metadata));
  const children = fields.map((f) => arrow.makeData({ type: f.type, length: 3, nullCount: 0, data: arrow.DataType.isInt(f.type) && f.type.bitWidth === 64 ? new BigInt64Array(3) : new Int32Array(3) } as never));
  return new arrow.RecordBatch(new arrow.Schema(fields), arrow.makeData({ type: new arrow.Struct(fields), length: 3, nullCount: 0, children }));
}

const names = (prefix: string) => Array.from({ length: 10 }, (_, i) => `${prefix}${i}`);

/** The field an export's schema reads as (the validator checking it first: importSchema). */
function fieldOf(ptr: number): Field {
  return readField(s(), ptr);
}

/** Every node record (private_data) and string of a schema tree: where they are. */
function addresses(ptr: number, out: number[] = []): number[] {
  out.push(s().ptr('ArrowSchema', ptr, 'private_data'), s().ptr('ArrowSchema', ptr, 'format'), s().ptr('ArrowSchema', ptr, 'name'));
  const n = s().i64('ArrowSchema', ptr, 'n_children');
  for (let i = 0; i < n; i++) addresses(schemaChild(ptr, i), out);
  return out;
}

/** The third export of a batch: its schema tree a copy of the one kept at the second. */
function copiedExport(batch: arrow.RecordBatch): ReturnType<ArrowCDevice['exportBatch']> {
  acd.exportBatch(batch).release();
  acd.exportBatch(batch).release();
  return acd.exportBatch(batch);
}

describe('a schema exported again', () => {
  test('is the same tree, in a block of its own: it reads the same after the export it was kept from is released and its memory written over', () => {
    mark();
    const batch = batchOf(names('c'));
    // Kept the second time the tree is made; the third export is a copy of it.
    const first = acd.exportBatch(batch);
    const second = acd.exportBatch(batch);
    const third = acd.exportBatch(batch);
    const fourth = acd.exportBatch(batch);
    const expected = fieldOf(first.schema);
    for (const e of [second, third, fourth]) expect(fieldOf(e.schema)).toEqual(expected);
    // No node or string of an export is in another export's block.
    const seen = new Set<number>();
    for (const e of [first, second, third, fourth]) {
      const at = addresses(e.schema);
      expect(at.filter((x) => seen.has(x))).toEqual([]);
      at.forEach((x) => seen.add(x));
    }
    first.release();
    second.release();
    // The freed blocks are taken again and written over.
    const junk = acd.core.alloc(1 << 16);
    acd.core.bytes.fill(0xab, junk, junk + (1 << 16));
    expect(fieldOf(third.schema)).toEqual(expected);
    expect(fieldOf(fourth.schema)).toEqual(expected);
    // The validator takes a copy as a schema (every node's release, private data and strings in place).
    const imported = acd.importSchema(third.schema);
    expect(imported.field).toEqual(expected);
    imported.release();
    acd.core.free(junk);
    third.release();
    fourth.release();
  });

  test('a difference in a string of the same length (a name, a format) or in a word (nullability, metadata) makes a tree of its own', () => {
    mark();
    const variants = [
      batchOf(names('c')),
      batchOf(names('d')),
      batchOf(names('c'), () => new arrow.Int64()),
      batchOf(names('c'), () => new arrow.Int32(), { nullable: false }),
      batchOf(names('c'), () => new arrow.Int32(), { metadata: new Map([['k', 'v']]) }),
      batchOf(names('c'), () => new arrow.Int32(), { metadata: new Map([['k', 'w']]) }),
    ];
    // Each exported twice, in turns, so that every one of them meets the copies of the others.
    for (let round = 0; round < 3; round++) {
      for (const batch of variants) {
        const e = acd.exportBatch(batch);
        const field = fieldOf(e.schema);
        const type = field.type;
        if (type.kind !== 'struct') throw new Error('expected a struct');
        expect(type.children.map((f) => f.name)).toEqual(batch.schema.fields.map((f) => f.name));
        expect(type.children.map((f) => f.nullable)).toEqual(batch.schema.fields.map((f) => f.nullable));
        expect(type.children.map((f) => (f.type.kind === 'int' ? f.type.bitWidth : 0))).toEqual(batch.schema.fields.map((f) => (f.type as arrow.Int).bitWidth));
        expect(type.children.map((f) => (f.metadata === null ? null : [...f.metadata]))).toEqual(
          batch.schema.fields.map((f) => (f.metadata.size === 0 ? null : [...f.metadata])));
        e.release();
      }
    }
  });

  test('a child moved out of a copied tree lives past its parent, released after it', () => {
    mark();
    const e = copiedExport(batchOf(names('m')));
    const dst = acd.core.alloc(s().size('ArrowSchema'));
    acd.core.schemaMove(schemaChild(e.schema, 7), dst);
    e.release();
    expect(s().cString(s().ptr('ArrowSchema', dst, 'name'), 'name')).toBe('m7');
    expect(acd.core.schemaRelease(dst)).toBe(0);
    expect(s().ptr('ArrowSchema', dst, 'release')).toBe(0);
    acd.core.free(dst);
  });

  test('a copied tree\'s child released before its root, then the root', () => {
    mark();
    const e = copiedExport(batchOf(names('r')));
    expect(acd.core.schemaRelease(schemaChild(e.schema, 2))).toBe(0);
    expect(s().ptr('ArrowSchema', schemaChild(e.schema, 2), 'release')).toBe(0);
    expect(s().cString(s().ptr('ArrowSchema', schemaChild(e.schema, 3), 'name'), 'name')).toBe('r3');
    e.release();
  });
});
