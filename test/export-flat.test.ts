// The export path through one flat descriptor (csrc/model/flat.c,
// ts/model/flat.ts, ts/arrow-js/arrow-describe.ts): the struct trees it makes
// are those of the writer it replaced (one core call per node and per buffer,
// kept here as the reference) for every case of the fixture corpus; apache-
// arrow data written straight into the descriptor gives what its raw array
// gives; names and metadata keep non-ASCII text; zero-length and NULL buffers
// stay apart; a bitmap's bits past its length are cleared; and every failure
// leaves nothing allocated. Longer than 400 lines: the per-node reference
// writer and the struct-tree readers that every test compares with are this
// file's, and a split would have to export them.

import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import type { Core } from '../ts/abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOMEM } from '../ts/abi/errors.js';
import { fromArrowData, toArrowData } from '../ts/arrow-js/arrow-data.js';
import { fromArrowType } from '../ts/arrow-js/arrow-types.js';
import { corpusCases } from '../ts/fixtures/cases.js';
import { flagsOf, formatOf } from '../ts/model/format.js';
import { encodeMetadata, metadataBytesAt } from '../ts/model/metadata.js';
import { readField } from '../ts/model/schema.js';
import type { RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});

// ---- the reference: the writer before the flat descriptor --------------------

function referenceSchema(c: Core, ptr: number, field: t.Field): void {
  const { type } = field;
  const children = t.childFields(type);
  c.schemaInit(ptr, formatOf(type), field.name, encodeMetadata(field.metadata), flagsOf(field), children.length, type.kind === 'dictionary');
  const s = c.structs;
  children.forEach((f, i) => referenceSchema(c, s.ptrAt(s.ptr('ArrowSchema', ptr, 'children') + i * 4), f));
  if (type.kind === 'dictionary') {
    referenceSchema(c, s.ptr('ArrowSchema', ptr, 'dictionary'), { name: '', type: type.valueType, nullable: true, metadata: null });
  }
}

function referenceRaw(c: Core, ptr: number, raw: RawArray): void {
  c.arrayInit(ptr, raw.length, raw.nullCount, raw.offset, raw.buffers.length, raw.children.length, raw.dictionary !== null);
  raw.buffers.forEach((b, i) => {
    if (b !== null) c.bytes.set(b, c.arrayAllocateBuffer(ptr, i, b.byteLength));
  });
  const s = c.structs;
  raw.children.forEach((child, i) => referenceRaw(c, s.ptrAt(s.ptr('ArrowArray', ptr, 'children') + i * 4), child));
  if (raw.dictionary !== null) referenceRaw(c, s.ptr('ArrowArray', ptr, 'dictionary'), raw.dictionary);
}

// ---- struct trees as data ----------------------------------------------------

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function schemaTree(c: Core, ptr: number): unknown {
  const s = c.structs;
  const name = s.ptr('ArrowSchema', ptr, 'name');
  const metadata = s.ptr('ArrowSchema', ptr, 'metadata');
  const n = s.i64('ArrowSchema', ptr, 'n_children');
  const dictionary = s.ptr('ArrowSchema', ptr, 'dictionary');
  return {
    format: s.cString(s.ptr('ArrowSchema', ptr, 'format'), 'format'),
    name: name === 0 ? null : hex(c.bytes.subarray(name, c.bytes.indexOf(0, name))),
    metadata: metadata === 0 ? null : hex(metadataBytesAt(c.space, metadata, 'metadata')),
    flags: s.i64('ArrowSchema', ptr, 'flags'),
    children: Array.from({ length: n }, (_, i) => schemaTree(c, s.ptrAt(s.ptr('ArrowSchema', ptr, 'children') + i * 4))),
    dictionary: dictionary === 0 ? null : schemaTree(c, dictionary),
    released: s.ptr('ArrowSchema', ptr, 'release') === 0,
  };
}

