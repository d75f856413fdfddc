// The one module that touches the Emscripten module object: loading the wasm
// core (or attaching to a module that linked it, checked by attach.ts), its
// memory, and its exports. Every C call that can fail goes through
// check(), the single funnel from errno codes to ArrowCDeviceError.
// Longer than 400 lines: a wrapper per export of the core, which no other
// module may touch.

import createAcdCore from './generated/core.js';
import type { CoreExports } from './core-exports.js';
import { DEVICE_EXPORTS, type DeviceExports } from './device-exports.js';
import { STREAM_EXPORTS, type StreamExports } from './stream-exports.js';
import { ArrowCDeviceError, EINVAL, ENOMEM, type ErrorDetails, type ErrorLevel } from './errors.js';
import { wasm32 } from './generated/layout.js';
import { MemorySpace, type FunctionTable, type ReleasableStruct } from './address-space.js';
import type { StructReader } from './structs.js';
import { TABLE_SIGNATURES } from './generated/wasm-table.js';
import { parseTableSignatures } from './wasm-table.js';
import { ATTACH_OPTION_KEYS, checkLinkedModule, type AttachOptions } from './attach.js';
import { checkOptions, optionKeys } from './option-keys.js';
import { slotScanOf, type SlotScan, type SlotScanExports } from './slot-scan.js';

interface EmscriptenModule extends CoreExports {
  asm: SlotScanExports & {
    memory: WebAssembly.Memory;
    __indirect_function_table: WebAssembly.Table;
    /** batchImport and arrayImport as plain wasm exports (csrc/validate/bindings.cpp); a linked module may lack them. */
    acd_batch_import?: (schema: number, array: number, level: number) => number;
    acd_array_import?: (schema: number, src: number, level: number, schemaValid: number) => number;
    acd_array_validate_foreign?: (schema: number, array: number, level: number, origin: number, mapped: number, preloaded: number) => number;
    /** alloc, free and the releases as plain wasm exports (csrc/abi/bindings.cpp); a linked module may lack them. */
    acd_alloc?: (size: number) => number;
    acd_free?: (ptr: number) => void;
    acd_schema_release?: (schema: number) => number;
    acd_array_release?: (array: number) => number;
    /** flatExport as a plain wasm export (csrc/model/bindings.cpp); a linked module may lack it. */
    acd_flat_export?: (words: number, nWords: number, strings: number, nStrings: number, arraySize: number) => number;
  };
  /** Asked by csrc/abi/callback.c before C calls a function pointer read from a struct. */
  acdCallbackValid?: (fn: number, signature: number) => number;
  /** Asked by csrc/abi/window.c for bytes of the memory mapped into the foreign window. */
  acdForeignRead?: (address: number, dst: number, n: number) => number;
}

/**
 * The wasm signatures that csrc/abi/callback.c asks about (enum AcdSignature),
 * in Emscripten's notation: pointers are i32, int64_t is i64 (WASM_BIGINT).
 */
const SIGNATURE_CODES: Readonly<Record<string, number>> = { vi: 1, iii: 2, ii: 3, vij: 4, iiii: 5, viiii: 6 };
const SIGNATURE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SIGNATURE_CODES).map(([name, code]) => [code, name]));

function signatureCodes(slots: readonly string[]): Uint8Array {
  const codes = new Uint8Array(Math.max(slots.length, 1));
  for (let i = 1; i < slots.length; i++) codes[i] = SIGNATURE_CODES[slots[i]] ?? 0;
  return codes;
}

/** The names of the C validator's levels (enum AcdValidationLevel), for errors. */
const VALIDATION_LEVELS: readonly ErrorLevel[] = ['none', 'minimal', 'default', 'full'];
/**
 * What the imports and schemaKey leave in the core's static area
 * (csrc/validate/bindings.cpp, ImportOut): six doubles, among them the
 * address of the key and the id it is remembered under.
 */
