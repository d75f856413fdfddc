// Writing a field's ArrowSchema tree and a raw array's ArrowArray tree into
// the core's memory in one wasm call: the trees are described in a flat
// descriptor (numbers and string bytes, layout in csrc/model/model.h,
// AcdFlatInit), the C core makes every node and allocates every buffer, and
// the buffers are then copied in with one `set` each. Per node this costs a
// few array writes instead of a wasm call per node and per buffer.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { flagsOf, formatOf } from './format.js';
import { encodeMetadata } from './metadata.js';
import { heapViews, TYPED_ARRAYS } from './heap-views.js';
import { childFields, type Field } from './types.js';

/**
 * What is written of an array node: a raw array (model/raw.ts) has these
 * fields (declared here so that raw.ts, which writes through this file, is not
 * imported by it).
 */
export interface FlatArray {
  readonly length: number;
  readonly nullCount: number;
  readonly offset: number;
  readonly buffers: readonly (Uint8Array | null)[];
  readonly children: readonly FlatArray[];
  readonly dictionary: FlatArray | null;
}

/** Words per node (csrc/model/model.h: ACD_FLAT_SCHEMA_WORDS, ACD_FLAT_ARRAY_WORDS). */
const SCHEMA_WORDS = 9;
const ARRAY_WORDS = 6;

const encoder = new TextEncoder();

/**
 * The descriptor under construction, reused by every export (nothing in a
 * write calls out to code that could start another write before it ends).
 * Array nodes come from raw arrays (array()) or from a writer that makes
 * them itself (node() and buffer(): ts/arrow-js/arrow-describe.ts).
 */
export class Descriptor {
  words = new Float64Array(1024);
  nWords = 0;
  strings = new Uint8Array(4096);
  nStrings = 0;
  /** The source of each buffer to copy (a typed array), and the word its size (then its address) is in. */
  sources: ArrayBufferView[] = [];
  slots: number[] = [];
  /** Per source: its byte offset and size (a view of the core's memory that the export's growth detached is copied within it). */
  offsets: number[] = [];
  sizes: number[] = [];
  /** Per source: the bits of its last byte that are kept (1 to 7; the others cleared after the copy), or 0: all. */
  lastBits: number[] = [];
  nSources = 0;
  /**
   * The schema part the descriptor starts with, or null: its words and strings are written from it into the core's
   * memory (writeTo()), not copied here first; the first words and strings here are left as they are.
   */
  private head: SchemaPart | null = null;

  reset(): void {
    this.nWords = 0;
    this.nStrings = 0;
    this.nSources = 0;
    this.head = null;
  }

  /** Room for n more words. */
  room(n: number): Float64Array {
    if (this.nWords + n > this.words.length) {
      const grown = new Float64Array(Math.max(this.words.length * 2, this.nWords + n));
      grown.set(this.words.subarray(0, this.nWords));
      this.words = grown;
    }
    return this.words;
  }

