// Another module's struct trees copied into the core's memory in one pass
// each, for the C core, which cannot address another memory: a schema tree
// (its structs, strings and metadata, all in one block whose releases are
// csrc/model/tree_block.c's), and the shadow of an array tree that the C
// validator checks in its place (the structs only; buffer pointers become
// foreign-window addresses, csrc/abi/window.c, through which its range checks
// compare with the other memory's size and its reads of buffer content fetch
// that memory's bytes). Every read of the other memory is bounds-checked
// first, and no node may be reached twice (a DAG or a cycle is refused).
//
// Each tree is walked twice, breadth first: once to check every node and
// count the bytes, once to write the copy into one allocation. Breadth first,
// a node's children are numbered in a row, so the second walk finds where
// each node's children are with a counter instead of a table.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import type { StructReader } from '../abi/structs.js';
import { metadataBytesAt } from '../model/metadata.js';
import type { ForeignSource } from './options.js';

/** The deepest tree copied (the JS side's bound, as before; the C validator's own limit is deeper). */
const MAX_DEPTH = 256;
/** The most buffers or children a node may have (AcdArrayInit's and AcdSchemaInit's bound). */
const MAX_COUNT = (0x7fffffff / 256) | 0;
/** The foreign window on wasm32 (ACD_FOREIGN_ADDRESS_BASE and _SIZE of csrc/abi/abi.h). */
const WINDOW_BASE = 0xc0000000;
export const WINDOW_SIZE = 0x40000000;
/** ACD_KIND_SCHEMA_TREE (csrc/abi/abi.h): the tag of a schema tree's block. */
const SCHEMA_TREE_KIND = 0x53424b31;
/** The block's header (struct AcdSchemaTree): kind, live nodes, size, unused. */
const TREE_HEADER = 16;

/** Field offsets in 32-bit words (wasm32: pointers are one word, int64 two, low first). */
interface Words {
  size: number;
  format: number; name: number; metadata: number; flags: number; nChildren: number;
  children: number; dictionary: number; release: number; privateData: number;
  length: number; nullCount: number; offset: number; nBuffers: number; buffers: number;
}

const wordsOf = new WeakMap<StructReader['layout'], { schema: Words; array: Words }>();

function words(s: StructReader): { schema: Words; array: Words } {
  let w = wordsOf.get(s.layout);
  if (w === undefined) {
    if (s.layout.pointerSize !== 4) throw new Error('foreign-tree: another module is wasm32');
    const of = (struct: 'ArrowSchema' | 'ArrowArray', f: string) => {
      const offset = s.offsetOf(struct, f);
      if (offset % 4 !== 0) throw new Error(`layout: ${struct}.${f} is not at a 32-bit word`);
      return offset / 4;
    };
    const common = (struct: 'ArrowSchema' | 'ArrowArray') => ({
      size: s.size(struct), nChildren: of(struct, 'n_children'), children: of(struct, 'children'),
      dictionary: of(struct, 'dictionary'), release: of(struct, 'release'), privateData: of(struct, 'private_data'),
    });
    w = {
      schema: { ...common('ArrowSchema'), format: of('ArrowSchema', 'format'), name: of('ArrowSchema', 'name'),
        metadata: of('ArrowSchema', 'metadata'), flags: of('ArrowSchema', 'flags'), length: -1, nullCount: -1, offset: -1, nBuffers: -1, buffers: -1 },
      array: { ...common('ArrowArray'), length: of('ArrowArray', 'length'), nullCount: of('ArrowArray', 'null_count'),
        offset: of('ArrowArray', 'offset'), nBuffers: of('ArrowArray', 'n_buffers'), buffers: of('ArrowArray', 'buffers'), format: -1, name: -1, metadata: -1, flags: -1 },
    };
    wordsOf.set(s.layout, w);
  }
  return w;
}

/** Trees of fewer nodes find a node reached twice by comparing addresses; larger ones with a set. */
const SMALL_TREE = 24;
/** A node's link to its parent: parent * LINK + its place there + 1 (place -1: the dictionary). */
const LINK = 0x1000000;

/**
 * The nodes of a tree being walked, breadth first: node i's address, and
 * its link to its parent, for the paths of messages, which are built only
 * when one is thrown. Breadth first, the depth grows by one each time the
 * walk passes the last node of a level.
 */
class Walk {
  readonly ptrs: number[];
  readonly links: number[] = [-1];
  seen: Set<number> | null = null;
  #depth = 0;
  #levelEnd = 1;

  constructor(readonly root: string, ptr: number) {
    this.ptrs = [ptr];
  }

