// This library's callbacks as real functions of another module's table, so
// that its own C, C++ or Rust code can call them through a struct (the
// release of a schema or an array exported into it). A JS function cannot
// enter a wasm table by itself: a small module built here at run time
// imports it and exports a wasm function of the exact type, and that one is
// put into the foreign table, which grows by one slot per callback.

import { ArrowCDeviceError, EINVAL } from '../abi/errors.js';
import { trampolineBinaryParts } from './trampoline.js';

/** A callback installed in a foreign table: its index there, freed with uninstall(). */
export interface InstalledCallback {
  readonly index: number;
  uninstall(): void;
}

/**
 * The binary of a module that imports env.f (of `signature`) and exports it
 * again as a wasm function named f.
 */
function wrapperBinary(signature: string): Uint8Array<ArrayBuffer> {
  const { type, uleb, name, section, vec } = trampolineBinaryParts;
  const body = [0x00];
  const params = signature.length - 1;
  for (let i = 0; i < params; i++) body.push(0x20, ...uleb(i));
  body.push(0x10, 0x00, 0x0b); // call the import (function 0), end
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([type(signature)])),
    ...section(2, vec([[...name('env'), ...name('f'), 0x00, 0x00]])),
    ...section(3, vec([uleb(0)])),
    ...section(7, vec([[...name('f'), 0x00, ...uleb(1)]])),
    ...section(10, vec([[...uleb(body.length), ...body]])),
  ]);
}

const wrappers = new Map<string, WebAssembly.Module>();

/**
 * Puts fn into table as a wasm function of `signature` (growing the table
 * by one slot, or reusing one this library freed); `owner` names the module
 * in errors.
 */
export function installCallback(table: WebAssembly.Table, free: number[], fn: (...args: never[]) => unknown,
  signature: string, owner: string): InstalledCallback {
  let module = wrappers.get(signature);
  if (module === undefined) {
    module = new WebAssembly.Module(wrapperBinary(signature));
    wrappers.set(signature, module);
  }
  const instance = new WebAssembly.Instance(module, { env: { f: fn } });
  const wasmFn = instance.exports.f as (...args: unknown[]) => unknown;
  let index = free.pop();
  if (index === undefined) {
    try {
      index = table.grow(1);
    } catch (e) {
      throw new ArrowCDeviceError(`${owner}: its function table cannot grow (${(e as Error).message}); ` +
        'callbacks cannot be installed in it: build it with a growable table (emcc -sALLOW_TABLE_GROWTH)', EINVAL);
    }
  }
  table.set(index, wasmFn);
  const at = index;
  return {
    index: at,
    uninstall: () => {
      table.set(at, null);
      free.push(at);
    },
  };
}
