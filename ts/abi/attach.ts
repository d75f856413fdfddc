// Linked mode: checks an Emscripten module that linked the C core as a static
// library (dist/lib/libarrow_c_device.a) before Core.attach wraps it. Its
// bindings, runtime functions and limits are checked here, and its function
// table's signatures are read from its wasm binary: JS cannot ask a table
// slot its type (no type reflection in Node 20), and the C core asks for
// them before it calls a callback read from a struct (csrc/abi/callback.c).

import { CORE_EXPORTS } from './core-exports.js';
import { DEVICE_EXPORTS } from './device-exports.js';
import { ArrowCDeviceError, EINVAL } from './errors.js';
import { optionKeys } from './option-keys.js';
import { STREAM_EXPORTS } from './stream-exports.js';
import { parseWasm, type TableSignatures } from './wasm-table.js';

/** The Emscripten runtime functions the facade calls. */
const RUNTIME = ['addFunction', 'removeFunction', 'stackSave', 'stackRestore'];

/** The link command's flags the facade needs (README, "Linking the core into your own C/C++ module"). */
export const LINK_FLAGS = '-Wl,--whole-archive libarrow_c_device.a -Wl,--no-whole-archive --bind -sWASM_BIGINT ' +
  '-sALLOW_TABLE_GROWTH -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=2GB -sEXPORTED_RUNTIME_METHODS=addFunction,removeFunction';

/** 2 GiB in 64 KiB pages: the simulated devices' addresses are above it (csrc/abi/abi.h). */
const MAX_PAGES = 32768;

/** Options of `attach` (linked mode). */
export interface AttachOptions {
  /**
   * The module's wasm binary, when it was not passed to the module's factory
   * as `wasmBinary` (Module.wasmBinary is used then).
   */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** For messages; default 'the linked module'. */
  name?: string;
}

export const ATTACH_OPTION_KEYS = optionKeys<AttachOptions>()(['wasmBinary', 'name']);

/** An instantiated module, checked: its exports, memory, table and each slot's signature. */
export interface LinkedModule {
  module: Record<string, unknown>;
  slots: TableSignatures;
  name: string;
}

function fail(message: string): never {
  throw new ArrowCDeviceError(`attach: ${message}`, EINVAL);
}

function bytesOf(x: unknown): Uint8Array | null {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  return null;
}

/** Checks `module` (what an Emscripten factory's promise resolves to) and reads its binary. */
export function checkLinkedModule(module: unknown, options: AttachOptions = {}): LinkedModule {
  if (typeof module !== 'object' || module === null) fail(`expected an instantiated Emscripten module object, found ${module === null ? 'null' : typeof module}`);
  const m = module as Record<string, unknown>;
  const asm = m.asm as Record<string, unknown> | undefined;
  if (typeof asm !== 'object' || asm === null || !(asm.memory instanceof WebAssembly.Memory) || !(asm.__indirect_function_table instanceof WebAssembly.Table)) {
    fail('expected an instantiated Emscripten module object (what the factory\'s promise resolves to), with its wasm exports as module.asm ' +
      '(memory and __indirect_function_table); did you pass the factory, or a module not instantiated yet?');
  }
  const missing = [...CORE_EXPORTS, ...STREAM_EXPORTS, ...DEVICE_EXPORTS].filter((k) => typeof m[k] !== 'function');
  if (missing.length > 0) {
    const total = CORE_EXPORTS.length + STREAM_EXPORTS.length + DEVICE_EXPORTS.length;
    fail(`the module lacks ${missing.length === total ? 'all' : missing.length} of arrow-c-device's ${total} bindings (${missing.slice(0, 4).join(', ')}${missing.length > 4 ? ', ...' : ''}): ` +
      `link the library into it with every object and embind: emcc ... ${LINK_FLAGS}`);
  }
  const runtime = RUNTIME.filter((k) => typeof m[k] !== 'function');
  if (runtime.length > 0) fail(`the module does not export the runtime functions ${runtime.join(', ')}: link it with -sEXPORTED_RUNTIME_METHODS=addFunction,removeFunction`);
  if (!(m.HEAP64 instanceof BigInt64Array)) fail('the module was linked without -sWASM_BIGINT (64-bit integers cross as BigInt): link it with -sWASM_BIGINT');

  const binary = bytesOf(options.wasmBinary) ?? bytesOf(m.wasmBinary);
  if (binary === null) {
    fail("the module's wasm binary is needed to know the signature of each slot of its function table (C checks them before a call): " +
      'pass it to the module\'s factory (createModule({ wasmBinary })) or to attach(module, { wasmBinary })');
  }
  let facts;
  try {
    facts = parseWasm(binary);
  } catch (e) {
    fail(`wasmBinary: its function table could not be read: ${(e as Error).message}`);
  }
  // The binary must be this module's: the same exports, a table that holds its slots.
  const names = Object.keys(asm).sort();
  const declared = [...facts.exports].sort();
  if (names.length !== declared.length || names.some((n, i) => n !== declared[i])) fail('wasmBinary is not the binary of this module (their exports differ)');
  const table = asm.__indirect_function_table as WebAssembly.Table;
  if (facts.slots.length > table.length || facts.slots.some((s, i) => s !== '' && table.get(i) === null)) fail('wasmBinary is not the binary of this module (its function table differs)');
  if (facts.tableMaximum !== null) fail('the module\'s function table cannot grow (the facade puts its callbacks into it): link it with -sALLOW_TABLE_GROWTH');
  if (facts.memoryMaximum === null || facts.memoryMaximum === undefined || facts.memoryMaximum > MAX_PAGES) {
    fail(`the module's memory may grow beyond 2 GiB (maximum ${facts.memoryMaximum == null ? 'none' : `${facts.memoryMaximum} pages`}), where the simulated devices' addresses are: link it with -sMAXIMUM_MEMORY=2GB (or less)`);
  }
  return { module: m, slots: facts.slots, name: options.name ?? 'the linked module' };
}