  /** Appends a string's UTF-8 bytes and writes its offset and length into words k and k + 1. */
  string(s: string, k: number): void {
    const n = s.length;
    if (this.nStrings + 3 * n > this.strings.length) this.growStrings(3 * n);
    const at = this.nStrings;
    const out = this.strings;
    let i = 0;
    // ASCII (names and formats, nearly always) byte by byte; the rest by the encoder.
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      out[at + i] = c;
    }
    let end = at + i;
    if (i < n) end += encoder.encodeInto(s.slice(i), out.subarray(end)).written;
    this.nStrings = end;
    this.words[k] = at;
    this.words[k + 1] = end - at;
  }

  bytes(b: Uint8Array, k: number): void {
    if (this.nStrings + b.length > this.strings.length) this.growStrings(b.length);
    this.strings.set(b, this.nStrings);
    this.words[k] = this.nStrings;
    this.words[k + 1] = b.length;
    this.nStrings += b.length;
  }

  private growStrings(n: number): void {
    const grown = new Uint8Array(Math.max(this.strings.length * 2, this.nStrings + n));
    grown.set(this.strings.subarray(0, this.nStrings));
    this.strings = grown;
  }

  schema(field: Field): void {
    const { type } = field;
    const children = childFields(type);
    const k = this.nWords;
    const w = this.room(SCHEMA_WORDS);
    this.nWords += SCHEMA_WORDS;
    this.string(formatOf(type), k);
    this.string(field.name, k + 2);
    const metadata = encodeMetadata(field.metadata);
    if (metadata === null) {
      w[k + 4] = -1;
      w[k + 5] = 0;
    } else {
      this.bytes(metadata, k + 4);
    }
    w[k + 6] = flagsOf(field);
    w[k + 7] = children.length;
    w[k + 8] = type.kind === 'dictionary' ? 1 : 0;
    for (let i = 0; i < children.length; i++) this.schema(children[i]);
    if (type.kind === 'dictionary') this.schema({ name: '', type: type.valueType, nullable: true, metadata: null });
  }

  /** Appends a schema part described before (the descriptor must be empty: its string offsets start at 0). */
  part(part: SchemaPart): void {
    if (this.nWords !== 0 || this.nStrings !== 0) throw new Error('a schema part goes first in a descriptor');
    this.room(part.words.length);
    this.nWords = part.words.length;
    if (part.strings.length > this.strings.length) this.growStrings(part.strings.length);
    this.nStrings = part.strings.length;
    this.head = part;
  }

  /** Writes the words from word `at` of f64 on, and the string bytes from byte `stringsAt` of u8 on. */
  writeTo(f64: Float64Array, at: number, u8: Uint8Array, stringsAt: number): void {
    const head = this.head;
    let words = 0;
    let strings = 0;
    if (head !== null) {
      f64.set(head.words, at);
      u8.set(head.strings, stringsAt);
      words = head.words.length;
      strings = head.strings.length;
    }
    f64.set(this.words.subarray(words, this.nWords), at + words);
    u8.set(this.strings.subarray(strings, this.nStrings), stringsAt + strings);
  }

  /**
   * Appends an array node's words (its buffer words follow, set by buffer()
   * or nullBuffer(), then its children's and its dictionary's nodes); returns
   * where they start.
   */
  node(length: number, nullCount: number, offset: number, nBuffers: number, nChildren: number, dictionary: boolean): number {
    const k = this.nWords;
    const w = this.room(ARRAY_WORDS + nBuffers);
    this.nWords += ARRAY_WORDS + nBuffers;
    w[k] = length;
    w[k + 1] = nullCount;
    w[k + 2] = offset;
    w[k + 3] = nBuffers;
    w[k + 4] = nChildren;
    w[k + 5] = dictionary ? 1 : 0;
    return k;
  }

  /** Buffer i of the node at k is NULL. */
  nullBuffer(k: number, i: number): void {
    this.words[k + ARRAY_WORDS + i] = -1;
  }

  /**
   * Buffer i of the node at k holds bytes [from, from + size) of `a` (the caller checked they exist): allocated by
   * the core, then copied as `a`'s own type where it can be (no view made); the copy keeps only the `lastBits` (1 to
   * 7) low bits of its last byte (a bitmap's bits past its length are cleared there, not in a copy made first), or all (0).
   */
  buffer(k: number, i: number, a: ArrayBufferView, from: number, size: number, lastBits = 0): void {
    this.words[k + ARRAY_WORDS + i] = size;
    if (size === 0) return;
    const j = this.nSources++;
    let source: ArrayBufferView;
    if (from === 0 && size === a.byteLength) {
      // The whole of `a` (the common case): copied through a view of its own type (HeapViews.copy).
      source = a;
    } else if (a instanceof Uint8Array) {
      source = a.subarray(from, from + size);
    } else {
      // The standard typed arrays only (a DataView or a subclass gets a byte view).
      const typed = a as Int32Array;
      const width = TYPED_ARRAYS.has(a.constructor) ? typed.BYTES_PER_ELEMENT : 0;
      if (width !== 0 && from === 0 && size === a.byteLength) source = a;
      else if (width !== 0 && from % width === 0 && size % width === 0) source = typed.subarray(from / width, (from + size) / width);
      else source = new Uint8Array(a.buffer, a.byteOffset + from, size);
    }
    this.sources[j] = source;
    this.slots[j] = k + ARRAY_WORDS + i;
    this.offsets[j] = source.byteOffset;
    this.sizes[j] = size;
    this.lastBits[j] = lastBits;
  }

  /** Appends a raw array's nodes (the node, its children, its dictionary). */
  array(raw: FlatArray): void {
    const { buffers, children } = raw;
    const nBuffers = buffers.length;
    const k = this.node(raw.length, raw.nullCount, raw.offset, nBuffers, children.length, raw.dictionary !== null);
    for (let i = 0; i < nBuffers; i++) {
      const b = buffers[i];
      if (b === null) {
        this.nullBuffer(k, i);
      } else {
        // Allocated, nothing to copy; but a view whose buffer was detached is no empty buffer.
        if (b.byteLength === 0 && isDetached(b)) {
          const path = (this.root !== null ? pathOf(this.root, b) : '') || 'array';
          throw new ArrowCDeviceError(`${path}: the source buffer is detached`, EINVAL, path);
        }
        this.buffer(k, i, b, 0, b.byteLength);
      }
    }
    for (let i = 0; i < children.length; i++) this.array(children[i]);
    if (raw.dictionary !== null) this.array(raw.dictionary);
  }

  /** The raw array being described (for the path of an error). */
  root: FlatArray | null = null;

  /** Drops the references to the sources (they may be large). */
  clear(): void {
    for (let j = 0; j < this.nSources; j++) this.sources[j] = EMPTY;
    this.root = null;
    this.head = null;
  }
}

