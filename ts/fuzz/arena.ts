// The fuzzer's producer: a copy of an exported tree (every ArrowSchema and
// ArrowArray node, child and buffer pointer arrays, strings, metadata and,
// for CPU data, the buffers) in one block the fuzzer owns. Its release
// callbacks are the fuzzer's: they only count the call and mark the struct
// released, never following pointers, so a corrupted tree cannot make the
// producer's release free the wrong memory. Each run mutates the copy and
// restore() puts the snapshot back: the library's export is made once.

import type { Core } from '../abi/core.js';
import { readField } from '../model/schema.js';
import { readRaw, type RawArray } from '../model/raw.js';
import type { StructName } from '../abi/layout-types.js';

/** One struct of the copy: where it is and its path in the tree. */
export interface ArenaNode {
  readonly struct: StructName;
  readonly addr: number;
  readonly path: string;
}

/** A byte range of the copy other than a struct: pointer arrays, buffers, strings, metadata. */
export interface ArenaRegion {
  readonly kind: 'pointers' | 'buffer' | 'string' | 'metadata';
  readonly addr: number;
  readonly size: number;
  readonly path: string;
  /** Buffers: the width of the integers they hold (offsets, sizes, indices), else 1. */
  readonly width: 1 | 2 | 4 | 8;
}

/** The release callbacks and tags shared by every arena (ReleaseBook in runtime.ts). */
export interface ReleaseHooks {
  readonly schemaRelease: number;
  readonly arrayRelease: number;
  /** A fresh tag for a struct handed out (put in private_data). */
  tag(what: string): number;
}

interface Piece { off: number; bytes: Uint8Array }
interface Fixup { at: number; target: number }

export class Arena {
  readonly nodes: ArenaNode[] = [];
  readonly regions: ArenaRegion[] = [];
  /** The tags of every struct of the copy. */
  readonly tags = new Set<number>();
  readonly base: number;
  readonly size: number;
  /** The root ArrowSchema, and the root ArrowArray or ArrowDeviceArray. */
  readonly schemaRoot: number;
  readonly arrayRoot: number;
  /** The tags in the roots' private_data (release calls are counted by them). */
  readonly schemaTag: number;
  readonly arrayTag: number;
  /** ArrowDeviceArray roots: their device_type (1 otherwise). */
  readonly deviceType: number;
  private readonly snapshot: Uint8Array;