  path(i: number): string {
    if (i === 0) return this.root;
    const link = this.links[i]!;
    const place = (link % LINK) - 1;
    return `${this.path(Math.floor(link / LINK))}${place < 0 ? '.dictionary' : `.children[${place}]`}`;
  }

  fail(i: number, suffix: string, message: string, errno = EINVAL): never {
    const p = `${this.path(i)}${suffix}`;
    throw new ArrowCDeviceError(`${p}: ${message}`, errno, p);
  }

  /** The checks of node i, visited in order: not reached before, not too deep. */
  visit(i: number): void {
    if (i === this.#levelEnd) {
      this.#depth++;
      this.#levelEnd = this.ptrs.length;
      if (this.#depth > MAX_DEPTH) this.fail(i, '', `deeper than ${MAX_DEPTH} levels`);
    }
    const ptrs = this.ptrs;
    const ptr = ptrs[i]!;
    // A few nodes (a batch of a few columns) are compared; a set is made for more.
    let reached = false;
    if (i < SMALL_TREE) {
      for (let k = 0; k < i; k++) reached ||= ptrs[k] === ptr;
    } else {
      if (this.seen === null) this.seen = new Set(ptrs.slice(0, i));
      reached = this.seen.has(ptr);
      this.seen.add(ptr);
    }
    if (reached) this.fail(i, '', `the node at ${ptr} is reached twice (the tree is a DAG or has a cycle)`);
  }

  add(ptr: number, parent: number, place: number): void {
    this.ptrs.push(ptr);
    this.links.push(parent * LINK + place + 1);
  }

  /**
   * A count field (n_buffers, n_children) from its two words: a
   * non-negative int64 within MAX_COUNT (AcdArrayInit's bound), or the
   * error naming it.
   */
  count(low: number, high: number, i: number, field: string): number {
    if (high === 0 && low <= MAX_COUNT) return low;
    const n = (BigInt(high) << 32n) | BigInt(low);
    const value = n >= 1n << 63n ? n - (1n << 64n) : n;
    if (value < 0n) this.fail(i, `.n_${field}`, `expected a non-negative count, found ${value}`);
    this.fail(i, `.n_${field}`, `expected 0 to ${MAX_COUNT}, found ${value}`);
  }
}

const align4 = (n: number) => (n + 3) & ~3;
const align8 = (n: number) => (n + 7) & ~7;

/** A static area of the core's memory that a copy may use until the next import (Core.shadowScratch). */
export interface Scratch {
  readonly at: number;
  readonly bytes: number;
}

/** A schema tree copied by copySchemaTree. */
export interface SchemaCopy {
  /** The root struct. */
  readonly root: number;
  /** The bytes of the scratch area it takes, or 0 when allocated. */
  readonly taken: number;
  /** Whether a node has metadata. */
  readonly metadata: boolean;
}

/**
 * Copies the ArrowSchema tree at `ptr` of `from` into the core, byte for
 * byte as the other module has it (the C validator checks it next): a root
 * struct whose nodes, strings and metadata all lie in one block. In
 * `scratch` when given and it fits (`taken`: the bytes used there, from its
 * start; nothing to release), else allocated (`taken` 0): the root on its
 * own, as every ImportedSchema's is.
 *
 * Ownership: an allocated copy is the caller's (the root's release frees the
 * block; the caller frees the root struct); the foreign tree is left as it
 * was. On failure nothing is allocated.
 */
export function copySchemaTree(core: Core, from: ForeignSource, ptr: number, scratch: Scratch | null = null): SchemaCopy {
  const s = from.space.structs;
  const o = words(s).schema;
  const size = o.size;
  const w = new Walk('schema', ptr);
  // The byte lengths of the strings, and the metadata, found in the first walk.
  const strings: number[] = [];
  const metadata = new Map<number, Uint8Array>();
  const bytes = from.space.bytes;
  let u32 = new Uint32Array(bytes.buffer, 0, bytes.length >> 2);
  let textBytes = 0;
  let pointerBytes = 0;
  let metadataBytes = 0;
  const limit = bytes.length;
  let view = s.view;
  for (let i = 0; i < w.ptrs.length; i++) {
    const node = w.ptrs[i]!;
    if (!(node > 0 && node + size <= limit)) s.checkRange(node, size, () => w.path(i));
    w.visit(i);
    // Structs need not be aligned in another memory: those are read through a DataView.
    const aligned = (node & 3) === 0;
    const at = node >> 2;
    if ((aligned ? u32[at + o.release]! : view.getUint32(node + 4 * o.release, true)) === 0) {
      w.fail(i, '', 'expected a live schema, found a released one');
    }
    const format = aligned ? u32[at + o.format]! : view.getUint32(node + 4 * o.format, true);
    if (format === 0) w.fail(i, '.format', 'expected a string, found NULL');
    const formatSize = stringSize(s, bytes, format, w, i, '.format');
    const name = aligned ? u32[at + o.name]! : view.getUint32(node + 4 * o.name, true);
    const nameSize = name === 0 ? -1 : stringSize(s, bytes, name, w, i, '.name');
    strings.push(formatSize, nameSize);
    textBytes += formatSize + 1 + nameSize + 1;
    const m = aligned ? u32[at + o.metadata]! : view.getUint32(node + 4 * o.metadata, true);
    if (m !== 0) {
      const meta = metadataBytesAt(from.space, m, `${w.path(i)}.metadata`);
      metadata.set(i, meta);
      metadataBytes += align4(meta.length);
    }
    const n = aligned ? w.count(u32[at + o.nChildren]!, u32[at + o.nChildren + 1]!, i, 'children')
      : w.count(view.getUint32(node + 4 * o.nChildren, true), view.getUint32(node + 4 * o.nChildren + 4, true), i, 'children');
    if (n > 0) {
      const children = aligned ? u32[at + o.children]! : view.getUint32(node + 4 * o.children, true);
      if (!(children > 0 && children + 4 * n <= limit)) s.checkRange(children, n * 4, () => `${w.path(i)}.children`);
      if ((children & 3) === 0) {
        for (let c = 0; c < n; c++) w.add(u32[(children >> 2) + c]!, i, c);
      } else {
        for (let c = 0; c < n; c++) w.add(view.getUint32(children + 4 * c, true), i, c);
      }
      pointerBytes += n * 4;
    }
    const dictionary = aligned ? u32[at + o.dictionary]! : view.getUint32(node + 4 * o.dictionary, true);
    if (dictionary !== 0) w.add(dictionary, i, -1);
  }

  // The block: header, the structs of every node but the root, the children
  // pointer arrays, the metadata, the strings (each followed by a NUL).
  const nodes = w.ptrs.length;
  const pointersAt = TREE_HEADER + (nodes - 1) * size;
  const metadataAt = pointersAt + pointerBytes;
  const textAt = metadataAt + metadataBytes;
  const total = align8(textAt + textBytes);
  const inScratch = scratch !== null && align8(size) + total <= scratch.bytes;
  let root: number;
  let block: number;
  if (inScratch) {
    root = scratch.at;
    block = scratch.at + align8(size);
  } else {
    root = core.alloc(size);
    try {
      block = core.alloc(total);
    } catch (e) {
      core.free(root);
      throw e;
    }
  }
  const release = core.treeReleases.schema;
  const out = core.bytes;
  const outWords = new Uint32Array(out.buffer, 0, out.length >> 2);
  // The other memory may be this one (a module seen through its own memory): views again after the allocations.
  const src = from.space.bytes;
  u32 = new Uint32Array(src.buffer, 0, src.length >> 2);
  view = s.view;
  outWords[block >> 2] = SCHEMA_TREE_KIND;
  outWords[(block >> 2) + 1] = nodes;
  outWords[(block >> 2) + 2] = total;
  outWords[(block >> 2) + 3] = 0;
  const structAt = (i: number) => (i === 0 ? root : block + TREE_HEADER + (i - 1) * size);
  let pointer = (block + pointersAt) >> 2;
  let meta = block + metadataAt;
  let text = block + textAt;
  let next = 1;
  for (let i = 0; i < nodes; i++) {
    const node = w.ptrs[i]!;
    const at = structAt(i) >> 2;
    // Every field is written: the scratch area holds what the last copy left.
    outWords[at + o.format] = text;
    text = copyString(src, word(u32, view, node, o.format), strings[2 * i]!, out, text);
    const nameSize = strings[2 * i + 1]!;
    outWords[at + o.name] = nameSize < 0 ? 0 : text;
    if (nameSize >= 0) text = copyString(src, word(u32, view, node, o.name), nameSize, out, text);
    const m = metadata.get(i);
    outWords[at + o.metadata] = m === undefined ? 0 : meta;
    if (m !== undefined) {
      out.set(m, meta);
      meta += align4(m.length);
    }
    outWords[at + o.flags] = word(u32, view, node, o.flags);
    outWords[at + o.flags + 1] = word(u32, view, node, o.flags + 1);
    const n = word(u32, view, node, o.nChildren);
    outWords[at + o.nChildren] = n;
    outWords[at + o.nChildren + 1] = 0;
    outWords[at + o.children] = n > 0 ? pointer << 2 : 0;
    for (let c = 0; c < n; c++) outWords[pointer++] = structAt(next + c);
    next += n;
    outWords[at + o.dictionary] = word(u32, view, node, o.dictionary) !== 0 ? structAt(next++) : 0;
    outWords[at + o.release] = release;
    outWords[at + o.privateData] = block;
  }
  return { root, taken: inScratch ? align8(size) + total : 0, metadata: metadata.size > 0 };
}

/** Word f of the struct at `node` (through the DataView when the struct is not aligned). */
function word(u32: Uint32Array, view: DataView, node: number, f: number): number {
  return (node & 3) === 0 ? u32[(node >> 2) + f]! : view.getUint32(node + 4 * f, true);
}

/** Copies the `n` bytes at `from` of src to `to` of out, then a NUL; returns where the next string goes. */
function copyString(src: Uint8Array, from: number, n: number, out: Uint8Array, to: number): number {
  // Formats and names are short: a loop costs less than a subarray and a set.
  if (n <= 64) {
    for (let k = 0; k < n; k++) out[to + k] = src[from + k]!;
  } else {
    out.set(src.subarray(from, from + n), to);
  }
  out[to + n] = 0;
  return to + n + 1;
}

/** The length of the NUL-terminated string at `address` (checked to lie in the memory, as a C string must). */
function stringSize(s: StructReader, bytes: Uint8Array, address: number, w: Walk, i: number, suffix: string): number {
  if (!(address > 0 && address < bytes.length)) s.checkRange(address, 1, () => `${w.path(i)}${suffix}`);
  const end = bytes.indexOf(0, address);
  if (end < 0) w.fail(i, suffix, `string at ${address} is not NUL-terminated`);
  return end - address;
}

/**
 * Validates the foreign ArrowArray at `ptr` against the (core) schema at
 * `schema` at `level`, through a shadow tree in the core's memory: the same
 * lengths, offsets and counts, buffer pointers into the foreign window.
 * Struct-level faults that the C validator would find in the foreign structs
 * themselves (NULL, misaligned, out of the memory, released, reached twice)
 * are found here, with its messages: the shadow carries what it reads next.
 *
 * Ownership: borrows everything; the shadow is freed before this returns.
 * It is written past the first `taken` bytes of the core's scratch area when
 * it fits there.
 */
export function validateThroughWindow(core: Core, from: ForeignSource, schema: number, ptr: number, level: number, taken = 0): void {
  const s = from.space.structs;
  const o = words(s).array;
  const size = o.size;
  const align = s.layout.structs.ArrowArray.align;
  const bytes = from.space.bytes;
  const memorySize = bytes.length;
  let u32 = new Uint32Array(bytes.buffer, 0, memorySize >> 2);
  const w = new Walk('array', ptr);
  let pointerBytes = 0;
  for (let i = 0; i < w.ptrs.length; i++) {
    const node = w.ptrs[i]!;
    if (node === 0) w.fail(i, '', 'expected an array, found NULL');
    if ((node & (align - 1)) !== 0) w.fail(i, '', `expected a struct ArrowArray aligned to ${align} bytes, found ${node}`);
    if (node + size > memorySize) s.checkRange(node, size, () => w.path(i));
    w.visit(i);
    const at = node >> 2;
    if (u32[at + o.release] === 0) w.fail(i, '', 'expected a live array, found a released one (release is NULL)');
    const nBuffers = w.count(u32[at + o.nBuffers]!, u32[at + o.nBuffers + 1]!, i, 'buffers');
    const n = w.count(u32[at + o.nChildren]!, u32[at + o.nChildren + 1]!, i, 'children');
    // NULL pointer arrays stay NULL in the shadow, for the validator to name.
    const buffers = u32[at + o.buffers]!;
    if (nBuffers > 0 && buffers !== 0 && ((buffers & 3) !== 0 || buffers + 4 * nBuffers > memorySize)) pointerArray(s, buffers, nBuffers, w, i, '.buffers');
    if (buffers !== 0) pointerBytes += nBuffers * 4;
    const children = u32[at + o.children]!;
    if (n > 0 && children !== 0 && ((children & 3) !== 0 || children + 4 * n > memorySize)) pointerArray(s, children, n, w, i, '.children');
    if (children !== 0 && n > 0) {
      pointerBytes += n * 4;
      for (let c = 0; c < n; c++) w.add(u32[(children >> 2) + c]!, i, c);
    }
    const dictionary = u32[at + o.dictionary]!;
    if (dictionary !== 0) w.add(dictionary, i, -1);
  }

  const nodes = w.ptrs.length;
  // In the core's scratch area when it fits (no allocation, no call), past the `taken` bytes a schema copy holds there.
  const scratch = core.shadowScratch;
  const bytesNeeded = nodes * size + pointerBytes;
  const inScratch = taken + bytesNeeded <= scratch.bytes;
  const block = inScratch ? scratch.at + taken : core.alloc(bytesNeeded);
  try {
    const release = core.treeReleases.shadowArray;
    // The other memory may be this one: a view again after the allocation.
    if (u32.length === 0) u32 = new Uint32Array(from.space.bytes.buffer, 0, memorySize >> 2);
    const out = core.bytes;
    const outWords = new Uint32Array(out.buffer, 0, out.length >> 2);
    let pointer = (block + nodes * size) >> 2;
    let next = 1;
    for (let i = 0; i < nodes; i++) {
      const at = w.ptrs[i]! >> 2;
      const to = (block + i * size) >> 2;
      // length, null_count and offset as they are (the validator checks them).
      outWords[to + o.length] = u32[at + o.length]!;
      outWords[to + o.length + 1] = u32[at + o.length + 1]!;
      outWords[to + o.nullCount] = u32[at + o.nullCount]!;
      outWords[to + o.nullCount + 1] = u32[at + o.nullCount + 1]!;
      outWords[to + o.offset] = u32[at + o.offset]!;
      outWords[to + o.offset + 1] = u32[at + o.offset + 1]!;
      const nBuffers = u32[at + o.nBuffers]!;
      const n = u32[at + o.nChildren]!;
      outWords[to + o.nBuffers] = nBuffers;
      outWords[to + o.nBuffers + 1] = 0;
      outWords[to + o.nChildren] = n;
      outWords[to + o.nChildren + 1] = 0;
      // The scratch area holds what the last shadow left: every field is written.
      outWords[to + o.buffers] = 0;
      outWords[to + o.children] = 0;
      outWords[to + o.dictionary] = 0;
      outWords[to + o.privateData] = 0;
      const buffers = u32[at + o.buffers]!;
      if (buffers !== 0 && nBuffers > 0) {
        outWords[to + o.buffers] = pointer << 2;
        for (let b = 0; b < nBuffers; b++) {
          const address = u32[(buffers >> 2) + b]!;
          outWords[pointer++] = address === 0 ? 0 : address < WINDOW_SIZE - 1 ? WINDOW_BASE + address : windowAddress(address, memorySize, w, i, b);
        }
      }
      if (u32[at + o.children] !== 0 && n > 0) {
        outWords[to + o.children] = pointer << 2;
        for (let c = 0; c < n; c++) outWords[pointer++] = block + (next + c) * size;
        next += n;
      }
      if (u32[at + o.dictionary] !== 0) outWords[to + o.dictionary] = block + next++ * size;
      outWords[to + o.release] = release;
    }
    core.arrayValidateForeign(from.space.memory, Math.min(memorySize, WINDOW_SIZE - 1), schema, block, level);
  } finally {
    if (!inScratch) core.free(block);
  }
}

/** Node i's C array of n pointers at `address` (not NULL), misaligned or outside the memory: the error naming it. */
function pointerArray(s: StructReader, address: number, n: number, w: Walk, i: number, suffix: string): void {
  if (address % 4 !== 0) w.fail(i, suffix, `expected ${n} pointers aligned to 4 bytes, found ${address}`);
  s.checkRange(address, n * 4, () => `${w.path(i)}${suffix}`);
}

/**
 * The window address standing for foreign address `address` (node i's
 * buffer b). An address past the window (wild: the memory is smaller)
 * stands for its last byte, which is never readable, so a buffer of 0 bytes
 * there is still accepted, as in the core's own memory; a buffer inside a
 * memory larger than the window cannot be checked.
 */
function windowAddress(address: number, memorySize: number, w: Walk, i: number, b: number): number {
  if (address < WINDOW_SIZE - 1) return WINDOW_BASE + address;
  if (address < memorySize) {
    w.fail(i, `.buffers[${b}]`, `at ${address}, past the first ${WINDOW_SIZE - 1} bytes of the module's memory that view-mode validation reaches; use mode: 'copy', or validate: 'none'`, ENOSYS);
  }
  return WINDOW_BASE + WINDOW_SIZE - 1;
}