const OUT_KEY_SIZE = 0;
const OUT_SCHEMA = 1;
const OUT_ARRAY = 2;
const OUT_FAILED = 3;
const OUT_KEY = 4;
const OUT_KEY_ID = 5;
const OUT_WORDS = 6;

/** Options of `load`. */
export interface LoadOptions {
  /** The wasm binary, when the caller wants to supply it (it is embedded by default). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

export const LOAD_OPTION_KEYS = optionKeys<LoadOptions>()(['wasmBinary']);

/**
 * Whatever holds a loaded core (an ArrowCDevice does): the stream, device and
 * round-trip functions take one, so that they need nothing else of the facade.
 */
export interface CoreRef {
  /** The loaded core. */
  readonly core: Core;
}

/** The serial number of the last Core made (Core.serial). */
let serials = 0;

/** A loaded instance of the C core: its own memory, allocator and exports. */
export class Core {
  /**
   * The core's own memory as an address space (wasm32 layout): its
   * allocator, its function table (signatures checked before a call) and
   * its releases (the C core's checked ones).
   */
  readonly space: MemorySpace;

  /**
   * The AcdSignature code of each function table slot (0: none, or not a
   * callback signature): the initial slots from the wasm binary, then the
   * slots addFunction fills. One array lookup per check.
   */
  #signatures: Uint8Array;
  #out: number | undefined;
  #outWords: Float64Array | undefined;
  #keyCapacity = 0;

  /** For messages: 'the core' (loaded) or the linked module's name (attached). */
  readonly name: string;

  /**
   * A number no other Core of this process has: for caches that remember
   * something of a core without holding it (ts/exchange/schema-cache.ts).
   */
  readonly serial = ++serials;

  /**
   * The slot scans of ts/validate/raw-shape.ts, in wasm (csrc/validate/slots.c;
   * slots outside this core's memory are copied in a part at a time); null
   * when the module lacks their exports (a linked module may): the scans then
   * run in JavaScript.
   */
  readonly slotScan: SlotScan | null;

  private constructor(private readonly m: EmscriptenModule, slots: readonly string[], name = 'the core') {
    this.name = name;
    this.#signatures = signatureCodes(slots);
    const signatures = () => this.#signatures;
    m.acdCallbackValid = (fn, signature) => {
      const codes = signatures();
      return fn > 0 && fn < codes.length && codes[fn] === signature ? 1 : 0;
    };
    const table: FunctionTable = {
      signatureOf: (index) => {
        const code = Number.isSafeInteger(index) && index > 0 && index < this.#signatures.length ? this.#signatures[index] : 0;
        return code === 0 ? null : SIGNATURE_NAMES[code];
      },
      call: (index, signature, args, what) => {
        if (table.signatureOf(index) !== signature) {
          throw new ArrowCDeviceError(`${what}: function pointer ${index} is not a function of signature '${signature}' in ${name}'s table`, EINVAL);
        }
        const fn = m.asm.__indirect_function_table.get(index) as (...a: (number | bigint)[]) => unknown;
        return this.unwinding(() => fn(...args));
      },
    };
    this.space = new MemorySpace({
      name: `${name}'s memory`,
      memory: m.asm.memory,
      layout: wasm32,
      table,
      allocator: { alloc: (size) => this.alloc(size), free: (ptr) => this.free(ptr) },
      release: (struct, ptr) => this.release(struct, ptr),
      wasmTable: m.asm.__indirect_function_table,
    });
    // The areas the core allocates once for imports (a schema key, the keys of
    // validated schemas, the foreign shadows), taken now: at the first import
    // they would shift every later allocation, so that two cores making the
    // same calls would no longer put their structs at the same addresses.
    this.slotScan = slotScanOf(m.asm.memory, m.asm);
    this.outWords();
    void this.shadowScratch;
  }

