// Address spaces: what a pointer means. A struct address, a buffer address or
// a function pointer is only a number; the space says which bytes it indexes
// (a growing WebAssembly.Memory or a fixed image), in which layout the
// structs there are laid out (wasm32 or LP64), how a function pointer is
// called (a WebAssembly.Table, or not at all) and how memory is allocated
// there (an allocator, or none). Every struct read and write, address check,
// string decode and release call goes through one; the core's own memory is
// the first instance (ts/abi/core.ts), a fixed image the second.

import { ArrowCDeviceError, EINVAL, ENOSYS } from './errors.js';
import type { Layout, StructName } from './layout-types.js';
import { checkOptions, optionKeys } from './option-keys.js';
import { StructReader } from './structs.js';

/** How memory is allocated and freed in a space. */
export interface Allocator {
  /** size zeroed bytes; throws ArrowCDeviceError when out of memory. */
  alloc(size: number): number;
  free(ptr: number): void;
}

/** How a function pointer of a space is called. */
export interface FunctionTable {
  /**
   * Emscripten's signature of the function at index ('vi', 'iii', 'vij',
   * ...), '?' for a function whose signature only a call can check (another
   * module's), or null when there is none.
   */
  signatureOf(index: number): string | null;
  /**
   * Calls the function at index with args after checking that it exists and
   * has `signature`: a function pointer of another kind is an error, never a
   * call (a wasm call_indirect would trap).
   */
  call(index: number, signature: string, args: readonly (number | bigint)[], what: string): unknown;
}

/** The structs whose first-class release callback a space can call. */
export type ReleasableStruct = 'ArrowSchema' | 'ArrowArray' | 'ArrowDeviceArray' | 'ArrowArrayStream' | 'ArrowDeviceArrayStream';

export interface AddressSpace {
  /** For messages: 'core', 'image (LP64)', ... */
  readonly name: string;
  readonly layout: Layout;
  /** The bytes, address 0 first (a new view after the memory grew). */
  readonly bytes: Uint8Array;
  readonly view: DataView;
  /** ABI structs in this space, read and written through the layout tables, bounds-checked. */
  readonly structs: StructReader;
  /** null: function pointers here cannot be called (an image). */
  readonly table: FunctionTable | null;
  /** null: nothing can be allocated here (an image). */
  readonly allocator: Allocator | null;
  /**
   * Calls the release callback of the struct at ptr unless it is released
   * already; returns 0 or an errno code (a callback that cannot be called is
   * EINVAL and is not called). Throws ENOSYS in a space without a table.
   */
  release(struct: ReleasableStruct, ptr: number): number;
}

/**
 * Releases through a FunctionTable: the callback is read from the struct,
 * checked (signature 'vi': void(struct*)) and called; the spec makes the
 * callee mark the struct released. One that cannot be called as that is
 * not: the struct is marked released (what it holds leaks) and the result
 * is EINVAL. An ArrowDeviceArray is released through its ArrowArray.
 */
export function releaseThrough(space: AddressSpace, struct: ReleasableStruct, ptr: number): number {
  const s = space.structs;
  const at = struct === 'ArrowDeviceArray' ? ptr + s.offsetOf('ArrowDeviceArray', 'array') : ptr;
  const kind: StructName = struct === 'ArrowDeviceArray' ? 'ArrowArray' : struct;
  const release = s.ptr(kind, at, 'release');
  if (release === 0) return 0;
  if (space.table === null) {
    throw new ArrowCDeviceError(`${kind}.release: ${space.name} has no function table, its callbacks cannot be called`, ENOSYS);
  }
  const signature = space.table.signatureOf(release);
  if (signature === 'vi' || signature === '?') {
    try {
      space.table.call(release, 'vi', [at], `${kind}.release`);
      return 0;
    } catch (e) {
      // Refused before anything ran (another signature): as a release of the wrong kind below.
      if (!(e instanceof ArrowCDeviceError && e.errno === EINVAL)) throw e;
    }
  }
  s.setPtr(kind, at, 'release', 0);
  return EINVAL;
}