const EMPTY = new Uint8Array(0);
const descriptor = new Descriptor();

/**
 * A field's part of a descriptor (its schema tree's words and string bytes),
 * described once and reused by every export of that field
 * (ts/arrow-js/schema-parts.ts keeps one per apache-arrow schema).
 */
export interface SchemaPart {
  readonly field: Field;
  readonly words: Float64Array;
  readonly strings: Uint8Array;
}

/**
 * The descriptor schema parts are described in: one for every part (a new
 * descriptor's 12 KB of typed arrays cost more than describing a schema of a
 * few fields), apart from the exports' (a part is described before an export's
 * descriptor is filled, never during).
 */
const partDescriptor = new Descriptor();

/** Describes a field's schema tree once, for exports that reuse it. */
export function schemaPart(field: Field): SchemaPart {
  const d = partDescriptor;
  d.reset();
  try {
    d.schema(field);
    return { field, words: d.words.slice(0, d.nWords), strings: d.strings.slice(0, d.nStrings) };
  } finally {
    d.clear();
  }
}

/**
 * Initializes the ArrowSchema at `schemaPtr` for `field` and the ArrowArray
 * at `arrayPtr` with a copy of `raw` (either may be absent: pointer 0 and
 * null), their old content ignored, in one call into the core. On success
 * each struct owns everything it holds (its release frees it); on failure
 * nothing stays allocated and both structs are released. Buffers that are
 * views of this core's memory (zero-copy imports) are copied correctly even
 * when the allocations grow it.
 *
 * @throws `ArrowCDeviceError` naming the path of the node or buffer that could not be written.
 */
export function writeFlat(core: Core, schemaPtr: number, field: Field | null, arrayPtr: number, raw: FlatArray | null): void {
  transfer(core, field, raw === null ? null : rawWriter(raw), 0, (words, nWords, strings, nStrings) => core.flatInit(words, nWords, strings, nStrings, schemaPtr, arrayPtr));
}

/**
 * Initializes the ArrowArray at `arrayPtr` (its old content ignored) with the
 * nodes `write` appends (a raw array's: rawWriter; apache-arrow data's:
 * ts/arrow-js/arrow-describe.ts), in one call into the core, as writeFlat does.
 */
export function writeArrayFlat(core: Core, arrayPtr: number, write: ArrayWriter): void {
  transfer(core, null, write, 0, (words, nWords, strings, nStrings) => core.flatInit(words, nWords, strings, nStrings, 0, arrayPtr));
}