  static async load(options: LoadOptions = {}): Promise<Core> {
    // { memory } was once taken for a way to read another module: the hint says what does that.
    checkOptions('load', options, LOAD_OPTION_KEYS,
      "to read or write another module's memory, use acd.foreign({ memory, table, malloc, free }) with { from } / { into }, or link the core into it (ArrowCDevice.attach)");
    // The embedded binary's table was parsed at build time; a supplied one
    // is parsed here, with the same parser.
    let slots = TABLE_SIGNATURES.split(',');
    if (options.wasmBinary) {
      try {
        slots = parseTableSignatures(options.wasmBinary instanceof Uint8Array ? options.wasmBinary : new Uint8Array(options.wasmBinary));
      } catch (e) {
        throw new ArrowCDeviceError(`wasmBinary: its function table could not be read: ${(e as Error).message}`, EINVAL);
      }
    }
    const m = (await createAcdCore(options.wasmBinary ? { wasmBinary: options.wasmBinary } : {})) as EmscriptenModule;
    return new Core(m, slots);
  }

  static #attached = new WeakMap<object, Core>();

  /**
   * Wraps an instantiated Emscripten module that linked the core as a static
   * library (linked mode: one memory, the module's own). Attaching the same
   * module again returns the same Core.
   */
  static attach(module: object, options: AttachOptions = {}): Core {
    checkOptions('attach', options, ATTACH_OPTION_KEYS);
    const known = typeof module === 'object' && module !== null ? Core.#attached.get(module) : undefined;
    if (known !== undefined) return known;
    const linked = checkLinkedModule(module, options);
    const core = new Core(linked.module as unknown as EmscriptenModule, linked.slots, linked.name);
    Core.#attached.set(module, core);
    return core;
  }

  get memory(): WebAssembly.Memory {
    return this.m.asm.memory;
  }

  /** The core's function table (a callback's index is a slot of it). */
  get table(): WebAssembly.Table {
    return this.m.asm.__indirect_function_table;
  }

  /** The memory's bytes (the space's; a new view after the memory grew). */
  get bytes(): Uint8Array {
    return this.space.bytes;
  }

  get view(): DataView {
    return this.space.view;
  }

  /** Reads and writes ABI structs in this core's memory (wasm32 layout). */
  get structs(): StructReader {
    return this.space.structs;
  }

  /** The C core's checked release of each releasable struct (see schemaRelease). */
  private release(struct: ReleasableStruct, ptr: number): number {
    switch (struct) {
      case 'ArrowSchema': return this.schemaRelease(ptr);
      case 'ArrowArray': return this.arrayRelease(ptr);
      case 'ArrowDeviceArray': return this.arrayRelease(ptr + this.structs.offsetOf('ArrowDeviceArray', 'array'));
      case 'ArrowArrayStream': return this.stream.arrayStreamRelease(ptr);
      case 'ArrowDeviceArrayStream': return this.stream.deviceArrayStreamRelease(ptr);
    }
  }

  /** Live bytes allocated by the core (counted by its allocator). */
  bytesAllocated(): number {
    return this.m.bytesAllocated();
  }

  /** Throws the core's last error when code is not 0 (with the struct path the core reports). */
  check(code: number, context?: string, details: ErrorDetails = {}): void {
    if (code !== 0) throw this.error(code, this.m.lastError(), context, { ...details, path: this.m.lastErrorPath() });
  }

  /** The one funnel from a C error code and message to an ArrowCDeviceError. */
  private error(code: number, message: string, context: string | undefined, details: ErrorDetails): ArrowCDeviceError {
    return new ArrowCDeviceError(context ? `${context}: ${message}` : message, code, details);
  }

  /** The named functions of the module, in an object that holds only them (never the module). */
  private exportsNamed<T>(names: readonly string[]): T {
    const m = this.m as unknown as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const f = m[name];
      if (typeof f !== 'function') throw new Error(`the wasm core has no export ${name}: rebuild it (./build.sh)`);
      out[name] = f;
    }
    return Object.freeze(out) as unknown as T;
  }

