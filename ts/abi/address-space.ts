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
  /**
   * Allocates `size` zeroed bytes.
   *
   * Ownership: the caller owns the block and must `free` it.
   * @throws `ArrowCDeviceError` (ENOMEM) when out of memory.
   * @param size - how many bytes.
   */
  alloc(size: number): number;
  /**
   * Frees a block `alloc` returned.
   *
   * Ownership: ends the caller's ownership of the block.
   * @param ptr - the block's address.
   */
  free(ptr: number): void;
}

/** How a function pointer of a space is called. */
export interface FunctionTable {
  /**
   * Emscripten's signature of the function at index ('vi', 'iii', 'vij',
   * ...), '?' for a function whose signature only a call can check (another
   * module's), or null when there is none.
   *
   * Ownership: reads; nothing to release.
   * @param index - the table index (the function pointer).
   */
  signatureOf(index: number): string | null;
  /**
   * Calls the function at index with args after checking that it exists and
   * has `signature`: a function pointer of another kind is an error, never a
   * call (a wasm call_indirect would trap).
   *
   * Ownership: whatever the called function's contract says; the check itself holds nothing.
   * @param index - the table index (the function pointer).
   * @param signature - Emscripten's signature (`vi`, `iii`, ...).
   * @param args - the arguments.
   * @param what - what is called, for messages.
   */
  call(index: number, signature: string, args: readonly (number | bigint)[], what: string): unknown;
}

/** The structs whose first-class release callback a space can call. */
export type ReleasableStruct = 'ArrowSchema' | 'ArrowArray' | 'ArrowDeviceArray' | 'ArrowArrayStream' | 'ArrowDeviceArrayStream';

/**
 * What a pointer means: the bytes it indexes, the struct layout there (wasm32 or LP64), how function pointers are called and how memory is allocated. The core's memory, another module's and a fixture image are each one; the readers (`readField`, `readRaw`) take a space.
 */
export interface AddressSpace {
  /** For messages: 'core', 'image (LP64)', ... */
  readonly name: string;
  /** The struct layout of this space (wasm32 or LP64). */
  readonly layout: Layout;
  /** The bytes, address 0 first (a new view after the memory grew). */
  readonly bytes: Uint8Array;
  /** A DataView over `bytes`. */
  readonly view: DataView;
  /** ABI structs in this space, read and written through the layout tables, bounds-checked. */
  readonly structs: StructReader;
  /** null: function pointers here cannot be called (an image). */
  readonly table: FunctionTable | null;
  /** null: nothing can be allocated here (an image). */
  readonly allocator: Allocator | null;
  /**
   * Calls the release callback of the struct at `ptr` unless it is released already; returns 0 or an errno code (a callback that cannot be called is EINVAL and is not called).
   *
   * Ownership: takes the caller's ownership of the struct: afterwards it is released (marked so, when its callback could not be called).
   * @throws `ArrowCDeviceError` (ENOSYS) in a space without a table.
   * @param struct - which struct it is.
   * @param ptr - the struct's address.
   */
  release(struct: ReleasableStruct, ptr: number): number;
}

/**
 * Releases through a FunctionTable: the callback is read from the struct,
 * checked (signature 'vi': void(struct*)) and called; the spec makes the
 * callee mark the struct released. One that cannot be called as that is
 * not: the struct is marked released (what it holds leaks) and the result
 * is EINVAL. An ArrowDeviceArray is released through its ArrowArray.
 *
 * Ownership: as `AddressSpace.release`: the struct is released afterwards.
 * @param space - the space the struct is in.
 * @param struct - which struct it is.
 * @param ptr - its address.
 * @returns 0, or EINVAL for a callback that could not be called.
 * @throws `ArrowCDeviceError` (ENOSYS) in a space without a table.
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
  /** For messages. */
  name: string;
  /** The memory. */
  memory: WebAssembly.Memory;
  /** The struct layout (wasm32 for a wasm module). */
  layout: Layout;
  /** How its function pointers are called; none: they cannot be. */
  table?: FunctionTable | null;
  /** Its allocator; none: nothing can be allocated there. */
  allocator?: Allocator | null;
  /** How structs are released here; by default through `table` (releaseThrough). */
  release?: (struct: ReleasableStruct, ptr: number) => number;
  /** The WebAssembly.Table behind `table`, handed to others with the structs (docs/protocol.md). */
  wasmTable?: WebAssembly.Table | null;
}