/**
 * Exports field and an array (its nodes appended by `write`) in one call into the core: a new ArrowSchema and a
 * new array struct of `arraySize` bytes (an ArrowArray, or an ArrowDeviceArray
 * whose ArrowArray the trees are made in), allocated by the core's allocator
 * (`core.free` frees them), the trees made as writeFlat makes them.
 *
 * Ownership: the caller owns both base structs (and through them the trees); on failure nothing stays allocated.
 * @returns the ArrowSchema's and the array struct's addresses.
 */
export function exportFlat(core: Core, field: Field | SchemaPart, write: ArrayWriter, arraySize: number): [schema: number, array: number] {
  let out: [number, number] = [0, 0];
  transfer(core, field, write, 2, (words, nWords, strings, nStrings) => core.flatExport(words, nWords, strings, nStrings, arraySize),
    (f64, at) => { out = [f64[at], f64[at + 1]]; });
  return out;
}

/**
 * Describes field and raw, writes the descriptor (and `extra` words after it,
 * for the results) into the core's scratch area, or an allocation when it is
 * too big, calls `call`, lets `results` read the words after the descriptor,
 * then copies every buffer to the address the core wrote in its place.
 */
function transfer(core: Core, field: Field | SchemaPart | null, write: ArrayWriter | null, extra: number,
  call: (words: number, nWords: number, strings: number, nStrings: number) => void,
  results?: (f64: Float64Array, at: number) => void): void {
  const d = descriptor;
  d.reset();
  try {
    if (field !== null) {
      if ('words' in field) d.part(field);
      else d.schema(field);
    }
    if (write !== null) write(d);
    const nWords = d.nWords;
    const nStrings = d.nStrings;
    const stringsAt = (nWords + extra) * 8;
    const size = stringsAt + nStrings;
    // Allocations from here on may grow the memory, which detaches the sources that are views of it.
    const memory = core.memory.buffer;
    const scratch = core.flatScratch();
    const ptr = size <= scratch.bytes ? scratch.ptr : core.alloc(size);
    try {
      const before = heapViews(core.memory.buffer);
      d.writeTo(before.f64, ptr / 8, before.u8, ptr + stringsAt);
      call(ptr, nWords, ptr + stringsAt, nStrings);
      const views = heapViews(core.memory.buffer);
      const { f64, u8 } = views;
      const grown = views.buffer !== memory;
      const base = ptr / 8;
      results?.(f64, base + nWords);
      const { sources, slots, lastBits } = d;
      for (let j = 0; j < d.nSources; j++) {
        const at = f64[base + slots[j]];
        const source = sources[j];
        if (grown && source.buffer === memory) u8.copyWithin(at, d.offsets[j], d.offsets[j] + d.sizes[j]);
        // Buffers are 64-byte aligned: a view of the source's own type copies its bytes as they are.
        else views.copy(source, at);
        if (lastBits[j] !== 0) u8[at + d.sizes[j] - 1] &= (1 << lastBits[j]) - 1;
      }
    } finally {
      if (ptr !== scratch.ptr) core.free(ptr);
    }
  } finally {
    d.clear();
  }
}

/** Appends an array's nodes to a descriptor. */
export type ArrayWriter = (d: Descriptor) => void;

/** The writer of a raw array's nodes. */
export function rawWriter(raw: FlatArray): ArrayWriter {
  return (d) => {
    d.root = raw;
    d.array(raw);
  };
}

/** Whether the buffer under a view was detached (no view of it can be made any more). */
export function isDetached(b: ArrayBufferView): boolean {
  try {
    new Uint8Array(b.buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** The path of the node of `raw` that holds buffer b ("array.children[2].buffers[1]"), '' when none does. */
function pathOf(raw: FlatArray, b: ArrayBufferView, path = 'array'): string {
  const i = raw.buffers.indexOf(b as Uint8Array);
  if (i >= 0) return `${path}.buffers[${i}]`;
  for (let c = 0; c < raw.children.length; c++) {
    const found = pathOf(raw.children[c], b, `${path}.children[${c}]`);
    if (found !== '') return found;
  }
  return raw.dictionary !== null ? pathOf(raw.dictionary, b, `${path}.dictionary`) : '';
}
