// The one module that touches the Emscripten module object: loading the wasm
// core, its memory, and its exports. Every C call that can fail goes through
// check(), the single funnel from errno codes to ArrowCDeviceError.

import createAcdCore from './generated/core.js';
import { ArrowCDeviceError } from './errors.js';
import { wasm32 } from './generated/layout.js';
import { StructReader } from './structs.js';

/** The C core's exports (csrc/bindings.cpp). Pointers are wasm32 addresses. */
interface CoreExports {
  lastError(): string;
  bytesAllocated(): number;
  memorySize(): number;
  alloc(size: number): number;
  free(ptr: number): void;
  schemaInit(schema: number, format: string, hasName: boolean, name: string, hasMetadata: boolean,
    metadata: Uint8Array | string, flags: number, nChildren: number, withDictionary: boolean): number;
  arrayInit(array: number, length: number, nullCount: number, offset: number, nBuffers: number,
    nChildren: number, withDictionary: boolean): number;
  arrayAllocateBuffer(array: number, i: number, size: number): number;
  deviceArrayInitDevice(deviceArray: number, deviceType: number, deviceId: number): void;
  schemaMove(src: number, dst: number): void;
  arrayMove(src: number, dst: number): void;
  deviceArrayMove(src: number, dst: number): void;
  schemaRelease(schema: number): void;
  arrayRelease(array: number): void;
  schemaValidate(schema: number): number;
  arrayValidate(schema: number, array: number, level: number): number;
  formatCheck(format: string): number;
}

interface EmscriptenModule extends CoreExports {
  asm: { memory: WebAssembly.Memory; __indirect_function_table: WebAssembly.Table };
}

export interface LoadOptions {
  /** The wasm binary, when the caller wants to supply it (it is embedded by default). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** A loaded instance of the C core: its own memory, allocator and exports. */
export class Core {
  private u8: Uint8Array;
  private dv: DataView;
  /** Reads and writes ABI structs in this core's memory (wasm32 layout). */
  readonly structs: StructReader;

  private constructor(private readonly m: EmscriptenModule) {
    this.u8 = new Uint8Array(m.asm.memory.buffer);
    this.dv = new DataView(m.asm.memory.buffer);
    this.structs = new StructReader(() => this.view, wasm32);
  }

  static async load(options: LoadOptions = {}): Promise<Core> {
    const m = (await createAcdCore(options.wasmBinary ? { wasmBinary: options.wasmBinary } : {})) as EmscriptenModule;
    return new Core(m);
  }

  get memory(): WebAssembly.Memory {
    return this.m.asm.memory;
  }

  /** The memory's bytes; a new view after the memory grew (old views detach). */
  get bytes(): Uint8Array {
    if (this.u8.buffer !== this.m.asm.memory.buffer) this.refresh();
    return this.u8;
  }

  get view(): DataView {
    if (this.dv.buffer !== this.m.asm.memory.buffer) this.refresh();
    return this.dv;
  }

  private refresh(): void {
    this.u8 = new Uint8Array(this.m.asm.memory.buffer);
    this.dv = new DataView(this.m.asm.memory.buffer);
  }

  /** Live bytes allocated by the core (counted by its allocator). */
  bytesAllocated(): number {
    return this.m.bytesAllocated();
  }

  /** Throws the core's last error when code is not 0. */
  check(code: number, context?: string): void {
    if (code === 0) return;
    const message = this.m.lastError();
    throw new ArrowCDeviceError(context ? `${context}: ${message}` : message, code);
  }

  /** Allocates size zeroed bytes (counted); throws when out of memory. */
  alloc(size: number): number {
    const ptr = this.m.alloc(size);
    if (ptr === 0) throw new ArrowCDeviceError(`out of wasm memory allocating ${size} bytes`, 48);
    return ptr;
  }

  free(ptr: number): void {
    this.m.free(ptr);
  }

  /** Whether fn is a callable entry of the core's function table taking one argument. */
  isCallback(fn: number, arity = 1): boolean {
    const table = this.m.asm.__indirect_function_table;
    if (!Number.isInteger(fn) || fn <= 0 || fn >= table.length) return false;
    const f = table.get(fn) as ((...args: unknown[]) => unknown) | null;
    return typeof f === 'function' && f.length === arity;
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
    if (ptr === 0) this.check(48);
    return ptr;
  }

  deviceArrayInitDevice(deviceArray: number, deviceType: number, deviceId: number): void {
    this.m.deviceArrayInitDevice(deviceArray, deviceType, deviceId);
  }

  schemaMove(src: number, dst: number): void { this.m.schemaMove(src, dst); }
  arrayMove(src: number, dst: number): void { this.m.arrayMove(src, dst); }
  deviceArrayMove(src: number, dst: number): void { this.m.deviceArrayMove(src, dst); }
  schemaRelease(schema: number): void { this.m.schemaRelease(schema); }
  arrayRelease(array: number): void { this.m.arrayRelease(array); }

  schemaValidate(schema: number): void {
    this.check(this.m.schemaValidate(schema));
  }

  arrayValidate(schema: number, array: number, level: number): void {
    this.check(this.m.arrayValidate(schema, array, level));
  }

  /** Parses a format string in C; throws its error (which quotes the string). */
  formatCheck(format: string): void {
    this.check(this.m.formatCheck(format));
  }
}