/** Options of a space over a WebAssembly.Memory. */
export interface MemorySpaceOptions {
  name: string;
  memory: WebAssembly.Memory;
  layout: Layout;
  table?: FunctionTable | null;
  allocator?: Allocator | null;
  /** How structs are released here; by default through `table` (releaseThrough). */
  release?: (struct: ReleasableStruct, ptr: number) => number;
  /** The WebAssembly.Table behind `table`, handed to others with the structs (docs/protocol.md). */
  wasmTable?: WebAssembly.Table | null;
}

export const MEMORY_SPACE_OPTION_KEYS = optionKeys<MemorySpaceOptions>()(['name', 'memory', 'layout', 'table', 'allocator', 'release', 'wasmTable']);

/** A space over a wasm instance's linear memory, which may grow (views are renewed then). */
export class MemorySpace implements AddressSpace {
  readonly name: string;
  readonly layout: Layout;
  readonly memory: WebAssembly.Memory;
  readonly table: FunctionTable | null;
  readonly allocator: Allocator | null;
  readonly structs: StructReader;
  /** The WebAssembly.Table its function pointers index (null when not given). */
  readonly wasmTable: WebAssembly.Table | null;
  /** Whether the memory is shared (a SharedArrayBuffer): other agents may write it at any time. */
  readonly shared: boolean;
  #u8: Uint8Array;
  #dv: DataView;
  readonly #release: ((struct: ReleasableStruct, ptr: number) => number) | undefined;

  constructor(options: MemorySpaceOptions) {
    checkOptions('MemorySpace', options, MEMORY_SPACE_OPTION_KEYS);
    this.name = options.name;
    this.layout = options.layout;
    this.memory = options.memory;
    this.table = options.table ?? null;
    this.allocator = options.allocator ?? null;
    this.wasmTable = options.wasmTable ?? null;
    this.#release = options.release;
    this.shared = typeof SharedArrayBuffer !== 'undefined' && this.memory.buffer instanceof SharedArrayBuffer;
    this.#u8 = new Uint8Array(this.memory.buffer);
    this.#dv = new DataView(this.memory.buffer);
    this.structs = new StructReader(() => this.view, this.layout);
  }

  /**
   * Growth detaches the old buffer, so a view of length 0 means "grown" (a
   * memory never is empty): cheaper than reading memory.buffer on every access.
   * A shared memory's old buffer is never detached: its length is compared.
   */
  get bytes(): Uint8Array {
    if (this.#u8.length === 0 || (this.shared && this.memory.buffer.byteLength !== this.#u8.length)) this.refresh();
    return this.#u8;
  }

  get view(): DataView {
    if (this.#u8.length === 0 || (this.shared && this.memory.buffer.byteLength !== this.#u8.length)) this.refresh();
    return this.#dv;
  }


  private refresh(): void {
    this.#u8 = new Uint8Array(this.memory.buffer);
    this.#dv = new DataView(this.memory.buffer);
  }

  release(struct: ReleasableStruct, ptr: number): number {
    return this.#release !== undefined ? this.#release(struct, ptr) : releaseThrough(this, struct, ptr);
  }
}

/**
 * A fixed byte image (a fixture, a dump): address i is byte i of the image.
 * Nothing can be called or allocated in it; its structs can be read (and
 * written) in either layout.
 */
export class ImageSpace implements AddressSpace {
  readonly table = null;
  readonly allocator = null;
  readonly structs: StructReader;
  readonly bytes: Uint8Array;
  readonly view: DataView;

  /** The image is copied: later changes to `bytes` do not show through. */
  constructor(readonly name: string, bytes: Uint8Array, readonly layout: Layout) {
    this.bytes = bytes.slice();
    this.view = new DataView(this.bytes.buffer);
    this.structs = new StructReader(() => this.view, layout);
  }

  release(struct: ReleasableStruct, ptr: number): number {
    return releaseThrough(this, struct, ptr);
  }
}