export const MEMORY_SPACE_OPTION_KEYS = optionKeys<MemorySpaceOptions>()(['name', 'memory', 'layout', 'table', 'allocator', 'release', 'wasmTable']);

/** A space over a wasm instance's linear memory, which may grow (views are renewed then). */
export class MemorySpace implements AddressSpace {
  /** For messages. */
  readonly name: string;
  /** The struct layout (wasm32). */
  readonly layout: Layout;
  /** The memory. */
  readonly memory: WebAssembly.Memory;
  /** How its function pointers are called (null: they cannot be). */
  readonly table: FunctionTable | null;
  /** Its allocator (null: nothing can be allocated there). */
  readonly allocator: Allocator | null;
  /** ABI structs in this memory, read and written through the layout tables, bounds-checked. */
  readonly structs: StructReader;
  /** The WebAssembly.Table its function pointers index (null when not given). */
  readonly wasmTable: WebAssembly.Table | null;
  /** Whether the memory is shared (a SharedArrayBuffer): other agents may write it at any time. */
  readonly shared: boolean;
  #u8: Uint8Array;
  #dv: DataView;
  readonly #release: ((struct: ReleasableStruct, ptr: number) => number) | undefined;

  /**
   * A space over `options.memory`.
   *
   * Ownership: borrows the memory; nothing to release.
   * @param options - the memory, its layout, table and allocator.
   */
  constructor(options: MemorySpaceOptions) {
    checkOptions('MemorySpace', options, MEMORY_SPACE_OPTION_KEYS);
    this.name = options.name;
    this.layout = options.layout;
    this.memory = options.memory;
    this.table = options.table ?? null;
    this.allocator = options.allocator ?? null;
    this.wasmTable = options.wasmTable ?? null;
    this.#release = options.release;
    this.shared = isShared(this.memory.buffer);
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

  /** A DataView over the memory (a new one after it grew). */
  get view(): DataView {
    if (this.#u8.length === 0 || (this.shared && this.memory.buffer.byteLength !== this.#u8.length)) this.refresh();
    return this.#dv;
  }


  private refresh(): void {
    this.#u8 = new Uint8Array(this.memory.buffer);
    this.#dv = new DataView(this.memory.buffer);
  }

  /**
   * Releases the struct at `ptr` (through `options.release`, or the table).
   *
   * Ownership: as `AddressSpace.release`.
   * @param struct - which struct it is.
   * @param ptr - its address.
   * @returns 0 or an errno.
   */
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
  /** For messages. */
  readonly name: string;
  /** The image's layout (wasm32 or LP64). */
  readonly layout: Layout;
  /** No table: function pointers in an image cannot be called. */
  readonly table = null;
  /** No allocator: nothing can be allocated in an image. */
  readonly allocator = null;
  /** ABI structs in the image, read and written through its layout, bounds-checked. */
  readonly structs: StructReader;
  /** The image's bytes (a copy). */
  readonly bytes: Uint8Array;
  /** A DataView over `bytes`. */
  readonly view: DataView;

  /**
   * The image is copied: later changes to `bytes` do not show through.
   *
   * Ownership: copies the bytes; nothing to release.
   * @param name - for messages.
   * @param bytes - the image.
   * @param layout - its pointer width's layout (`wasm32` or `lp64`).
   */
  constructor(name: string, bytes: Uint8Array, layout: Layout) {
    this.name = name;
    this.layout = layout;
    this.bytes = bytes.slice();
    this.view = new DataView(this.bytes.buffer);
    this.structs = new StructReader(() => this.view, layout);
  }

  /**
   * Releases the struct at `ptr`: 0 when its release is NULL already.
   *
   * Ownership: as `AddressSpace.release`.
   * @throws `ArrowCDeviceError` (ENOSYS) when its release is set: an image has no table to call it through.
   * @param struct - which struct it is.
   * @param ptr - the struct's address.
   */
  release(struct: ReleasableStruct, ptr: number): number {
    return releaseThrough(this, struct, ptr);
  }
}

/**
 * Whether a buffer is a SharedArrayBuffer (other agents may write it; its
 * slices are shared too), told by its tag: `instanceof` fails for a buffer
 * of another realm (a memory made in a vm context or another frame).
 */
export function isShared(buffer: ArrayBufferLike): boolean {
  return Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';
}