  /** Allocates size zeroed bytes (counted); throws when out of memory. */
  alloc(size: number): number {
    // The plain export when the module has it (a pointer crosses as a signed i32: unsigned again).
    const raw = this.m.asm.acd_alloc;
    const ptr = raw !== undefined ? raw(size) >>> 0 : this.m.alloc(size);
    if (ptr === 0) throw new ArrowCDeviceError(`out of wasm memory allocating ${size} bytes`, ENOMEM);
    return ptr;
  }

  free(ptr: number): void {
    const raw = this.m.asm.acd_free;
    if (raw !== undefined) raw(ptr);
    else this.m.free(ptr);
  }

  schemaInit(schema: number, format: string, name: string | null, metadata: Uint8Array | null,
    flags: number, nChildren: number, withDictionary: boolean): void {
    this.check(this.m.schemaInit(schema, format, name !== null, name ?? '', metadata !== null,
      metadata ?? '', flags, nChildren, withDictionary));
  }

  arrayInit(array: number, length: number, nullCount: number, offset: number, nBuffers: number,
    nChildren: number, withDictionary: boolean): void {
    this.check(this.m.arrayInit(array, length, nullCount, offset, nBuffers, nChildren, withDictionary));
  }

  /** Allocates buffer i of an array made by arrayInit; returns its address. */
  arrayAllocateBuffer(array: number, i: number, size: number): number {
    const ptr = this.m.arrayAllocateBuffer(array, i, size);
    if (ptr === 0) this.check(ENOMEM);
    return ptr;
  }

  /** Makes the trees at schema and array (0: none) from a flat descriptor (AcdFlatInit in csrc/model/model.h; ts/model/flat.ts). */
  flatInit(words: number, nWords: number, strings: number, nStrings: number, schema: number, array: number): void {
    this.check(this.m.flatInit(words, nWords, strings, nStrings, schema, array));
  }
  /** flatInit into a new ArrowSchema and a zeroed array struct of arraySize bytes, their addresses after the descriptor. */
  flatExport(words: number, nWords: number, strings: number, nStrings: number, arraySize: number): void {
    // The plain export when the module has it: no embind invoker on the one call of an export.
    const raw = this.m.asm.acd_flat_export;
    this.check(raw !== undefined ? raw(words, nWords, strings, nStrings, arraySize) : this.m.flatExport(words, nWords, strings, nStrings, arraySize));
  }
  #flatScratch: { ptr: number; bytes: number } | undefined;
  /** The core's static area for descriptors (csrc/model/bindings.cpp). */
  flatScratch(): { ptr: number; bytes: number } {
    return this.#flatScratch ??= { ptr: this.m.flatScratch(), bytes: this.m.flatScratchBytes() };
  }

  deviceArrayInitDevice(deviceArray: number, deviceType: number, deviceId: number): void {
    this.m.deviceArrayInitDevice(deviceArray, deviceType, deviceId);
  }

  schemaMove(src: number, dst: number): void { this.m.schemaMove(src, dst); }
  arrayMove(src: number, dst: number): void { this.m.arrayMove(src, dst); }
  deviceArrayMove(src: number, dst: number): void { this.m.deviceArrayMove(src, dst); }
  /**
   * Releases a struct (when not released yet). A release that is not a
   * callable function of the right kind is never called: the struct is
   * marked released, what it holds leaks, and the code (EINVAL, message in
   * lastErrorMessage()) says so. Cleanup paths may ignore it.
   */
  schemaRelease(schema: number): number {
    const raw = this.m.asm.acd_schema_release;
    return raw !== undefined ? raw(schema) : this.m.schemaRelease(schema);
  }
  arrayRelease(array: number): number {
    const raw = this.m.asm.acd_array_release;
    return raw !== undefined ? raw(array) : this.m.arrayRelease(array);
  }

