// Validating another module's ArrowArray tree in C, which cannot address
// another memory: a shadow of the tree is written into the core's memory in
// one pass (the same lengths, offsets and counts; the structs only), whose
// buffer pointers are foreign-window addresses (csrc/abi/window.c), and the
// C validator checks it with the other memory mapped into the window: its
// range checks compare with that memory's size and its reads of buffer
// content fetch that memory's bytes. Every read of the other memory is
// bounds-checked first; the tree is walked twice (foreign-walk.ts).

import type { Core } from '../abi/core.js';
import { ENOSYS } from '../abi/errors.js';
import type { StructReader } from '../abi/structs.js';
import { forgetCopy, scratchHeld } from './foreign-schema.js';
import { WINDOW_BASE, WINDOW_SIZE, Walk, words } from './foreign-walk.js';
import type { ForeignSource } from './options.js';

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