  /**
   * Copies the tree of (schema, array); `device` says the array is an
   * ArrowDeviceArray. Buffers are copied when they are host memory and kept
   * pointing at the export's otherwise (device memory: the export must live
   * as long as the arena).
   */
  constructor(private readonly core: Core, hooks: ReleaseHooks, schema: number, array: number, device: boolean, readonly label: string) {
    const s = core.structs;
    const pieces: Piece[] = [];
    const fixups: Fixup[] = [];
    const plan: { node?: ArenaNode; region?: ArenaRegion; rel: number }[] = [];
    let end = 0;
    const reserve = (size: number, align: number): number => {
      end = Math.ceil(end / align) * align;
      const at = end;
      end += Math.max(size, 1);
      return at;
    };
    const copy = (src: number, size: number, align: number): number => {
      const off = reserve(size, align);
      pieces.push({ off, bytes: core.bytes.slice(src, src + size) });
      return off;
    };
    const field = (struct: StructName, name: string) => s.offsetOf(struct, name);
    const ptrSize = s.layout.pointerSize;
    const hostBuffers = !device || s.i32('ArrowDeviceArray', array, 'device_type') === 1;

    const cstringSize = (addr: number) => core.bytes.indexOf(0, addr) - addr + 1;
    const metadataSize = (addr: number) => {
      const v = core.view;
      let at = addr + 4;
      const n = v.getInt32(addr, true);
      for (let i = 0; i < 2 * n; i++) at += 4 + v.getInt32(at, true);
      return at - addr;
    };

    const copySchema = (src: number, path: string, into?: number): number => {
      const off = into ?? copy(src, s.size('ArrowSchema'), 8);
      plan.push({ node: { struct: 'ArrowSchema', addr: 0, path }, rel: off });
      for (const name of ['format', 'name'] as const) {
        const p = s.ptr('ArrowSchema', src, name);
        if (p === 0) continue;
        const size = cstringSize(p);
        const at = copy(p, size, 1);
        plan.push({ region: { kind: 'string', addr: 0, size, path: `${path}.${name}`, width: 1 }, rel: at });
        fixups.push({ at: off + field('ArrowSchema', name), target: at });
      }
      const m = s.ptr('ArrowSchema', src, 'metadata');
      if (m !== 0) {
        const size = metadataSize(m);
        const at = copy(m, size, 4);
        plan.push({ region: { kind: 'metadata', addr: 0, size, path: `${path}.metadata`, width: 4 }, rel: at });
        fixups.push({ at: off + field('ArrowSchema', 'metadata'), target: at });
      }
      const n = s.i64('ArrowSchema', src, 'n_children');
      const children = s.ptr('ArrowSchema', src, 'children');
      if (n > 0) {
        const at = reserve(n * ptrSize, ptrSize);
        plan.push({ region: { kind: 'pointers', addr: 0, size: n * ptrSize, path: `${path}.children`, width: ptrSize }, rel: at });
        fixups.push({ at: off + field('ArrowSchema', 'children'), target: at });
        for (let i = 0; i < n; i++) fixups.push({ at: at + i * ptrSize, target: copySchema(s.ptrAt(children + i * ptrSize), `${path}.children[${i}]`) });
      }
      const d = s.ptr('ArrowSchema', src, 'dictionary');
      if (d !== 0) fixups.push({ at: off + field('ArrowSchema', 'dictionary'), target: copySchema(d, `${path}.dictionary`) });
      pieces.push({ off: off + field('ArrowSchema', 'release'), bytes: u32(hooks.schemaRelease) });
      pieces.push({ off: off + field('ArrowSchema', 'private_data'), bytes: u32(tagOf(`${label} ${path}`)) });
      return off;
    };

    const copyArray = (src: number, raw: RawArray | null, path: string, into?: number): number => {
      const off = into ?? copy(src, s.size('ArrowArray'), 8);
      plan.push({ node: { struct: 'ArrowArray', addr: 0, path }, rel: off });
      const nb = s.i64('ArrowArray', src, 'n_buffers');
      const buffers = s.ptr('ArrowArray', src, 'buffers');
      if (nb > 0) {
        const at = reserve(nb * ptrSize, ptrSize);
        plan.push({ region: { kind: 'pointers', addr: 0, size: nb * ptrSize, path: `${path}.buffers`, width: ptrSize }, rel: at });
        fixups.push({ at: off + field('ArrowArray', 'buffers'), target: at });
        for (let i = 0; i < nb; i++) {
          const p = s.ptrAt(buffers + i * ptrSize);
          if (p === 0) continue;
          if (!hostBuffers || raw === null) {
            pieces.push({ off: at + i * ptrSize, bytes: u32(p) }); // device memory: kept where it is
            continue;
          }
          const size = raw.buffers[i]?.byteLength ?? 0;
          const b = copy(p, size, 8);
          plan.push({ region: { kind: 'buffer', addr: 0, size, path: `${path}.buffers[${i}]`, width: widthOf(raw, i) }, rel: b });
          fixups.push({ at: at + i * ptrSize, target: b });
        }
      }
      const n = s.i64('ArrowArray', src, 'n_children');
      const children = s.ptr('ArrowArray', src, 'children');
      if (n > 0) {
        const at = reserve(n * ptrSize, ptrSize);
        plan.push({ region: { kind: 'pointers', addr: 0, size: n * ptrSize, path: `${path}.children`, width: ptrSize }, rel: at });
        fixups.push({ at: off + field('ArrowArray', 'children'), target: at });
        for (let i = 0; i < n; i++) {
          fixups.push({ at: at + i * ptrSize, target: copyArray(s.ptrAt(children + i * ptrSize), raw?.children[i] ?? null, `${path}.children[${i}]`) });
        }
      }
      const d = s.ptr('ArrowArray', src, 'dictionary');
      if (d !== 0) fixups.push({ at: off + field('ArrowArray', 'dictionary'), target: copyArray(d, raw?.dictionary ?? null, `${path}.dictionary`) });
      pieces.push({ off: off + field('ArrowArray', 'release'), bytes: u32(hooks.arrayRelease) });
      pieces.push({ off: off + field('ArrowArray', 'private_data'), bytes: u32(tagOf(`${label} ${path}`)) });
      return off;
    };

    const tagOf = (what: string) => {
      const t = hooks.tag(what);
      this.tags.add(t);
      return t;
    };
    const schemaOff = copySchema(schema, 'schema');
    const arrayAt = device ? array + s.offsetOf('ArrowDeviceArray', 'array') : array;
    const raw = hostBuffers ? readRaw(core, arrayAt, readField(s, schema).type, 'view') : null;
    let arrayOff: number;
    if (device) {
      arrayOff = copy(array, s.size('ArrowDeviceArray'), 8);
      plan.push({ node: { struct: 'ArrowDeviceArray', addr: 0, path: 'device_array' }, rel: arrayOff });
      copyArray(arrayAt, raw, 'array', arrayOff + s.offsetOf('ArrowDeviceArray', 'array'));
    } else {
      arrayOff = copyArray(array, raw, 'array');
    }

    this.size = end;
    this.base = core.alloc(end);
    const bytes = core.bytes;
    for (const p of pieces) bytes.set(p.bytes, this.base + p.off);
    for (const f of fixups) core.view.setUint32(this.base + f.at, this.base + f.target, true);
    for (const p of plan) {
      if (p.node) this.nodes.push({ ...p.node, addr: this.base + p.rel });
      else this.regions.push({ ...p.region!, addr: this.base + p.rel });
    }
    this.schemaRoot = this.base + schemaOff;
    this.arrayRoot = this.base + arrayOff;
    this.schemaTag = s.ptr('ArrowSchema', this.schemaRoot, 'private_data');
    const arrayStruct = device ? this.arrayRoot + s.offsetOf('ArrowDeviceArray', 'array') : this.arrayRoot;
    this.arrayTag = s.ptr('ArrowArray', arrayStruct, 'private_data');
    this.deviceType = device ? s.i32('ArrowDeviceArray', this.arrayRoot, 'device_type') : 1;
    this.snapshot = core.bytes.slice(this.base, this.base + end);
  }

  /** Puts the unmutated copy back. */
  restore(): void {
    this.core.bytes.set(this.snapshot, this.base);
  }

  free(): void {
    this.core.free(this.base);
  }
}

function u32(v: number): Uint8Array {
  return new Uint8Array(new Uint32Array([v >>> 0]).buffer);
}

/** The integer width of buffer i of a raw node (offsets, view sizes, union ids), for word mutations. */
function widthOf(raw: RawArray, i: number): 1 | 2 | 4 | 8 {
  const k = raw.type.kind;
  if (k === 'large_utf8' || k === 'large_binary' || k === 'large_list' || k === 'large_list_view') return i === 0 ? 1 : 8;
  if ((k === 'utf8_view' || k === 'binary_view') && i === raw.buffers.length - 1) return 8;
  if (k === 'union') return i === 0 ? 1 : 4;
  if (k === 'int' || k === 'dictionary') return i === 0 ? 1 : 4;
  return i === 0 ? 1 : 4;
}