  /** The core's last error message (of the last failed call). */
  lastErrorMessage(): string {
    return this.m.lastError();
  }

  schemaValidate(schema: number): void {
    this.check(this.m.schemaValidate(schema));
  }

  /**
   * schemaValidate, skipped when the schema's key is that of a schema
   * validated before (csrc/validate/schema_key.c); a valid one is remembered.
   * Its key is then `importedKey()`, and `importedKeyId()` the id it is
   * remembered under.
   */
  schemaCheck(schema: number): void {
    this.outWords();
    this.check(this.m.schemaCheck(schema));
  }

  /**
   * Validates an array against its schema at level; schemaValid says the
   * schema was validated already and cannot have changed since (one this
   * library owns), which saves walking it twice.
   */
  arrayValidate(schema: number, array: number, level: number, schemaValid = false): void {
    this.check(this.m.arrayValidate(schema, array, level, schemaValid), undefined, { level: VALIDATION_LEVELS[level] });
  }

  /**
   * Validates the ArrowSchema at src, allocates the library's own struct and
   * moves src into it, in one call; returns the new struct's address. On
   * failure src is untouched. The schema's key is then `importedKey()`.
   */
  schemaImport(src: number): number {
    const r = this.m.schemaImport(src);
    if (r < 0) this.check(-r);
    return r;
  }

  /** As schemaImport, for an array validated at level against schema (schemaValid: see arrayValidate). */
  arrayImport(schema: number, src: number, level: number, schemaValid: boolean): number {
    // The plain export when the module has it: no embind invoker on an import's call.
    const raw = this.m.asm.acd_array_import;
    const r = raw !== undefined ? raw(schema, src, level, schemaValid ? 1 : 0) : this.m.arrayImport(schema, src, level, schemaValid);
    if (r < 0) this.check(-r, undefined, { level: VALIDATION_LEVELS[level] });
    return r;
  }

  /**
   * schemaImport and arrayImport in one call: both structs validated (the
   * array at level), then both moved, or neither; returns the library's
   * schema and array. The schema's key is then `importedKey()`.
   */
  batchImport(schema: number, array: number, level: number): [number, number] {
    const raw = this.m.asm.acd_batch_import;
    const code = raw !== undefined ? raw(schema, array, level) : this.m.batchImport(schema, array, level);
    const out = this.outWords();
    if (code !== 0) this.check(code, undefined, out[OUT_FAILED] === 2 ? { level: VALIDATION_LEVELS[level] } : {});
    return [out[OUT_SCHEMA]!, out[OUT_ARRAY]!];
  }

  /**
   * The key of the schema the last schemaImport or batchImport took: a view
   * of core memory, valid until the next call; null when it was too long to
   * be written there.
   */
  importedKey(): Uint8Array | null {
    const out = this.outWords();
    const size = out[OUT_KEY_SIZE]!;
    return size >= 0 && size <= this.#keyCapacity ? new Uint8Array(this.memory.buffer, out[OUT_KEY]!, size) : null;
  }

  /**
   * The id under which the core remembers the key of the schema the last
   * schemaImport or batchImport took as validated (csrc/validate/schema_key.c),
   * or 0. An id is never reused within a core: the same id, the same key.
   */
  importedKeyId(): number {
    return this.outWords()[OUT_KEY_ID]!;
  }

  /** The doubles of the static area, over the current memory (a view kept until it grows). */
  private outWords(): Float64Array {
    // Growth detaches the old buffer (length 0): cheaper than reading memory.buffer on every
    // import. A shared memory's buffer is never detached, and its old one still shows the area.
    if (this.#outWords === undefined || this.#outWords.length === 0) {
      this.#out ??= this.m.importOut();
      this.#keyCapacity = this.m.keyCapacity();
      this.#outWords = new Float64Array(this.memory.buffer, this.#out, OUT_WORDS);
    }
    return this.#outWords!;
  }

