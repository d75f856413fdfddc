// Validating another module's ArrowArray tree in C, which cannot address
// another memory: a shadow of the tree is written into the core's memory in
// one pass (the same lengths, offsets and counts; the structs only), whose
// buffer pointers are foreign-window addresses (csrc/abi/window.c), and the
// C validator checks it with the other memory mapped into the window: its
// range checks compare with that memory's size and its reads of buffer
// content fetch that memory's bytes. Every read of the other memory is
// bounds-checked first; the tree is walked twice (foreign-walk.ts).
//
// The values the validator reads at 'default' (each offsets buffer's first
// and last entries) are read here too, as the shadow is written, and handed
// to the window with it (its preload table): on wasm each read through the
// window is a call from the core into JavaScript, and they were about a
// seventh of an import of a small batch (issue 14). The schema says which
// nodes have offsets; a node the array has where the schema has another
// (a malformed tree) only gets a useless entry, never a wrong one: every
// entry is a copy of the bytes at its address.

import type { Core } from '../abi/core.js';
import { ENOSYS } from '../abi/errors.js';
import type { StructReader } from '../abi/structs.js';
import { childFields, type DataType } from '../model/types.js';
import { forgetCopy, scratchHeld } from './foreign-schema.js';
import { WINDOW_BASE, WINDOW_SIZE, Walk, words, wordsOfBytes, type Words } from './foreign-walk.js';
import { LEVELS, type ForeignSource } from './options.js';

/** ACD_FOREIGN_PRELOADS and sizeof(struct AcdForeignPreload) (csrc/abi/abi.h). */
export const PRELOADS = 64;
export const PRELOAD_WORDS = 6;

/** The width of a node's offsets (buffers[1]) that the validator reads at 'default', by type; 0: none. */
function offsetWidth(type: DataType): number {
  switch (type.kind) {
    case 'utf8': case 'binary': case 'list': case 'map':
      return 4;
    case 'large_utf8': case 'large_binary': case 'large_list':
      return 8;
    default:
      return 0;
  }
}

/** By type: its nodes' offset widths in the order the walk meets them (a node, its children, its dictionary; breadth first). */
const widthsOf = new WeakMap<DataType, Int8Array>();

