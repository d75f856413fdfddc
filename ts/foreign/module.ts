// Another wasm module as an address space: its memory, its function table
// (calls checked by the engine through ts/foreign/trampoline.ts) and its
// allocator. Built from explicit parts or from a module's instance.exports,
// where the conventional names of Emscripten and wasm-bindgen are found.

import { MemorySpace, type Allocator, type FunctionTable } from '../abi/address-space.js';
import { ArrowCDeviceError, EINVAL, ENOMEM } from '../abi/errors.js';
import { wasm32 } from '../abi/generated/layout.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';
import { installCallback, type InstalledCallback } from './callbacks.js';
import { Trampolines, type Signature } from './trampoline.js';

/** The callback signatures of the spec's structs on wasm32 (pointers i32, int64 as i64). */
export const CALLBACK_SIGNATURES: readonly Signature[] = [
  'vi',    // release(struct*)
  'iii',   // get_schema / get_next (stream*, out*), on_schema, extract_data, ...
  'ii',    // get_last_error(stream*) -> const char*
  'iiii',  // on_next_task (handler*, task*, metadata*)
  'viiii', // on_error (handler*, code, message*, metadata*)
  'vij',   // request(producer*, int64 n)
];

/** The parts of another wasm module that `acd.foreign()` needs. */
export interface ForeignModuleOptions {
  /** For messages ('parquet-wasm', ...); default 'the foreign module'. */
  name?: string;
  /** Its memory, where its structs and buffers are. */
  memory: WebAssembly.Memory;
  /** Its function table: without one, its callbacks cannot be called (nor ours installed). */
  table?: WebAssembly.Table | null;
  /** Its allocator: without one, nothing can be exported into it. */
  malloc?: ((size: number) => number) | null;
  /** Its allocator's free (with `malloc`). */
  free?: ((ptr: number) => void) | null;
}

export const FOREIGN_MODULE_OPTION_KEYS = optionKeys<ForeignModuleOptions>()(['name', 'memory', 'table', 'malloc', 'free']);

/** An instance's exports, as WebAssembly.Instance.exports gives them. */
export type ModuleExports = Record<string, unknown>;

function isOptions(x: ForeignModuleOptions | ModuleExports): x is ForeignModuleOptions {
  return (x as ForeignModuleOptions).memory instanceof WebAssembly.Memory && !('__indirect_function_table' in x) && !('__wbindgen_malloc' in x);
}

/**
 * The parts of a module found in its exports: `memory`; the table `__indirect_function_table` (Emscripten) or the one exported table (wasm-bindgen); `malloc` and `free` (Emscripten) or `__wbindgen_malloc(size, align)` and `__wbindgen_free(ptr, size, align)` (wasm-bindgen).
 *
 * Ownership: borrows the exports; nothing is allocated.
 * @param exports - the module's `instance.exports`.
 * @param name - the module's name, for messages.
 * @returns the parts.
 * @throws `ArrowCDeviceError` (EINVAL) when there is not exactly one memory to choose.
 */
export function partsFromExports(exports: ModuleExports, name?: string): ForeignModuleOptions {
  const memories = Object.values(exports).filter((v): v is WebAssembly.Memory => v instanceof WebAssembly.Memory);
  const memory = exports.memory instanceof WebAssembly.Memory ? exports.memory : memories.length === 1 ? memories[0] : undefined;
  if (memory === undefined) {
    throw new ArrowCDeviceError(`foreign: the exports have ${memories.length === 0 ? 'no' : memories.length} WebAssembly.Memory; ` +
      "pass { memory, table, malloc, free } explicitly", EINVAL);
  }
  const tables = Object.values(exports).filter((v): v is WebAssembly.Table => v instanceof WebAssembly.Table);
  const table = exports.__indirect_function_table instanceof WebAssembly.Table ? exports.__indirect_function_table
    : tables.length === 1 ? tables[0] : null;
  const fn = (key: string) => (typeof exports[key] === 'function' ? exports[key] as (...a: number[]) => number : null);
  const bindgenMalloc = fn('__wbindgen_malloc');
  const bindgenFree = fn('__wbindgen_free');
  if (bindgenMalloc !== null && bindgenFree !== null) {
    // wasm-bindgen's free wants the size and alignment the block was allocated with.
    const sizes = new Map<number, number>();
    return {
      name, memory, table,
      malloc: (size) => { const p = bindgenMalloc(size, 8) >>> 0; if (p !== 0) sizes.set(p, size); return p; },
      free: (ptr) => { const size = sizes.get(ptr); if (size === undefined) return; sizes.delete(ptr); bindgenFree(ptr, size, 8); },
    };
  }
  return { name, memory, table, malloc: fn('malloc'), free: fn('free') as ((ptr: number) => void) | null };
}