/** Every field of the array tree; each buffer's bytes as far as the raw array written had them, and its padding up to 64. */
function arrayTree(c: Core, ptr: number, raw: RawArray): unknown {
  const s = c.structs;
  const buffers = s.ptr('ArrowArray', ptr, 'buffers');
  const dictionary = s.ptr('ArrowArray', ptr, 'dictionary');
  return {
    length: s.i64('ArrowArray', ptr, 'length'),
    null_count: s.i64('ArrowArray', ptr, 'null_count'),
    offset: s.i64('ArrowArray', ptr, 'offset'),
    n_buffers: s.i64('ArrowArray', ptr, 'n_buffers'),
    buffers: raw.buffers.map((b, i) => {
      const at = s.ptrAt(buffers + i * 4);
      if (at === 0) return null;
      const padded = Math.max(64, Math.ceil(b!.byteLength / 64) * 64);
      return { aligned: at % 64 === 0, bytes: hex(c.bytes.subarray(at, at + padded)) };
    }),
    children: raw.children.map((child, i) => arrayTree(c, s.ptrAt(s.ptr('ArrowArray', ptr, 'children') + i * 4), child)),
    dictionary: dictionary === 0 ? null : arrayTree(c, dictionary, raw.dictionary!),
    released: s.ptr('ArrowArray', ptr, 'release') === 0,
  };
}

function referenceTrees(field: t.Field, raw: RawArray): unknown {
  const c = acd.core;
  const schema = c.alloc(c.structs.size('ArrowSchema'));
  const array = c.alloc(c.structs.size('ArrowArray'));
  try {
    referenceSchema(c, schema, field);
    referenceRaw(c, array, raw);
    return { schema: schemaTree(c, schema), array: arrayTree(c, array, raw) };
  } finally {
    c.schemaRelease(schema);
    c.arrayRelease(array);
    c.free(schema);
    c.free(array);
  }
}

function exportedTrees(e: { schema: number; array: number; release(): void }, raw: RawArray): unknown {
  try {
    return { schema: schemaTree(acd.core, e.schema), array: arrayTree(acd.core, e.array, raw) };
  } finally {
    e.release();
  }
}

const error = (f: () => unknown): ArrowCDeviceError => {
  try {
    f();
  } catch (e) {
    return e as ArrowCDeviceError;
  }
  throw new Error('expected an error');
};

// ---- the same trees as before --------------------------------------------------

const cases = corpusCases();

describe('every case of the fixture corpus exports as the per-node writer did', () => {
  test.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const start = acd.bytesAllocated();
    const field = t.recordBatchField(c.schema);
    for (const raw of c.batches) {
      expect(exportedTrees(acd.exportRaw(field, raw), raw)).toEqual(referenceTrees(field, raw));
      expect(exportedTrees(acd.exportDeviceRaw(field, raw), raw)).toEqual(referenceTrees(field, raw));
    }
    expect(acd.bytesAllocated()).toBe(start);
  });
});

/** The corpus cases apache-arrow can hold, as apache-arrow data (whole, and sliced when long enough). */
function arrowCases(): [string, arrow.Data, t.DataType][] {
  const out: [string, arrow.Data, t.DataType][] = [];
  for (const c of cases) {
    if (c.name.startsWith('invalid')) continue;
    c.batches.forEach((raw, b) => {
      let data: arrow.Data;
      try {
        data = toArrowData(raw);
      } catch {
        return; // a type apache-arrow lacks
      }
      out.push([`${c.name} #${b}`, data, fromArrowType(data.type)]);
      if (data.length >= 3) out.push([`${c.name} #${b} sliced`, data.slice(1, data.length - 2), fromArrowType(data.type)]);
    });
  }
  return out;
}

describe('apache-arrow data written straight into the descriptor gives what its raw array gives', () => {
  const all = arrowCases();
  test('the corpus has apache-arrow cases of every kind the direct writer handles', () => {
    const kinds = new Set(all.flatMap(([, , type]) => t.childFields(type).map((f) => f.type.kind)));
    for (const kind of ['int', 'float', 'bool', 'utf8', 'binary', 'struct', 'timestamp', 'dictionary', 'list']) expect(kinds).toContain(kind);
  });
  test.each(all)('%s', (_, data, type) => {
    const start = acd.bytesAllocated();
    const raw = fromArrowData(data, type);
    const field: t.Field = { name: 'v', type, nullable: true, metadata: null };
    const direct = exportedTrees(acd.exportVector(data, 'v'), raw);
    expect(direct).toEqual(exportedTrees(acd.exportRaw(field, raw), raw));
    expect(direct).toEqual(referenceTrees(field, raw));
    expect(acd.bytesAllocated()).toBe(start);
  });
});

