// Shows ABI structs as they are in memory, field by field, straight from the
// generated layout table: what the learner's sandbox and the demo print.

import type { StructName } from './layout-types.js';
import type { StructReader } from './structs.js';

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

/** One struct's fields as "name  value" lines (pointers in hex, strings quoted). */
export function describeStruct(s: StructReader, name: StructName, address: number, indent = ''): string[] {
  const layout = s.layout.structs[name];
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

/** Up to n bytes at address in hex, never past the end of the memory. */
function bytesAt(s: StructReader, address: number, n: number): string {
  const bytes = new Uint8Array(s.view.buffer);
  return [...bytes.subarray(address, Math.min(address + n, bytes.length))].map((b) => b.toString(16).padStart(2, '0')).join(' ');
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

/** An array tree with the first bytes of each buffer. */
export function describeArray(s: StructReader, address: number, indent = ''): string[] {
  const lines = describeStruct(s, 'ArrowArray', address, indent);
  const nBuffers = s.i64('ArrowArray', address, 'n_buffers');
  const buffers = s.ptr('ArrowArray', address, 'buffers');
  for (let i = 0; i < nBuffers; i++) {
    const p = s.ptrAt(buffers + i * s.layout.pointerSize);
    const preview = p === 0 ? 'NULL' : `${hex(p)}: ${bytesAt(s, p, 16)} ...`;
    lines.push(`${indent}  buffers[${i}] ${preview}`);
  }
  return [...lines, ...describeDescendants(s, 'ArrowArray', address, indent, (a, i) => describeArray(s, a, i))];
}

/** A device array: its device fields, then the embedded array. */
export function describeDeviceArray(s: StructReader, address: number): string[] {
  return [...describeStruct(s, 'ArrowDeviceArray', address),
    ...describeArray(s, address + s.offsetOf('ArrowDeviceArray', 'array'), '  ')];
}
