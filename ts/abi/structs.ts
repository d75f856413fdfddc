// Reading and writing ABI structs in memory through the generated layout
// tables: no struct offset is written by hand anywhere in ts/.

import { ArrowCDeviceError, EINVAL, layoutName } from './errors.js';
import type { Layout, StructName } from './layout-types.js';

/** Reads the fields of ABI structs from a memory whose bytes may move (wasm growth). */
export class StructReader {
  /** Field offsets by struct and field, flattened once (reads are on every import's hot path). */
  private readonly offsets: Record<string, Record<string, number>>;

  constructor(private readonly dataView: () => DataView, readonly layout: Layout) {
    this.offsets = Object.fromEntries(Object.entries(layout.structs).map(([name, struct]) =>
      [name, Object.fromEntries(Object.entries(struct.fields).map(([field, f]) => [field, f.offset]))]));
  }

  get view(): DataView {
    return this.dataView();
  }

  /** The same bytes as `view`, address 0 first. */
  get bytes(): Uint8Array {
    const v = this.dataView();
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }

  /**
   * Throws unless [address, address + size) lies inside the memory. `what`
   * is the struct path of the range (the error's path) unless isPath is false.
   */
  checkRange(address: number, size: number, what: string | (() => string), isPath = true): void {
    const limit = this.view.byteLength;
    if (!Number.isSafeInteger(address) || address <= 0 || size < 0 || address + size > limit) {
      // what may be a function: the name is built only for the error, not on every read.
      const name = typeof what === 'function' ? what() : what;
      throw new ArrowCDeviceError(`${name}: address ${address} (+${size} bytes) is outside the memory of ${limit} bytes`, EINVAL,
        { path: isPath ? name : undefined, layout: layoutName(this.layout) });
    }
  }

  /**
   * The address of a field, after checking that `size` bytes there lie in the
   * memory and the struct is not at NULL: even unvalidated structs
   * (validate: 'none') give the library's error, never a RangeError.
   */
  private at(struct: StructName, base: number, field: string, size = 8): number {
    const offset = this.offsets[struct][field];
    if (offset === undefined) throw new Error(`layout: ${struct} has no field ${field}`);
    const address = base + offset;
    if (!(base > 0 && address + size <= this.view.byteLength)) this.checkRange(base > 0 ? address : base, size, `${struct}.${field}`, false);
    return address;
  }

  /** A pointer field (or a function pointer: a table index on wasm). */
  ptr(struct: StructName, base: number, field: string): number {
    return this.ptrAt(this.at(struct, base, field, this.layout.pointerSize));
  }

  /** The pointer stored at address (bounds-checked like every read here). */
  ptrAt(address: number): number {
    const v = this.view;
    const size = this.layout.pointerSize;
    if (!(address >= 0 && address + size <= v.byteLength)) this.checkRange(address, size, 'pointer', false);
    return size === 4
      ? v.getUint32(address, true)
      : Number(v.getBigUint64(address, true));
  }

  /** An int64 field as a number; throws if it is outside the safe integer range. */
  i64(struct: StructName, base: number, field: string): number {
    // Two 32-bit halves: no BigInt on the hot path. The value is safe when the
    // high word is within ±2^21 (|value| < 2^53).
    const address = this.at(struct, base, field, 8);
    const v = this.view;
    const high = v.getInt32(address + Int32Array.BYTES_PER_ELEMENT, true);
    if (high >= 0x200000 || high < -0x200000) {
      throw new ArrowCDeviceError(`${struct}.${field}: ${v.getBigInt64(address, true)} is out of the supported range`, EINVAL, { layout: layoutName(this.layout) });
    }
    return high * 0x100000000 + v.getUint32(address, true);
  }

  i64Big(struct: StructName, base: number, field: string): bigint {
    return this.view.getBigInt64(this.at(struct, base, field), true);
  }

  i32(struct: StructName, base: number, field: string): number {
    return this.view.getInt32(this.at(struct, base, field, 4), true);
  }

  setI64(struct: StructName, base: number, field: string, value: number | bigint): void {
    this.view.setBigInt64(this.at(struct, base, field), BigInt(value), true);
  }

  setPtr(struct: StructName, base: number, field: string, value: number): void {
    const address = this.at(struct, base, field, this.layout.pointerSize);
    if (this.layout.pointerSize === 4) this.view.setUint32(address, value, true);
    else this.view.setBigUint64(address, BigInt(value), true);
  }

  size(struct: StructName): number {
    return this.layout.structs[struct].size;
  }

  offsetOf(struct: StructName, field: string): number {
    const offset = this.offsets[struct][field];
    if (offset === undefined) throw new Error(`layout: ${struct} has no field ${field}`);
    return offset;
  }

  /** A NUL-terminated UTF-8 string, bounded by the memory. */
  cString(address: number, what: string): string {
    const bytes = this.bytes;
    this.checkRange(address, 1, what);
    const end = bytes.indexOf(0, address);
    if (end < 0) throw new ArrowCDeviceError(`${what}: string at ${address} is not NUL-terminated`, EINVAL, { path: what, layout: layoutName(this.layout) });
    // Formats and most names are short ASCII: decode those without TextDecoder.
    if (end - address <= 32) {
      let ascii = '';
      for (let i = address; i < end; i++) {
        if (bytes[i] >= 0x80) return decodeUtf8(bytes.subarray(address, end), what);
        ascii += String.fromCharCode(bytes[i]);
      }
      return ascii;
    }
    return decodeUtf8(bytes.subarray(address, end), what);
  }
}

/**
 * The validator checked the string, so invalid UTF-8 here means its bytes
 * changed since (a producer's pointer into memory it had freed): the
 * library's error, not TextDecoder's TypeError.
 */
function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ArrowCDeviceError(`${what}: not valid UTF-8 (its bytes changed after validation, or it was not validated)`, EINVAL, what);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