test('a bitmap\'s bits past the length are cleared in the export (whole, sliced at a byte, sliced within one), the source left as it was', () => {
  // 13 values whose bitmaps have every bit set, past the length too (apache-arrow leaves those bits to the producer).
  const values = new Uint8Array([0xff, 0xff, 0xff, 0xff]);
  const validity = new Uint8Array([0xfb, 0xff, 0xff, 0xff]);
  const bools = arrow.makeData({ type: new arrow.Bool(), length: 13, nullCount: 1, nullBitmap: validity, data: values });
  const ints = arrow.makeData({ type: new arrow.Int32(), length: 13, nullCount: 1, nullBitmap: validity, data: new Int32Array(13).fill(7) });
  for (const [data, type] of [[bools, t.bool()], [ints, t.int32()]] as const) {
    for (const [from, n] of [[0, 13], [8, 5], [3, 10], [0, 8], [8, 13]] as const) {
      const part = data.slice(from, Math.min(n, data.length - from));
      const raw = fromArrowData(part, type);
      const field: t.Field = { name: 'v', type, nullable: true, metadata: null };
      const e = acd.exportVector(part, 'v');
      const s = acd.core.structs;
      const buffers = s.ptr('ArrowArray', e.array, 'buffers');
      const bitmaps = type.kind === 'bool' ? [0, 1] : [0];
      for (const i of bitmaps) {
        const at = s.ptrAt(buffers + i * 4);
        const length = part.length;
        const last = acd.core.bytes[at + ((length + 7) >> 3) - 1]!;
        // The bits past the length are 0; those within it are the source's.
        expect(last >> (length & 7 || 8)).toBe(0);
      }
      expect(exportedTrees(e, raw)).toEqual(exportedTrees(acd.exportRaw(field, raw), raw));
    }
  }
  expect(Array.from(values)).toEqual([0xff, 0xff, 0xff, 0xff]);
  expect(Array.from(validity)).toEqual([0xfb, 0xff, 0xff, 0xff]);
});

// ---- strings, buffers, sizes -----------------------------------------------------

test('names and metadata keep non-ASCII text, byte for byte', () => {
  const start = acd.bytesAllocated();
  const metadata = new Map([['clé', 'värde ✓'], ['空', ''], ['emoji 🚀', 'Ünïcödé \u{10FFFF}']]);
  const schema = t.schema([
    t.field('naïve 列 🚀', t.int32(), false, metadata),
    t.field('', t.utf8()),
    t.field('ascii', t.dictionary(t.int8(), t.utf8()), true, new Map([['k', 'v']])),
  ], new Map([['schéma', 'métadonnées']]));
  const field = t.recordBatchField(schema);
  const dictionary = t.dictionary(t.int8(), t.utf8());
  const raw: RawArray = {
    type: field.type, length: 0, nullCount: 0, offset: 0, buffers: [null], dictionary: null,
    children: [
      { type: t.int32(), length: 0, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(0)], children: [], dictionary: null },
      { type: t.utf8(), length: 0, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(4), new Uint8Array(0)], children: [], dictionary: null },
      {
        type: dictionary, length: 0, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(0)], children: [],
        dictionary: { type: t.utf8(), length: 0, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(4), new Uint8Array(0)], children: [], dictionary: null },
      },
    ],
  };
  const e = acd.exportRaw(field, raw);
  const back = readField(acd.core.structs, e.schema);
  expect(back).toEqual(field);
  expect(exportedTrees(e, raw)).toEqual(referenceTrees(field, raw));
  expect(acd.bytesAllocated()).toBe(start);
});

test('a zero-length buffer is allocated (not NULL), a NULL buffer stays NULL, and both leave nothing behind', () => {
  const start = acd.bytesAllocated();
  const raw: RawArray = { type: t.utf8(), length: 0, nullCount: 0, offset: 0, buffers: [null, new Uint8Array(4), new Uint8Array(0)], children: [], dictionary: null };
  const e = acd.exportRaw(t.field('s', t.utf8()), raw);
  const s = acd.core.structs;
  const buffers = s.ptr('ArrowArray', e.array, 'buffers');
  expect(s.ptrAt(buffers)).toBe(0);
  expect(s.ptrAt(buffers + 4)).not.toBe(0);
  expect(s.ptrAt(buffers + 8)).not.toBe(0);
  e.release();
  expect(acd.bytesAllocated()).toBe(start);
});

