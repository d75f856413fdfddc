// The floors of the benchmark's comparisons, made once per set (untimed):
// the bytes of every buffer, in one array and one by one, the object
// builders, and the scratch regions of wasm memory the copies go to.

import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../index.js';
import type { BenchSet } from './data.js';

/** Scratch regions of wasm memory (for the memcpy floor and the IPC bytes), grown on demand. */
export class Scratch {
  private readonly regions = new Map<string, { at: number; size: number }>();
  constructor(private readonly acd: ArrowCDevice) {}

  get(name: string, size: number): number {
    const r = this.regions.get(name);
    if (r !== undefined && r.size >= size) return r.at;
    if (r !== undefined) this.acd.core.free(r.at);
    const at = this.acd.core.alloc(Math.max(size, 1));
    this.regions.set(name, { at, size });
    return at;
  }

  release(): void {
    for (const r of this.regions.values()) this.acd.core.free(r.at);
    this.regions.clear();
  }
}

/** Every buffer byte of the set in one array (the pieces one after the other): the source of the memcpy floor. */
export function concatBuffers(pieces: Pieces): Uint8Array {
  const out = new Uint8Array(pieces.list.reduce((n, b) => n + b.byteLength, 0));
  let at = 0;
  for (const b of pieces.list) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/** Every buffer an export of the set copies (bytes), and where each goes in one block of 64-byte aligned places. */
export interface Pieces {
  list: Uint8Array[];
  at: number[];
  bytes: number;
}

export function bufferPieces(set: BenchSet): Pieces {
  const list: Uint8Array[] = [];
  const at: number[] = [];
  let bytes = 0;
  const walk = (d: arrow.Data) => {
    for (const b of [d.valueOffsets, d.values, d.nullCount > 0 ? d.nullBitmap : undefined, d.typeIds]) {
      if (b === undefined || b === null || b.byteLength === 0) continue;
      list.push(new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
      at.push(bytes);
      bytes += Math.ceil(b.byteLength / 64) * 64;
    }
    d.children.forEach(walk);
    d.dictionary?.data.forEach(walk);
  };
  set.batches.forEach((b) => walk(b.data));
  return { list, at, bytes: Math.max(bytes, 64) };
}

/**
 * The object-building floors: the apache-arrow Data (and Vector, for
 * dictionaries) objects of the set, built over typed arrays that already
 * exist, with types that already exist; then the same wrapped in record
 * batches by apache-arrow's constructor. Any importer has at least this to do.
 */
export function floorBuilders(set: BenchSet): { data: () => arrow.Data[]; batches: () => arrow.RecordBatch[] } {
  const node = (d: arrow.Data): (() => arrow.Data) => {
    const children = d.children.map(node);
    const dictionary = d.dictionary?.data.map(node);
    const buffers = { 0: d.valueOffsets, 1: d.values, 2: d.nullBitmap, 3: d.typeIds };
    const { type, offset, length, nullCount } = d;
    return () => new arrow.Data(type, offset, length, nullCount, buffers, children.map((c) => c()),
      dictionary && new arrow.Vector(dictionary.map((c) => c())));
  };
  const batches = set.batches.map((b) => ({ schema: b.schema, data: node(b.data) }));
  return {
    data: () => batches.map((b) => b.data()),
    batches: () => batches.map((b) => new arrow.RecordBatch(b.schema, b.data() as arrow.Data<arrow.Struct>)),
  };
}

/** Reads struct trees in a core's memory (structReader). */
export interface StructReader {
  /** The sum of the schema tree at ptr. */
  schema(ptr: number): number;
  /** The sum of the array tree at ptr. */
  array(ptr: number): number;
}

/**
 * The struct-reading floor: what any importer reads before it builds
 * anything, in the memory an export left. Every 32-bit word of every
 * ArrowSchema and ArrowArray of the trees, every entry of their pointer
 * arrays, and the bytes of every format and name (to their NUL), summed so
 * that nothing is skipped. The trees are this library's exports, in the
 * core's memory (wasm32 layout; counts below 2^31).
 */
export function structReader(acd: ArrowCDevice): StructReader {
  // Word (4-byte) indices of the fields read, and each struct's size in words.
  const s = acd.core.structs;
  const field = (struct: 'ArrowSchema' | 'ArrowArray', name: string) => s.offsetOf(struct, name) / 4;
  const SCHEMA = { format: field('ArrowSchema', 'format'), name: field('ArrowSchema', 'name'), nChildren: field('ArrowSchema', 'n_children'),
    children: field('ArrowSchema', 'children'), dictionary: field('ArrowSchema', 'dictionary'), words: s.size('ArrowSchema') / 4 };
  const ARRAY = { nBuffers: field('ArrowArray', 'n_buffers'), nChildren: field('ArrowArray', 'n_children'), buffers: field('ArrowArray', 'buffers'),
    children: field('ArrowArray', 'children'), dictionary: field('ArrowArray', 'dictionary'), words: s.size('ArrowArray') / 4 };
  let w = new Int32Array(0);
  let u8 = new Uint8Array(0);
  const sum = (word: number, n: number) => {
    let s = 0;
    for (let i = word; i < word + n; i++) s = (s + w[i]!) | 0;
    return s;
  };
  const text = (ptr: number) => {
    let s = 0;
    for (let i = ptr; ptr !== 0 && u8[i] !== 0; i++) s = (s + u8[i]!) | 0;
    return s;
  };
  const schema = (ptr: number): number => {
    const i = ptr >> 2;
    let s = (sum(i, SCHEMA.words) + text(w[i + SCHEMA.format]! >>> 0) + text(w[i + SCHEMA.name]! >>> 0)) | 0;
    const children = (w[i + SCHEMA.children]! >>> 0) >> 2;
    for (let c = 0; c < w[i + SCHEMA.nChildren]!; c++) s = (s + schema(w[children + c]! >>> 0)) | 0;
    const dictionary = w[i + SCHEMA.dictionary]! >>> 0;
    return dictionary === 0 ? s : (s + schema(dictionary)) | 0;
  };
  const array = (ptr: number): number => {
    const i = ptr >> 2;
    let s = (sum(i, ARRAY.words) + sum((w[i + ARRAY.buffers]! >>> 0) >> 2, w[i + ARRAY.nBuffers]!)) | 0;
    const children = (w[i + ARRAY.children]! >>> 0) >> 2;
    for (let c = 0; c < w[i + ARRAY.nChildren]!; c++) s = (s + array(w[children + c]! >>> 0)) | 0;
    const dictionary = w[i + ARRAY.dictionary]! >>> 0;
    return dictionary === 0 ? s : (s + array(dictionary)) | 0;
  };
  const over = <T>(read: (ptr: number) => T) => (ptr: number): T => {
    const buffer = acd.memory.buffer as ArrayBuffer;
    if (w.buffer !== buffer) {
      w = new Int32Array(buffer);
      u8 = new Uint8Array(buffer);
    }
    return read(ptr);
  };
  return { schema: over(schema), array: over(array) };
}