/**
 * Another module's memory, table and allocator, as one address space: what `{ from }` and `{ into }` take.
 *
 * Ownership: it borrows the module (its memory and table stay the module's) and holds nothing of the core: nothing to release. What this library allocates in the module (exports into it) is freed by the release callbacks the module's code calls; `bytesAllocated()` counts what is still there.
 */
export class ForeignModule {
  /** The module's name, in error messages. */
  readonly name: string;
  /** Its memory as an address space (wasm32), with its table and allocator when given. */
  readonly space: MemorySpace;
  /** Its function table, or null when none was given. */
  readonly table: WebAssembly.Table | null;
  /** What this library allocated in the module and has not freed: address → size. */
  readonly #live = new Map<number, number>();
  /** Table slots this library filled and emptied again, for reuse. */
  readonly #freeSlots: number[] = [];

  /**
   * Usually made by `acd.foreign()`.
   *
   * Ownership: borrows the module; nothing to release.
   * @param from - the parts, or the module's `instance.exports`.
   * @param name - the module's name, for messages.
   * @throws `ArrowCDeviceError` (EINVAL) when the memory or the table is not a WebAssembly one.
   */
  constructor(from: ForeignModuleOptions | ModuleExports, name?: string) {
    // Options are a plain object; an instance's exports (a null prototype) may hold any names.
    if (isOptions(from) && Object.getPrototypeOf(from) === Object.prototype) {
      checkOptions('foreign', from, FOREIGN_MODULE_OPTION_KEYS, 'an instance\'s exports (instance.exports) are taken as they are');
    }
    const parts = isOptions(from) ? from : partsFromExports(from, name);
    if (!(parts.memory instanceof WebAssembly.Memory)) throw new ArrowCDeviceError('foreign: memory: expected a WebAssembly.Memory', EINVAL);
    if (parts.table != null && !(parts.table instanceof WebAssembly.Table)) throw new ArrowCDeviceError('foreign: table: expected a WebAssembly.Table', EINVAL);
    this.name = parts.name ?? name ?? 'the foreign module';
    this.table = parts.table ?? null;
    const owner = this.name;
    let functions: FunctionTable | null = null;
    if (this.table !== null) {
      const trampolines = new Trampolines(this.table, CALLBACK_SIGNATURES);
      const t = this.table;
      functions = {
        // Only the engine knows a slot's type: a filled slot is '?' until a call checks it.
        signatureOf: (index) => (Number.isInteger(index) && index > 0 && index < t.length && t.get(index) !== null ? '?' : null),
        call: (index, signature, args, what) => trampolines.call(index, signature, args, what, owner),
      };
    }
    let allocator: Allocator | null = null;
    const { malloc, free } = parts;
    if (malloc != null && free != null) {
      const live = this.#live;
      allocator = {
        alloc: (size) => {
          // A wasm export's i32 result is signed: an address at or above 2 GiB comes back negative.
          const p = malloc(size) >>> 0;
          if (p === 0) throw new ArrowCDeviceError(`${owner}: out of memory allocating ${size} bytes`, ENOMEM);
          // Through the space's view of the memory (made again only after the memory grew).
          this.space.bytes.fill(0, p, p + size);
          live.set(p, size);
          return p;
        },
        free: (ptr) => {
          live.delete(ptr);
          free(ptr);
        },
      };
    }
    this.space = new MemorySpace({ name: owner, memory: parts.memory, layout: wasm32, table: functions, allocator, wasmTable: this.table });
  }

  /**
   * Bytes this library allocated in the module (exports into it) and has not freed yet.
   *
   * Ownership: reads a counter; nothing to release.
   */
  bytesAllocated(): number {
    let sum = 0;
    for (const size of this.#live.values()) sum += size;
    return sum;
  }

  /**
   * Puts a JS function into the module's table as a wasm function of `signature`.
   *
   * Ownership: the slot stays filled until the returned callback's `uninstall()`, which the caller owns.
   * @param fn - the function.
   * @param signature - its wasm signature.
   * @returns the slot, with a way to empty it.
   * @throws `ArrowCDeviceError` (EINVAL) when the module has no table.
   */
  install(fn: (...args: never[]) => unknown, signature: Signature): InstalledCallback {
    if (this.table === null) throw new ArrowCDeviceError(`${this.name}: no function table was given, so no callback can be installed in it`, EINVAL);
    return installCallback(this.table, this.#freeSlots, fn, signature, this.name);
  }
}