test('buffers of any typed array are copied as bytes, not converted element by element', () => {
  const start = acd.bytesAllocated();
  const values = new Float64Array([1.5, -0, NaN, 2 ** 60]);
  const raw = { type: t.float64(), length: 4, nullCount: 0, offset: 0, buffers: [null, values], children: [], dictionary: null } as unknown as RawArray;
  const e = acd.exportRaw(t.field('f', t.float64()), raw);
  const at = acd.core.structs.ptrAt(acd.core.structs.ptr('ArrowArray', e.array, 'buffers') + 4);
  expect(hex(acd.core.bytes.subarray(at, at + 32))).toBe(hex(new Uint8Array(values.buffer)));
  e.release();
  expect(acd.bytesAllocated()).toBe(start);
});

test('buffers that are typed array subclasses (Node\'s Buffer, others) or DataViews are copied as bytes, their constructors never called', () => {
  const start = acd.bytesAllocated();
  let guard = false;
  class Guarded extends Uint8Array {
    constructor(...args: ConstructorParameters<typeof Uint8Array>) {
      if (guard) throw new Error('constructor called during an export');
      super(...(args as [number]));
    }
  }
  class GuardedInt32 extends Int32Array {
    constructor(...args: ConstructorParameters<typeof Int32Array>) {
      if (guard) throw new Error('constructor called during an export');
      super(...(args as [number]));
    }
  }
  const bytes = new Guarded(8);
  bytes.set([1, 0, 0, 0, 255, 255, 255, 255]);
  const ints = GuardedInt32.from([5, -6]) as GuardedInt32;
  const node = Buffer.from(new Int32Array([7, 8]).buffer);
  // A DataView too (not a typed array at all), whole and as part of a larger buffer.
  const view = new DataView(new Int32Array([9, 10]).buffer);
  const part = new DataView(new Int32Array([0, 11, 12, 0]).buffer, 4, 8);
  for (const b of [bytes, ints, node, view, part]) {
    const raw = { type: t.int32(), length: 2, nullCount: 0, offset: 0, buffers: [null, b], children: [], dictionary: null } as unknown as RawArray;
    guard = true;
    const e = acd.exportRaw(t.field('i', t.int32()), raw);
    guard = false;
    const at = acd.core.structs.ptrAt(acd.core.structs.ptr('ArrowArray', e.array, 'buffers') + 4);
    expect(hex(acd.core.bytes.subarray(at, at + 8))).toBe(hex(new Uint8Array(b.buffer, b.byteOffset, 8)));
    e.release();
  }
  expect(acd.bytesAllocated()).toBe(start);
});

test('a descriptor too big for the core\'s scratch area is written into an allocation, freed after', () => {
  const start = acd.bytesAllocated();
  const columns = 6000;
  const data: Record<string, arrow.Vector> = {};
  for (let i = 0; i < columns; i++) data[`c${i}`] = arrow.makeVector(new Int8Array([i & 127]));
  const batch = new arrow.Table(data).batches[0];
  const e = acd.exportBatch(batch);
  const back = acd.importBatch(e.schema, e.array);
  expect(back.value.numCols).toBe(columns);
  expect(back.value.getChildAt(5999)!.get(0)).toBe(5999 & 127);
  back.release();
  e.release();
  expect(acd.bytesAllocated()).toBe(start);
});

test('views of the core\'s memory are exported right although the export grows the memory (and detaches them)', () => {
  const start = acd.bytesAllocated();
  const n = 1 << 20;
  const values = new Int32Array(n).map((_, i) => i * 7);
  const first = acd.exportVector(arrow.makeVector(values), 'v');
  const view = acd.importVector(first.schema, first.array, { mode: 'view' });
  const kept = [];
  let grew = false;
  // Each export takes 4 MB more; one of them must grow the memory.
  for (let i = 0; i < 8 && !grew; i++) {
    const before = acd.core.memory.buffer.byteLength;
    kept.push(acd.exportVector(view.value, 'v'));
    grew = acd.core.memory.buffer.byteLength > before;
  }
  expect(grew).toBe(true);
  const back = acd.importVector(kept[kept.length - 1].schema, kept[kept.length - 1].array);
  expect(back.value.get(n - 1)).toBe((n - 1) * 7);
  expect(back.value.get(12345)).toBe(12345 * 7);
  back.release();
  kept.forEach((k) => k.release());
  view.release();
  first.release();
  expect(acd.bytesAllocated()).toBe(start);
});

