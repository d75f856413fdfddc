// A small, bounds-checked reader of FlatBuffers tables: just what the Arrow
// IPC metadata (Message.fbs, Schema.fbs, File.fbs) needs. Every read is
// checked against the buffer, so a corrupt or truncated message gives an
// ArrowCDeviceError naming the table and field, never a wrong value read
// from outside it (the generated bindings read out-of-range bytes as 0).

import { ArrowCDeviceError, EINVAL } from '../../abi/errors.js';
import { decodeEscaped } from '../../model/metadata.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One flatbuffer: the metadata bytes of one message, or a file footer. */
export class FlatBuffer {
  private readonly view: DataView;

  /** `where` starts every error message ("message 3 (record batch) metadata"). */
  constructor(readonly bytes: Uint8Array, readonly where: string) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(path: string, message: string): never {
    throw new ArrowCDeviceError(`${this.where}: ${path}: ${message}`, EINVAL);
  }

  need(at: number, size: number, path: string): void {
    if (at < 0 || size < 0 || at + size > this.bytes.byteLength) {
      this.fail(path, `needs bytes ${at}..${at + size}, the flatbuffer has ${this.bytes.byteLength}`);
    }
  }

  u8(at: number, path: string): number { this.need(at, 1, path); return this.view.getUint8(at); }
  i8(at: number, path: string): number { this.need(at, 1, path); return this.view.getInt8(at); }
  i16(at: number, path: string): number { this.need(at, 2, path); return this.view.getInt16(at, true); }
  u16(at: number, path: string): number { this.need(at, 2, path); return this.view.getUint16(at, true); }
  i32(at: number, path: string): number { this.need(at, 4, path); return this.view.getInt32(at, true); }
  u32(at: number, path: string): number { this.need(at, 4, path); return this.view.getUint32(at, true); }
  i64(at: number, path: string): bigint { this.need(at, 8, path); return this.view.getBigInt64(at, true); }

  /** The root table (a uoffset at byte 0). */
  root(name: string): Table {
    return this.tableAt(this.u32(0, `${name} (root offset)`), name);
  }

  tableAt(at: number, path: string): Table {
    const vtable = at - this.i32(at, `${path} (vtable offset)`);
    const vtableSize = this.u16(vtable, `${path} (vtable)`);
    if (vtableSize < 4 || vtableSize % 2 !== 0) this.fail(path, `vtable of ${vtableSize} bytes, expected an even size >= 4`);
    this.need(vtable, vtableSize, `${path} (vtable)`);
    const tableSize = this.u16(vtable + 2, `${path} (vtable)`);
    this.need(at, tableSize, path);
    return new Table(this, at, vtable, vtableSize, path);
  }
}

/** A table of a flatbuffer; fields by their slot number in the .fbs (0-based). */
export class Table {
  constructor(readonly fb: FlatBuffer, readonly at: number, private readonly vtable: number,
    private readonly vtableSize: number, readonly path: string) {}

  /** The absolute position of a field's value, or 0 when absent. */
  private field(slot: number): number {
    const entry = 4 + 2 * slot;
    if (entry >= this.vtableSize) return 0;
    const offset = this.fb.u16(this.vtable + entry, `${this.path} (vtable)`);
    return offset === 0 ? 0 : this.at + offset;
  }

  has(slot: number): boolean {
    return this.field(slot) !== 0;
  }

  private target(slot: number, name: string): number {
    const at = this.field(slot);
    return at === 0 ? 0 : at + this.fb.u32(at, `${this.path}.${name}`);
  }

  bool(slot: number, name: string, fallback = false): boolean {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.u8(at, `${this.path}.${name}`) !== 0;
  }

  int8(slot: number, name: string, fallback: number): number {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.i8(at, `${this.path}.${name}`);
  }

  uint8(slot: number, name: string, fallback: number): number {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.u8(at, `${this.path}.${name}`);
  }

  int16(slot: number, name: string, fallback: number): number {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.i16(at, `${this.path}.${name}`);
  }

  int32(slot: number, name: string, fallback: number): number {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.i32(at, `${this.path}.${name}`);
  }

  int64(slot: number, name: string, fallback = 0n): bigint {
    const at = this.field(slot);
    return at === 0 ? fallback : this.fb.i64(at, `${this.path}.${name}`);
  }

  table(slot: number, name: string): Table | null {
    const at = this.target(slot, name);
    return at === 0 ? null : this.fb.tableAt(at, `${this.path}.${name}`);
  }

  string(slot: number, name: string): string | null {
    const bytes = this.stringBytes(slot, name);
    if (bytes === null) return null;
    try {
      return utf8.decode(bytes);
    } catch {
      return this.fb.fail(`${this.path}.${name}`, 'is not valid UTF-8');
    }
  }

  /**
   * A string that the format calls binary (custom_metadata keys and values):
   * bytes that are not UTF-8 come through as U+DC80..U+DCFF, as in
   * ts/model/metadata.ts, so that they export back byte-exact.
   */
  binaryString(slot: number, name: string): string | null {
    const bytes = this.stringBytes(slot, name);
    return bytes === null ? null : decodeEscaped(bytes);
  }

  private stringBytes(slot: number, name: string): Uint8Array | null {
    const at = this.target(slot, name);
    if (at === 0) return null;
    const path = `${this.path}.${name}`;
    const length = this.fb.u32(at, path);
    this.fb.need(at + 4, length, path);
    return this.fb.bytes.subarray(at + 4, at + 4 + length);
  }

  /** A vector's element count and the position of its first element (null when absent). */
  vector(slot: number, name: string, elementSize: number): { length: number; start: number } | null {
    const at = this.target(slot, name);
    if (at === 0) return null;
    const path = `${this.path}.${name}`;
    const length = this.fb.u32(at, path);
    this.fb.need(at + 4, length * elementSize, `${path} (${length} entries of ${elementSize} bytes)`);
    return { length, start: at + 4 };
  }

  /** A vector of tables. */
  tables(slot: number, name: string): Table[] | null {
    const v = this.vector(slot, name, 4);
    if (v === null) return null;
    return Array.from({ length: v.length }, (_, i) => {
      const at = v.start + 4 * i;
      return this.fb.tableAt(at + this.fb.u32(at, `${this.path}.${name}[${i}]`), `${this.path}.${name}[${i}]`);
    });
  }

  /** A vector of structs of `size` bytes: the position of each. */
  structs(slot: number, name: string, size: number): number[] {
    const v = this.vector(slot, name, size);
    return v === null ? [] : Array.from({ length: v.length }, (_, i) => v.start + size * i);
  }

  int32s(slot: number, name: string): number[] | null {
    const v = this.vector(slot, name, 4);
    return v === null ? null : Array.from({ length: v.length }, (_, i) => this.fb.i32(v.start + 4 * i, `${this.path}.${name}[${i}]`));
  }

  int64s(slot: number, name: string): bigint[] | null {
    const v = this.vector(slot, name, 8);
    return v === null ? null : Array.from({ length: v.length }, (_, i) => this.fb.i64(v.start + 8 * i, `${this.path}.${name}[${i}]`));
  }
}
