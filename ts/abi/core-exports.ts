// The exports of csrc/abi, csrc/model and csrc/validate bindings.cpp (the
// allocator, moves, releases, producing and validating structs), which
// core.ts calls on the module, and their names, which attach.ts checks a
// linked module for.

/** The C core's exports (csrc/abi, model and validate bindings.cpp). Pointers are wasm32 addresses. */
export interface CoreExports {
  lastError(): string;
  /** Where the last failure is in a struct tree ("root.children[1].buffers[2]"), '' when nowhere. */
  lastErrorPath(): string;
  bytesAllocated(): number;
  memorySize(): number;
  alloc(size: number): number;
  free(ptr: number): void;
  schemaInit(schema: number, format: string, hasName: boolean, name: string, hasMetadata: boolean,
    metadata: Uint8Array | string, flags: number, nChildren: number, withDictionary: boolean): number;
  arrayInit(array: number, length: number, nullCount: number, offset: number, nBuffers: number,
    nChildren: number, withDictionary: boolean): number;
  arrayAllocateBuffer(array: number, i: number, size: number): number;
  flatInit(words: number, nWords: number, strings: number, nStrings: number, schema: number, array: number): number;
  flatExport(words: number, nWords: number, strings: number, nStrings: number, arraySize: number): number;
  flatScratch(): number;
  flatScratchBytes(): number;
  deviceArrayInitDevice(deviceArray: number, deviceType: number, deviceId: number): void;
  schemaMove(src: number, dst: number): void;
  arrayMove(src: number, dst: number): void;
  deviceArrayMove(src: number, dst: number): void;
  schemaRelease(schema: number): number;
  arrayRelease(array: number): number;
  schemaValidate(schema: number): number;
  arrayValidate(schema: number, array: number, level: number, schemaValid: boolean): number;
  /**
   * arrayValidate (of a valid schema) with the first `mapped` bytes of another memory in the foreign window
   * (Module.acdForeignRead reads them), and the first `preloaded` entries of the preload table.
   */
  arrayValidateForeign(schema: number, array: number, level: number, origin: number, mapped: number, preloaded: number): number;
  /** An area allocated once for the shadows of arrayValidateForeign, and its size. */
  shadowScratch(): number;
  shadowScratchBytes(): number;
  /** The foreign window's preload table (csrc/abi/window.c: ACD_FOREIGN_PRELOADS entries of 24 bytes). */
  foreignPreloads(): number;
  /** Validates, allocates and moves in one call: the library's own struct, or minus the error code (lastError says why; the source is untouched). */
  schemaImport(src: number): number;
  arrayImport(schema: number, src: number, level: number, schemaValid: boolean): number;
  /** Both at once: ACD_OK (the structs' addresses in importOut()) or the error code. */
  batchImport(schema: number, array: number, level: number): number;
  /** The key of a schema tree written to out (0: the key buffer, at the address in importOut()'s fifth double, keyCapacity() bytes) when it fits in capacity bytes; its size, or -1. */
  schemaKey(schema: number, out: number, capacity: number): number;
  /** Validates the schema unless its key is known (remembered when valid): 0 or the error code; its key and key id left in ImportOut. */
  schemaCheck(schema: number): number;
  /** The static area the imports and schemaKey leave their other results in (csrc/validate/bindings.cpp, ImportOut). */
  importOut(): number;
  keyCapacity(): number;
  /** The function table indices of the releases of struct trees laid out in one block (csrc/model/tree_block.c). */
  schemaTreeRelease(): number;
  shadowArrayRelease(): number;
  formatCheck(format: string): number;
  foreignMap(origin: number, size: number): void;
}

export const CORE_EXPORTS: readonly (keyof CoreExports)[] = [
  'lastError', 'bytesAllocated', 'memorySize', 'alloc', 'free', 'schemaInit', 'arrayInit', 'arrayAllocateBuffer', 'flatInit',
  'flatExport', 'flatScratch', 'flatScratchBytes',
  'deviceArrayInitDevice', 'schemaMove', 'arrayMove', 'deviceArrayMove', 'schemaRelease', 'arrayRelease',
  'schemaValidate', 'arrayValidate', 'formatCheck', 'foreignMap', 'lastErrorPath', 'schemaImport', 'arrayImport', 'batchImport', 'schemaKey', 'schemaCheck', 'importOut', 'keyCapacity',
  'schemaTreeRelease', 'shadowArrayRelease', 'arrayValidateForeign', 'shadowScratch', 'shadowScratchBytes', 'foreignPreloads',
];