// ---- failures leave nothing allocated ----------------------------------------------

describe('failures leave nothing allocated', () => {
  test('a detached source buffer is refused with its path', () => {
    const start = acd.bytesAllocated();
    const bytes = new Uint8Array(16);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    const raw: RawArray = {
      type: t.struct([t.field('a', t.int32())]), length: 4, nullCount: 0, offset: 0, buffers: [null], dictionary: null,
      children: [{ type: t.int32(), length: 4, nullCount: 0, offset: 0, buffers: [null, bytes], children: [], dictionary: null }],
    };
    const err = error(() => acd.exportRaw(t.field('s', raw.type), raw));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe('array.children[0].buffers[1]: the source buffer is detached');
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('a name with a NUL byte is refused by the core, naming the node', () => {
    const start = acd.bytesAllocated();
    const field = t.recordBatchField(t.schema([t.field('ok', t.int32()), t.field('a\0b', t.int32())]));
    const raw = fromArrowData(new arrow.Table({ ok: arrow.makeVector(new Int32Array(1)), x: arrow.makeVector(new Int32Array(1)) }).batches[0].data, field.type);
    const err = error(() => acd.exportRaw(field, raw));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe("schema.children[1]: name 'a' contains a NUL byte");
    expect(err.path).toBe('schema.children[1]');
    expect(acd.bytesAllocated()).toBe(start);
  });

  /** Runs the core's flatExport on hand-written words; returns its error. */
  function flatError(words: number[]): ArrowCDeviceError {
    const c = acd.core;
    const ptr = c.alloc((words.length + 2) * 8 + 8);
    try {
      new Float64Array(c.memory.buffer, ptr, words.length).set(words);
      c.bytes[ptr + (words.length + 2) * 8] = 0x69; // the one string byte: "i", the format of every node
      return error(() => c.flatExport(ptr, words.length, ptr + (words.length + 2) * 8, 1, c.structs.size('ArrowArray')));
    } finally {
      c.free(ptr);
    }
  }

  // One schema node ("i", no name), then its array: a struct of two int32 children.
  const schemaWords = (children: number) => [0, 1, -1, 0, -1, 0, 0, children, 0];
  const intSchema = [0, 1, -1, 0, -1, 0, 0, 0, 0];
  const arrayNode = (buffers: number[], children: number) => [4, 0, 0, buffers.length, children, 0, ...buffers];

  test('an allocation that fails (a buffer of 2^52 bytes) after others succeeded: ENOMEM with the path, all freed', () => {
    const start = acd.bytesAllocated();
    const err = flatError([...schemaWords(2), ...intSchema, ...intSchema, ...arrayNode([-1], 2), ...arrayNode([-1, 16], 0), ...arrayNode([-1, 2 ** 52], 0)]);
    expect(err.errno).toBe(ENOMEM);
    expect(err.message).toBe(`array.children[1].buffers[1]: could not allocate ${2 ** 52} bytes`);
    expect(err.path).toBe('array.children[1].buffers[1]');
    expect(acd.bytesAllocated()).toBe(start);
  });

  test.each([
    ['more children than words', [...schemaWords(1000)], 'schema: descriptor: 1000 more nodes than its 9 words can hold'],
    ['a count that is no integer', [...schemaWords(2.5)], 'schema: descriptor: n_children: expected an integer from 0 to 2147483647, found 2.5'],
    ['a string past the string bytes', [1, 1, -1, 0, -1, 0, 0, 0, 0], 'schema: descriptor: format: 1 bytes at 1 run past the 1 string bytes'],
    ['a length past the string bytes', [0, 5, -1, 0, -1, 0, 0, 0, 0], 'schema: descriptor: format: expected an integer from 0 to 1, found 5'],
    ['words left over', [...intSchema, ...arrayNode([-1, 16], 0), 7], 'descriptor: 18 words, 17 of them read'],
    ['a descriptor that ends inside a node', [...intSchema, 4, 0, 0], 'array: descriptor: ends at word 12 inside a node (n_buffers)'],
  ])('a malformed descriptor is refused: %s', (_, words, message) => {
    const start = acd.bytesAllocated();
    const err = flatError(words);
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe(message);
    expect(acd.bytesAllocated()).toBe(start);
  });
});
