// Walking another module's struct trees breadth first, for the copies the
// C core checks in their place (foreign-schema.ts, foreign-shadow.ts): the
// nodes in the order met, each one's link to its parent (for the paths of
// messages, built only when one is thrown), the checks every node gets (not
// reached twice: a DAG or a cycle is refused; not too deep), and the field
// offsets of the two structs in 32-bit words. Breadth first, a node's
// children are numbered in a row, so a second walk that writes the copy
// finds where each node's children are with a counter instead of a table.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import type { StructReader } from '../abi/structs.js';

/** The deepest tree copied (the JS side's bound, as before; the C validator's own limit is deeper). */
const MAX_DEPTH = 256;
/** The most buffers or children a node may have (AcdArrayInit's and AcdSchemaInit's bound). */
const MAX_COUNT = (0x7fffffff / 256) | 0;
/** The foreign window on wasm32 (ACD_FOREIGN_ADDRESS_BASE and _SIZE of csrc/abi/abi.h). */
export const WINDOW_BASE = 0xc0000000;
export const WINDOW_SIZE = 0x40000000;
/** ACD_KIND_SCHEMA_COPY (csrc/abi/abi.h): the tag of a copied schema tree's block. */
export const SCHEMA_COPY_KIND = 0x53424b31;
/** The block's header (struct AcdSchemaTree): kind, live nodes, size, unused. */
export const TREE_HEADER = 16;

/** Field offsets in 32-bit words (wasm32: pointers are one word, int64 two, low first). */
export interface Words {
  size: number;
  format: number; name: number; metadata: number; flags: number; nChildren: number;
  children: number; dictionary: number; release: number; privateData: number;
  length: number; nullCount: number; offset: number; nBuffers: number; buffers: number;
}

const wordsOf = new WeakMap<StructReader['layout'], { schema: Words; array: Words }>();

export function words(s: StructReader): { schema: Words; array: Words } {
  let w = wordsOf.get(s.layout);
  if (w === undefined) {
    if (s.layout.pointerSize !== 4) throw new Error('foreign-walk: another module is wasm32');
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

/**
 * A set of non-zero 32-bit addresses, open addressing in a typed array: a
 * wide batch's walk adds a thousand of them per import, which a Set of
 * numbers made about a tenth of an import from another module (issue 14).
 */
class AddressSet {
  #slots: Int32Array;
  #size = 0;

  constructor(expected: number) {
    let n = 64;
    while (n < 2 * expected) n *= 2;
    this.#slots = new Int32Array(n);
  }

  /** Adds a (non-zero) address; false when it was there already. */
  add(address: number): boolean {
    const key = address | 0;
    let slots = this.#slots;
    let mask = slots.length - 1;
    let i = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
    for (;;) {
      const at = slots[i]!;
      if (at === 0) break;
      if (at === key) return false;
      i = (i + 1) & mask;
    }
    slots[i] = key;
    if (2 * ++this.#size > slots.length) {
      const old = slots;
      slots = this.#slots = new Int32Array(old.length * 2);
      mask = slots.length - 1;
      for (const k of old) {
        if (k === 0) continue;
        let j = Math.imul(k, 0x9e3779b1) >>> 0 & mask;
        while (slots[j] !== 0) j = (j + 1) & mask;
        slots[j] = k;
      }
    }
    return true;
  }
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
export class Walk {
  readonly ptrs: number[];
  readonly links: number[] = [-1];
  seen: AddressSet | null = null;
  #depth = 0;
  #levelEnd = 1;
  /** The highest address met so far: a node above it was not reached before (a producer laying a tree out in order, as this library does, needs no set). */
  #highest = 0;

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
    if (this.seen === null && ptr > this.#highest) {
      this.#highest = ptr;
      return;
    }
    // A few nodes (a batch of a few columns) are compared; a set is made for more.
    let reached = false;
    if (i < SMALL_TREE) {
      for (let k = 0; k < i; k++) reached ||= ptrs[k] === ptr;
    } else {
      if (this.seen === null) {
        this.seen = new AddressSet(ptrs.length);
        for (let k = 0; k < i; k++) this.seen.add(ptrs[k]!);
      }
      reached = !this.seen.add(ptr);
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

/**
 * The 32-bit words of a memory's whole bytes view (a space's `bytes`, or
 * the core's), kept for the last two views asked about: an import from
 * another module reads that memory's words and writes the core's, and a new
 * view over a large buffer costs about as much as a small node's shadow.
 */
export function wordsOfBytes(bytes: Uint8Array): Uint32Array {
  if (bytes === wordBytes0) return words0;
  if (bytes === wordBytes1) return words1;
  wordBytes1 = wordBytes0;
  words1 = words0;
  wordBytes0 = bytes;
  // Divided, not shifted: a memory of 2 GiB or more has a length that no 32-bit shift keeps.
  words0 = new Uint32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  return words0;
}

let wordBytes0: Uint8Array | null = null;
let words0: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
let wordBytes1: Uint8Array | null = null;
let words1: Uint32Array<ArrayBufferLike> = new Uint32Array(0);

export const align4 = (n: number) => (n + 3) & ~3;
export const align8 = (n: number) => (n + 7) & ~7;
