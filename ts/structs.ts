// Reading and writing ABI structs in memory through the generated layout
// tables: no struct offset is written by hand anywhere in ts/.

import { ArrowCDeviceError, EINVAL } from './errors.js';
import type { Layout, StructName } from './layout-types.js';

/** Reads the fields of ABI structs from a memory whose bytes may move (wasm growth). */
export class StructReader {
  constructor(private readonly dataView: () => DataView, readonly layout: Layout) {}

  get view(): DataView {
    return this.dataView();
  }

  /** Throws unless [address, address + size) lies inside the memory. */
  checkRange(address: number, size: number, what: string): void {
    const limit = this.view.byteLength;
    if (!Number.isSafeInteger(address) || address <= 0 || size < 0 || address + size > limit) {
      throw new ArrowCDeviceError(
        `${what}: address ${address} (+${size} bytes) is outside the memory of ${limit} bytes`, EINVAL);
    }
  }

  private at(struct: StructName, base: number, field: string): number {
    const f = this.layout.structs[struct].fields[field];
    if (f === undefined) throw new Error(`layout: ${struct} has no field ${field}`);
    return base + f.offset;
  }

  /** A pointer field (or a function pointer: a table index on wasm). */
  ptr(struct: StructName, base: number, field: string): number {
    return this.ptrAt(this.at(struct, base, field));
  }

  ptrAt(address: number): number {
    const v = this.view;
    return this.layout.pointerSize === 4
      ? v.getUint32(address, true)
      : Number(v.getBigUint64(address, true));
  }

  /** An int64 field as a number; throws if it is outside the safe integer range. */
  i64(struct: StructName, base: number, field: string): number {
    const value = this.view.getBigInt64(this.at(struct, base, field), true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new ArrowCDeviceError(`${struct}.${field}: ${value} is out of the supported range`, EINVAL);
    }
    return Number(value);
  }

  i64Big(struct: StructName, base: number, field: string): bigint {
    return this.view.getBigInt64(this.at(struct, base, field), true);
  }

  i32(struct: StructName, base: number, field: string): number {
    return this.view.getInt32(this.at(struct, base, field), true);
  }

  setI64(struct: StructName, base: number, field: string, value: number | bigint): void {
    this.view.setBigInt64(this.at(struct, base, field), BigInt(value), true);
  }

  setPtr(struct: StructName, base: number, field: string, value: number): void {
    const address = this.at(struct, base, field);
    if (this.layout.pointerSize === 4) this.view.setUint32(address, value, true);
    else this.view.setBigUint64(address, BigInt(value), true);
  }

  size(struct: StructName): number {
    return this.layout.structs[struct].size;
  }

  offsetOf(struct: StructName, field: string): number {
    return this.at(struct, 0, field);
  }

  /** A NUL-terminated UTF-8 string, bounded by the memory. */
  cString(address: number, what: string): string {
    const bytes = new Uint8Array(this.view.buffer);
    this.checkRange(address, 1, what);
    const end = bytes.indexOf(0, address);
    if (end < 0) throw new ArrowCDeviceError(`${what}: string at ${address} is not NUL-terminated`, EINVAL);
    return utf8.decode(bytes.subarray(address, end));
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
