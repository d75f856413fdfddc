// Shows ABI structs as they are in memory, field by field, straight from the
// generated layout table: what the learner's sandbox and the demo print.

import { constants } from '../abi/generated/layout.js';
import type { StructName } from '../abi/layout-types.js';
import { StructReader } from '../abi/structs.js';

/** What describeDeviceArray needs to wait on an event and read device memory: an ArrowCDevice. */
export interface DeviceMemoryReader {
  readonly core: { readonly structs: StructReader };
  syncDeviceArray(ptr: number): void;
  readDeviceMemory(address: number, size: number): Uint8Array;
}

/** The first bytes of a buffer in hex, or null when they may not be read. */
type Preview = (address: number) => string | null;

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

/** One struct's fields as "name  value" lines (pointers in hex, strings quoted). */
export function describeStruct(s: StructReader, name: StructName, address: number, indent = ''): string[] {
  const layout = s.layout.structs[name];
  s.checkRange(address, layout.size, name);
  const lines = [`${indent}struct ${name} @ ${hex(address)} (${layout.size} bytes)`];
  const width = Math.max(...Object.keys(layout.fields).map((f) => f.length));
  for (const [field, f] of Object.entries(layout.fields)) {
    const at = address + f.offset;
    let value: string;
    switch (f.kind) {
      case 'i64': value = s.view.getBigInt64(at, true).toString(); break;
      case 'i32': value = String(s.view.getInt32(at, true)); break;
      case 'i64x3': value = `{${[0, 1, 2].map((k) => s.view.getBigInt64(at + k * BigInt64Array.BYTES_PER_ELEMENT, true)).join(', ')}}`; break;
      case 'fnptr': { const p = s.ptrAt(at); value = p === 0 ? 'NULL' : `function #${p}`; break; }
      case 'struct': value = '(embedded, below)'; break;
      default: value = pointerValue(s, name, field, s.ptrAt(at));
    }
    lines.push(`${indent}  +${String(f.offset).padStart(3)}  ${field.padEnd(width)}  ${value}`);
  }
  return lines;
}

function pointerValue(s: StructReader, owner: StructName, field: string, p: number): string {
  if (p === 0) return 'NULL';
  if (owner === 'ArrowSchema' && (field === 'format' || field === 'name')) return `${hex(p)} "${s.cString(p, field)}"`;
  return hex(p);
}

const hexBytes = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/** Up to n bytes at address in hex, never past the end of the memory. */
function bytesAt(s: StructReader, address: number, n: number): string {
  const bytes = s.bytes;
  return hexBytes(bytes.subarray(address, Math.min(address + n, bytes.length)));
}

/** Up to 16 bytes of any device's memory, read through the library (fewer near the end of a block). */
function deviceBytesAt(lib: DeviceMemoryReader, address: number): string {
  for (let n = 16; n >= 1; n /= 2) {
    try {
      return hexBytes(lib.readDeviceMemory(address, n));
    } catch {
      // Past the end of its block (or not device memory at all): try fewer bytes.
    }
  }
  return '(unreadable)';
}

/** Lines for the children and dictionary of a schema or array node, each described by `describe`. */
function describeDescendants(s: StructReader, struct: 'ArrowSchema' | 'ArrowArray', address: number, indent: string,
  describe: (address: number, indent: string) => string[]): string[] {
  const lines: string[] = [];
  const n = s.i64(struct, address, 'n_children');
  const children = s.ptr(struct, address, 'children');
  for (let i = 0; i < n; i++) {
    lines.push(`${indent}  children[${i}]:`, ...describe(s.ptrAt(children + i * s.layout.pointerSize), `${indent}    `));
  }
  const dictionary = s.ptr(struct, address, 'dictionary');
  if (dictionary !== 0) lines.push(`${indent}  dictionary:`, ...describe(dictionary, `${indent}    `));
  return lines;
}

/** A schema tree, children and dictionary included. */
export function describeSchema(s: StructReader, address: number, indent = ''): string[] {
  return [...describeStruct(s, 'ArrowSchema', address, indent),
    ...describeDescendants(s, 'ArrowSchema', address, indent, (a, i) => describeSchema(s, a, i))];
}

/** An array tree with the first bytes of each buffer (host memory). */
export function describeArray(s: StructReader, address: number, indent = '', preview: Preview = (p) => bytesAt(s, p, 16)): string[] {
  const lines = describeStruct(s, 'ArrowArray', address, indent);
  const nBuffers = s.i64('ArrowArray', address, 'n_buffers');
  const buffers = s.ptr('ArrowArray', address, 'buffers');
  for (let i = 0; i < nBuffers; i++) {
    const p = s.ptrAt(buffers + i * s.layout.pointerSize);
    const bytes = p === 0 ? null : preview(p);
    const text = p === 0 ? 'NULL' : bytes === null ? `${hex(p)} (device memory: not read without waiting on sync_event)` : `${hex(p)}: ${bytes} ...`;
    lines.push(`${indent}  buffers[${i}] ${text}`);
  }
  return [...lines, ...describeDescendants(s, 'ArrowArray', address, indent, (a, i) => describeArray(s, a, i, preview))];
}

/**
 * A device array: its device fields, then the embedded array. Buffer bytes
 * of an array on the CPU are read as they are; those of any other device
 * only through `source` as an ArrowCDevice, which first waits on the sync
 * event (the producer's copies may be pending until then) and reads through
 * the device. Given only a StructReader, such bytes are not shown.
 */
export function describeDeviceArray(source: StructReader | DeviceMemoryReader, address: number): string[] {
  const lib = source instanceof StructReader ? null : source;
  const s = lib === null ? (source as StructReader) : lib.core.structs;
  const onCpu = s.i32('ArrowDeviceArray', address, 'device_type') === constants.ARROW_DEVICE_CPU &&
    s.ptr('ArrowDeviceArray', address, 'sync_event') === 0;
  let preview: Preview = (p) => bytesAt(s, p, 16);
  if (!onCpu && lib === null) preview = () => null;
  if (!onCpu && lib !== null) {
    lib.syncDeviceArray(address);
    preview = (p) => deviceBytesAt(lib, p);
  }
  return [...describeStruct(s, 'ArrowDeviceArray', address),
    ...describeArray(s, address + s.offsetOf('ArrowDeviceArray', 'array'), '  ', preview)];
}