function offsetWidths(type: DataType): Int8Array {
  let widths = widthsOf.get(type);
  if (widths === undefined) {
    const types: DataType[] = [type];
    for (let i = 0; i < types.length; i++) {
      const t = types[i]!;
      for (const f of childFields(t)) types.push(f.type);
      if (t.kind === 'dictionary') types.push(t.valueType);
    }
    widths = Int8Array.from(types, offsetWidth);
    widthsOf.set(type, widths);
  }
  return widths;
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
export function validateThroughWindow(core: Core, from: ForeignSource, schema: number, type: DataType, ptr: number, level: number,
  taken = 0): void {
  const s = from.space.structs;
  const o = words(s).array;
  const size = o.size;
  const align = s.layout.structs.ArrowArray.align;
  const bytes = from.space.bytes;
  const memorySize = bytes.length;
  let u32 = wordsOfBytes(bytes);
  const w = new Walk('array', ptr);
  let pointerBytes = 0;
  for (let i = 0; i < w.ptrs.length; i++) {
    const node = w.ptrs[i]!;
    if (node === 0) w.fail(i, '', 'expected an array, found NULL');
    if ((node & (align - 1)) !== 0) w.fail(i, '', `expected a struct ArrowArray aligned to ${align} bytes, found ${node}`);
    if (node + size > memorySize) s.checkRange(node, size, () => w.path(i));
    w.visit(i);
    const at = node >>> 2;
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
      for (let c = 0; c < n; c++) w.add(u32[(children >>> 2) + c]!, i, c);
    }
    const dictionary = u32[at + o.dictionary]!;
    if (dictionary !== 0) w.add(dictionary, i, -1);
  }

  const nodes = w.ptrs.length;
  // In the core's scratch area when it fits (no allocation, no call), past
  // the `taken` bytes this import's schema copy holds there, and past the
  // last copy kept for the next imports when there is room.
  const scratch = core.shadowScratch;
  const bytesNeeded = nodes * size + pointerBytes;
  let start = Math.max(taken, scratchHeld(core));
  if (start + bytesNeeded > scratch.bytes && taken + bytesNeeded <= scratch.bytes) {
    forgetCopy(core);
    start = taken;
  }
  const inScratch = start + bytesNeeded <= scratch.bytes;
  const block = inScratch ? scratch.at + start : core.alloc(bytesNeeded);
  try {
    const release = core.treeReleases.shadowArray;
    // The other memory may be this one: a view again after the allocation.
    if (u32.length === 0) u32 = wordsOfBytes(from.space.bytes);
    const out = core.bytes;
    const outWords = wordsOfBytes(out);
    let pointer = (block + nodes * size) >>> 2;
    let next = 1;
    // The offsets the validator reads, in the window's preload table (none below 'default').
    const widths = level >= LEVELS.default ? offsetWidths(type) : EMPTY_WIDTHS;
    // The window holds WINDOW_SIZE - 1 bytes of the other memory: all of a smaller memory, from 0; else
    // from the array's lowest buffer (at a 64 KiB boundary, which keeps every alignment the validator checks).
    const origin = memorySize <= WINDOW_SIZE - 1 ? 0 : lowestBuffer(u32, w.ptrs, o, memorySize);
    const mapped = Math.min(memorySize - origin, WINDOW_SIZE - 1);
    const table = core.foreignPreloads >>> 2;
    let preloaded = 0;
    for (let i = 0; i < nodes; i++) {
      const at = w.ptrs[i]! >>> 2;
      const to = (block + i * size) >>> 2;
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
          const address = u32[(buffers >>> 2) + b]!;
          const offset = address - origin;
          outWords[pointer++] = address === 0 ? 0 : offset >= 0 && offset < WINDOW_SIZE - 1 ? WINDOW_BASE + offset
            : windowAddress(address, origin, memorySize, w, i, b);
        }
        const width = i < widths.length ? widths[i]! : 0;
        // offsets[offset] and offsets[offset + length], where both are below 2^31 and the entries aligned words in the mapped part.
        if (width !== 0 && nBuffers >= 2 && preloaded + 2 <= PRELOADS && u32[at + o.length + 1] === 0 && u32[at + o.offset + 1] === 0) {
          const length = u32[at + o.length]!;
          const first = u32[at + o.offset]!;
          const offsets = u32[(buffers >>> 2) + 1]!;
          const last = first + length;
          if (length > 0 && last < 0x80000000 && offsets !== 0 && (offsets & 3) === 0 && offsets >= origin
            && offsets - origin + (last + 1) * width <= mapped) {
            preload(outWords, table + preloaded++ * PRELOAD_WORDS, u32, offsets + first * width, origin, width);
            preload(outWords, table + preloaded++ * PRELOAD_WORDS, u32, offsets + last * width, origin, width);
          }
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
    core.arrayValidateForeign(from.space.memory, origin, mapped, schema, block, level, preloaded);
  } finally {
    if (!inScratch) core.free(block);
  }
}

const EMPTY_WIDTHS = new Int8Array(0);

/**
 * Writes the preload table's entry at word `entry` of the core's memory:
 * the `width` (4 or 8) bytes at `address` (a multiple of 4) of the other
 * memory, at its offset in the window mapped from `origin`.
 */
function preload(outWords: Uint32Array, entry: number, u32: Uint32Array, address: number, origin: number, width: number): void {
  outWords[entry] = address - origin;
  outWords[entry + 1] = 0;
  outWords[entry + 2] = width;
  outWords[entry + 3] = 0;
  outWords[entry + 4] = u32[address >>> 2]!;
  outWords[entry + 5] = width === 8 ? u32[(address >>> 2) + 1]! : 0;
}

/** Node i's C array of n pointers at `address` (not NULL), misaligned or outside the memory: the error naming it. */
function pointerArray(s: StructReader, address: number, n: number, w: Walk, i: number, suffix: string): void {
  if (address % 4 !== 0) w.fail(i, suffix, `expected ${n} pointers aligned to 4 bytes, found ${address}`);
  s.checkRange(address, n * 4, () => `${w.path(i)}${suffix}`);
}

/**
 * The window address standing for foreign address `address` (node i's
 * buffer b), outside the window mapped from `origin`. An address past the
 * memory (wild) stands for the window's last byte, which is never readable,
 * so a buffer of 0 bytes there is still accepted, as in the core's own
 * memory; a buffer in the memory but out of the window's reach from the
 * array's lowest buffer cannot be checked.
 */
function windowAddress(address: number, origin: number, memorySize: number, w: Walk, i: number, b: number): number {
  if (address < memorySize) {
    w.fail(i, `.buffers[${b}]`, `at ${address}, ${WINDOW_SIZE - 1} bytes or more past ${origin === 0 ? 'the start of the module\'s memory' : `the array's lowest buffer (from ${origin})`}, beyond what view-mode validation reaches in one array; use mode: 'copy', or validate: 'none'`, ENOSYS);
  }
  return WINDOW_BASE + WINDOW_SIZE - 1;
}

/**
 * Where the window starts for an array in a memory larger than it: the
 * lowest buffer address of the tree's nodes that lies in the memory, down to
 * a 64 KiB boundary (0 when none does). The nodes and their pointer arrays
 * were checked to be in the memory and aligned by the walk.
 */
function lowestBuffer(u32: Uint32Array, ptrs: readonly number[], o: Words, memorySize: number): number {
  let lowest = memorySize;
  for (const node of ptrs) {
    const at = node >>> 2;
    const buffers = u32[at + o.buffers]!;
    const n = u32[at + o.nBuffers]!;
    if (buffers === 0) continue;
    for (let b = 0; b < n; b++) {
      const address = u32[(buffers >>> 2) + b]!;
      if (address !== 0 && address < lowest) lowest = address;
    }
  }
  return lowest === memorySize ? 0 : lowest - (lowest % 0x10000);
}
