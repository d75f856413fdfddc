// Another module's ArrowSchema tree copied into the core's memory in one
// pass, for the C core, which cannot address another memory: its structs,
// strings and metadata byte for byte, all in one block whose releases are
// csrc/model/tree_block.c's (or in the core's scratch area, for a schema
// used by one import only). Every read of the other memory is
// bounds-checked first; the tree is walked twice (foreign-walk.ts): to check
// every node and count the bytes, then to write the copy. The core keeps the
// last copy in its scratch area that was validated (lastCopyOf): an import
// whose foreign tree holds the same bytes (a producer's batches of one
// schema) compares instead of copying and checking again.

import type { Core } from '../abi/core.js';
import type { StructReader } from '../abi/structs.js';
import { metadataBytesAt } from '../model/metadata.js';
import type { Field } from '../model/types.js';
import { align4, align8, SCHEMA_COPY_KIND, TREE_HEADER, Walk, words, wordsOfBytes } from './foreign-walk.js';
import type { ForeignSource } from './options.js';

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
  // The scratch area is written below: the copy it held is gone.
  if (scratch !== null) lastCopies.delete(core);
  const w = new Walk('schema', ptr);
  // The byte lengths of the strings, and the metadata, found in the first walk.
  const strings: number[] = [];
  const metadata = new Map<number, Uint8Array>();
  const bytes = from.space.bytes;
  let u32 = wordsOfBytes(bytes);
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
    const at = node >>> 2;
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
        for (let c = 0; c < n; c++) w.add(u32[(children >>> 2) + c]!, i, c);
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
  const outWords = wordsOfBytes(out);
  // The other memory may be this one (a module seen through its own memory): views again after the allocations.
  const src = from.space.bytes;
  u32 = wordsOfBytes(src);
  view = s.view;
  outWords[block >>> 2] = SCHEMA_COPY_KIND;
  outWords[(block >>> 2) + 1] = nodes;
  outWords[(block >>> 2) + 2] = total;
  outWords[(block >>> 2) + 3] = 0;
  const structAt = (i: number) => (i === 0 ? root : block + TREE_HEADER + (i - 1) * size);
  let pointer = (block + pointersAt) >>> 2;
  let meta = block + metadataAt;
  let text = block + textAt;
  let next = 1;
  for (let i = 0; i < nodes; i++) {
    const node = w.ptrs[i]!;
    const at = structAt(i) >>> 2;
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
  return (node & 3) === 0 ? u32[(node >>> 2) + f]! : view.getUint32(node + 4 * f, true);
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
  // Formats and names are short: scanned here, which costs less than a call of indexOf.
  const near = Math.min(bytes.length, address + 64);
  for (let k = address; k < near; k++) if (bytes[k] === 0) return k - address;
  const end = bytes.indexOf(0, near);
  if (end < 0) w.fail(i, suffix, `string at ${address} is not NUL-terminated`);
  return end - address;
}

/** A copy in the core's scratch area that was validated, and its field (what lastCopyOf finds). */
export interface LastCopy {
  /** The root struct, at the start of the scratch area. */
  readonly root: number;
  /** The bytes of the scratch area it takes. */
  readonly taken: number;
  /** The field read from it (frozen: the schema cache's). */
  readonly field: Field;
}

const lastCopies = new WeakMap<Core, LastCopy>();

/**
 * Keeps `copy` (in the scratch area, without metadata, validated) as the
 * core's last copy, whose field an import of the same bytes takes
 * (lastCopyOf). Only a frozen field is kept: imports share it.
 */
export function rememberCopy(core: Core, copy: SchemaCopy, field: Field): void {
  if (copy.taken > 0 && !copy.metadata && Object.isFrozen(field)) lastCopies.set(core, { root: copy.root, taken: copy.taken, field });
}

/** The bytes at the start of the scratch area the last copy holds (0: none); a shadow goes after them. */
export function scratchHeld(core: Core): number {
  return lastCopies.get(core)?.taken ?? 0;
}

/** Lets the scratch area's start be written over. */
export function forgetCopy(core: Core): void {
  lastCopies.delete(core);
}

/**
 * The core's last copy when the foreign tree at `ptr` holds the same bytes
 * (formats, names, flags, counts, no metadata, the same shape) and passes
 * the checks copySchemaTree makes of every node, else null: then the tree
 * is copied, which finds the fault and names it. Reads the other memory
 * only within it; writes nothing.
 */
export function lastCopyOf(core: Core, from: ForeignSource, ptr: number): LastCopy | null {
  const last = lastCopies.get(core);
  if (last === undefined) return null;
  const s = from.space.structs;
  const o = words(s).schema;
  const size = o.size;
  const src = from.space.bytes;
  const limit = src.length;
  const u32 = wordsOfBytes(src);
  const out = core.bytes;
  const outWords = wordsOfBytes(out);
  // The copy's node i, breadth first as written: the root, then the block's structs in a row.
  const block = last.root + align8(size);
  const nodes = outWords[(block >>> 2) + 1]!;
  const w = new Walk('schema', ptr);
  for (let i = 0; i < w.ptrs.length; i++) {
    const node = w.ptrs[i]!;
    if (i >= nodes || !(node > 0 && node + size <= limit) || (node & 3) !== 0) return null;
    try {
      w.visit(i);
    } catch {
      return null;
    }
    const at = node >>> 2;
    const to = (i === 0 ? last.root : block + TREE_HEADER + (i - 1) * size) >>> 2;
    if (u32[at + o.release] === 0 || u32[at + o.metadata] !== 0) return null;
    if (!sameString(src, u32[at + o.format]!, out, outWords[to + o.format]!)) return null;
    const name = u32[at + o.name]!;
    const copied = outWords[to + o.name]!;
    if ((name === 0) !== (copied === 0) || (name !== 0 && !sameString(src, name, out, copied))) return null;
    if (u32[at + o.flags] !== outWords[to + o.flags] || u32[at + o.flags + 1] !== outWords[to + o.flags + 1]) return null;
    const n = outWords[to + o.nChildren]!;
    if (u32[at + o.nChildren] !== n || u32[at + o.nChildren + 1] !== 0) return null;
    if (n > 0) {
      const children = u32[at + o.children]!;
      if (!(children > 0 && children + 4 * n <= limit) || (children & 3) !== 0) return null;
      for (let c = 0; c < n; c++) w.add(u32[(children >>> 2) + c]!, i, c);
    }
    const dictionary = u32[at + o.dictionary]!;
    if ((dictionary === 0) !== (outWords[to + o.dictionary] === 0)) return null;
    if (dictionary !== 0) w.add(dictionary, i, -1);
  }
  // Node for node the same counts and dictionaries: the same shape, all of it compared.
  return last;
}

/** Whether the NUL-terminated string at `at` of src, within it, holds the bytes of the one at `copied` of out. */
function sameString(src: Uint8Array, at: number, out: Uint8Array, copied: number): boolean {
  if (at === 0) return false;
  for (let k = 0; ; k++) {
    if (at + k >= src.length) return false;
    const c = out[copied + k]!;
    if (src[at + k] !== c) return false;
    if (c === 0) return true;
  }
}
