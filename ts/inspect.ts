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
      case 'i64x3': value = `{${[0, 8, 16].map((o) => s.view.getBigInt64(at + o, true)).join(', ')}}`; break;
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

/** A schema tree, children and dictionary included. */
export function describeSchema(s: StructReader, address: number, indent = ''): string[] {
  const lines = describeStruct(s, 'ArrowSchema', address, indent);
  const n = s.i64('ArrowSchema', address, 'n_children');
  const children = s.ptr('ArrowSchema', address, 'children');
  for (let i = 0; i < n; i++) {
    lines.push(`${indent}  children[${i}]:`);
    lines.push(...describeSchema(s, s.ptrAt(children + i * s.layout.pointerSize), `${indent}    `));
  }
  const dictionary = s.ptr('ArrowSchema', address, 'dictionary');
  if (dictionary !== 0) {
    lines.push(`${indent}  dictionary:`);
    lines.push(...describeSchema(s, dictionary, `${indent}    `));
  }
  return lines;
}

/** An array tree with the first bytes of each buffer. */
export function describeArray(s: StructReader, address: number, indent = ''): string[] {
  const lines = describeStruct(s, 'ArrowArray', address, indent);
  const nBuffers = s.i64('ArrowArray', address, 'n_buffers');
  const buffers = s.ptr('ArrowArray', address, 'buffers');
  for (let i = 0; i < nBuffers; i++) {
    const p = s.ptrAt(buffers + i * s.layout.pointerSize);
    const preview = p === 0 ? 'NULL' : `${hex(p)}: ${[...new Uint8Array(s.view.buffer, p, 16)].map((b) => b.toString(16).padStart(2, '0')).join(' ')} ...`;
    lines.push(`${indent}  buffers[${i}] ${preview}`);
  }
  const n = s.i64('ArrowArray', address, 'n_children');
  const children = s.ptr('ArrowArray', address, 'children');
  for (let i = 0; i < n; i++) {
    lines.push(`${indent}  children[${i}]:`);
    lines.push(...describeArray(s, s.ptrAt(children + i * s.layout.pointerSize), `${indent}    `));
  }
  const dictionary = s.ptr('ArrowArray', address, 'dictionary');
  if (dictionary !== 0) {
    lines.push(`${indent}  dictionary:`);
    lines.push(...describeArray(s, dictionary, `${indent}    `));
  }
  return lines;
}

/** A device array: its device fields, then the embedded array. */
export function describeDeviceArray(s: StructReader, address: number): string[] {
  return [...describeStruct(s, 'ArrowDeviceArray', address),
    ...describeArray(s, address + s.offsetOf('ArrowDeviceArray', 'array'), '  ')];
}