  /**
   * The key of the schema tree at ptr (csrc/validate/schema_key.c): equal
   * keys, equal trees. A view of core memory, valid until the next call;
   * null when it is longer than maxSize bytes (then it is not copied out),
   * or when the tree cannot be walked (a validated one always can).
   */
  schemaKey(ptr: number, maxSize: number): Uint8Array | null {
    this.outWords();
    const size = this.m.schemaKey(ptr, 0, 0);
    if (size < 0) return null;
    if (size <= this.#keyCapacity) return new Uint8Array(this.memory.buffer, this.outWords()[OUT_KEY]!, size);
    if (size > maxSize) return null;
    const out = this.alloc(size);
    try {
      this.m.schemaKey(ptr, out, size);
      return new Uint8Array(this.memory.buffer, out, size).slice();
    } finally {
      this.free(out);
    }
  }

  /** The memory mapped into the foreign window during arrayValidateForeign, and views of both memories. */
  #window: { memory: WebAssembly.Memory; source: Uint8Array; target: Uint8Array } | null = null;
  #shadowScratch: { at: number; bytes: number } | undefined;

  /**
   * Validates the array at `array`, a shadow in this memory whose buffer
   * pointers are foreign-window addresses (ACD_FOREIGN_ADDRESS_BASE +
   * address − origin), against the valid schema at `schema`, with `size`
   * bytes of another module's memory from address `origin` mapped into the window
   * (csrc/abi/window.c): the validator's reads of window addresses copy
   * those bytes from `memory`, unless one of the first `preloaded` entries
   * of the preload table (`foreignPreloads`, written by the caller) holds
   * them. One call into the core.
   */
  arrayValidateForeign(memory: WebAssembly.Memory, origin: number, size: number, schema: number, array: number, level: number, preloaded = 0): void {
    // Installed once: it reads whichever memory is mapped.
    this.m.acdForeignRead ??= (address, dst, n) => {
      const w = this.#window;
      if (w === null) return 1;
      // Views again after a memory grew, which detaches the old ones.
      if (w.source.length === 0) w.source = new Uint8Array(w.memory.buffer);
      if (w.target.length === 0) w.target = this.bytes;
      const { source, target } = w;
      if (address + n > source.length || dst + n > target.length) return 1;
      if (n <= 64) {
        for (let i = 0; i < n; i++) target[dst + i] = source[address + i]!;
      } else {
        target.set(source.subarray(address, address + n), dst);
      }
      return 0;
    };
    this.#window = { memory, source: new Uint8Array(memory.buffer), target: this.bytes };
    try {
      const raw = this.m.asm.acd_array_validate_foreign;
      const code = raw !== undefined ? raw(schema, array, level, origin, size, preloaded)
        : this.m.arrayValidateForeign(schema, array, level, origin, size, preloaded);
      this.check(code, undefined, { level: VALIDATION_LEVELS[level] });
    } finally {
      this.#window = null;
    }
  }

  /** A static area of this memory for the shadows of arrayValidateForeign (not allocated: free to use between two calls). */
  get shadowScratch(): { at: number; bytes: number } {
    this.#shadowScratch ??= { at: this.m.shadowScratch(), bytes: this.m.shadowScratchBytes() };
    return this.#shadowScratch;
  }

  #foreignPreloads: number | undefined;

  /**
   * The address of the foreign window's preload table (ACD_FOREIGN_PRELOADS
   * entries of FOREIGN_PRELOAD_BYTES: the window offset as two words, the
   * size, a word unused, then up to 8 bytes), which arrayValidateForeign's
   * caller fills.
   */
  get foreignPreloads(): number {
    this.#foreignPreloads ??= this.m.foreignPreloads();
    return this.#foreignPreloads;
  }

  #treeReleases: { schema: number; shadowArray: number } | undefined;

  /**
   * The function table indices of the releases that struct trees laid out
   * whole in one block carry (csrc/model/tree_block.c): a schema tree's
   * nodes, and the validator's shadows of another module's arrays.
   */
  get treeReleases(): { schema: number; shadowArray: number } {
    this.#treeReleases ??= { schema: this.m.schemaTreeRelease(), shadowArray: this.m.shadowArrayRelease() };
    return this.#treeReleases;
  }

  /** Parses a format string in C; throws its error (which quotes the string). */
  formatCheck(format: string): void {
    this.check(this.m.formatCheck(format));
  }

  // ==== streams (issue 5): the function table and the stream exports ========
  // TypeScript callbacks enter the wasm function table with addFunction; every
  // slot taken here is counted so that tests can check none leaked. The stream
  // exports (csrc/stream/bindings.cpp) are handed out as an object that holds
  // only those functions, never the module.

  #tableSlots = 0;
  #streamExports: StreamExports | undefined;

  /**
   * Puts a JS function into the function table; returns its index (a C
   * function pointer). signature: Emscripten's ('iii', 'vij': 'j' is an
   * int64, passed as a BigInt). The caller frees it with removeFunction.
   */
  addFunction(fn: (...args: never[]) => unknown, signature: string): number {
    const index = (this.m as unknown as RuntimeFunctions).addFunction(fn, signature);
    this.#tableSlots++;
    // Recorded so that C may call it through a struct (csrc/abi/callback.c).
    if (index >= this.#signatures.length) {
      const grown = new Uint8Array(Math.max(index + 1, this.#signatures.length * 2));
      grown.set(this.#signatures);
      this.#signatures = grown;
    }
    this.#signatures[index] = SIGNATURE_CODES[signature] ?? 0;
    return index;
  }

  removeFunction(index: number): void {
    (this.m as unknown as RuntimeFunctions).removeFunction(index);
    if (index > 0 && index < this.#signatures.length) this.#signatures[index] = 0;
    this.#tableSlots--;
  }

  /**
   * Runs f, a wasm call; when it throws (a trap, or an exception thrown
   * through C frames), the wasm stack pointer, which the C frames never
   * restored, is put back before the exception goes on.
   */
  unwinding<T>(f: () => T): T {
    const m = this.m as unknown as RuntimeFunctions;
    const sp = m.stackSave();
    try {
      return f();
    } catch (e) {
      m.stackRestore(sp);
      throw e;
    }
  }

  /** Table slots taken with addFunction and not yet removed. */
  tableSlotsLive(): number {
    return this.#tableSlots;
  }

  /** The stream exports: trampolines, C producers and consumers, the async pump. */
  get stream(): StreamExports {
    this.#streamExports ??= this.exportsNamed<StreamExports>(STREAM_EXPORTS);
    return this.#streamExports;
  }

  /** Throws the stream exports' last error when code is not 0. */
  checkStream(code: number, context?: string): void {
    if (code !== 0) throw this.error(code, this.stream.streamLastError(), context, {});
  }

  // ==== devices (issue 4): the exports of csrc/device/bindings.cpp ===========
  // Declared in device-core.ts; handed out as an object that holds only those
  // functions, never the module.

  #deviceExports: DeviceExports | undefined;

  /** The simulated devices' exports: moves between devices, validation, accounting. */
  get device(): DeviceExports {
    this.#deviceExports ??= this.exportsNamed<DeviceExports>(DEVICE_EXPORTS);
    return this.#deviceExports;
  }

  /** Throws the device exports' last error when code is not 0. */
  checkDevice(code: number, context?: string): void {
    if (code !== 0) throw this.error(code, this.device.deviceLastError(), context, { path: this.device.deviceLastErrorPath() });
  }
}

interface RuntimeFunctions {
  addFunction(fn: (...args: never[]) => unknown, signature: string): number;
  removeFunction(index: number): void;
  stackSave(): number;
  stackRestore(sp: number): void;
}
