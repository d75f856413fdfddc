// The struct tree of an export as it is in memory, as data: every struct
// with every field (offset, size, raw value, and what it means: flag and
// device type names, the string a pointer points at, what a buffer holds),
// pointers as links to the node or region they point at, and the regions of
// memory each struct, string, pointer array and buffer takes. The CLI's
// `inspect`, the demo and the playground render it; it reads any address
// space (the core's memory, a fixture image in either layout).
// A struct that cannot be read (a broken pointer, a bad format) ends its
// branch with a problem instead of throwing: a learner may have broken it.
// Longer than 400 lines because its public members carry their reference
// documentation (docs/api/ is generated from it), ownership included.

import type { AddressSpace } from '../abi/address-space.js';
import { constants } from '../abi/generated/layout.js';
import type { FieldKind, StructName } from '../abi/layout-types.js';
import type { StructReader } from '../abi/structs.js';
import { deviceName, deviceTypeName, eventTypeOf } from '../device/device.js';
import { ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_NULLABLE } from '../model/format.js';
import { decodeMetadataAt, metadataBytesAt } from '../model/metadata.js';
import { readRaw, type RawArray } from '../model/raw.js';
import { readField } from '../model/schema.js';
import { childFields, typeToString, type DataType, type Field } from '../model/types.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';

/** One field of a struct in memory: where it is, its value and what the value means. */
export interface TreeField {
  /** The spec's name of the field. */
  readonly name: string;
  /** Its offset in the struct. */
  readonly offset: number;
  /** Its size in bytes. */
  readonly size: number;
  /** What it holds (a pointer, a function pointer, an integer, a struct). */
  readonly kind: FieldKind;
  /** The value as stored: a decimal integer, or a pointer in hex ('NULL' for 0). */
  readonly value: string;
  /** What it means ("ARROW_FLAG_NULLABLE", "\"int32\"", "released"), or null. */
  readonly meaning: string | null;
  /** The id of the node or region it points at, or null. */
  readonly link: string | null;
}

/** What a region of memory holds. */
export type RegionKind = 'struct' | 'string' | 'metadata' | 'pointers' | 'buffer' | 'event';

/** Bytes of memory something takes: a struct, a string, a pointer array, a buffer. */
export interface TreeRegion {
  /** 'schema', 'schema.format', 'array.buffers', 'array.buffers[1]', ... */
  readonly id: string;
  /** What it holds. */
  readonly kind: RegionKind;
  /** Its first byte's address. */
  readonly address: number;
  /** Its size in bytes. */
  readonly size: number;
  /** What it is, in words. */
  readonly label: string;
}

/** One buffer of an array node: where it is, its role, its size and first bytes. */
export interface TreeBuffer {
  /** Its index in the node's buffers. */
  readonly index: number;
  /** Its id in the tree ('array.buffers[1]'). */
  readonly id: string;
  /** 0 for NULL. */
  readonly address: number;
  /** Bytes a consumer may read (from the type, length and offset), or null when unknown. */
  readonly size: number | null;
  /** 'validity bitmap', 'offsets (int32)', 'values', ... */
  readonly role: string;
  /** The first bytes in hex, or null when they cannot be read here. */
  readonly first: string | null;
  /** In the memory of a device that is not the CPU (or behind a sync event): read only through the device. */
  readonly onDevice: boolean;
}

/** One struct of the tree: its fields, buffers and children. */
export interface TreeNode {
  /** 'schema', 'schema.children[0]', 'array.dictionary', 'device', 'device.array' */
  readonly id: string;
  /** Which struct it is. */
  readonly struct: StructName;
  /** Its address. */
  readonly address: number;
  /** Its size in bytes. */
  readonly size: number;
  /** What it is: `'id': int32`, `struct<...> (the record batch)`. */
  readonly title: string;
  /** Its fields, in memory order. */
  readonly fields: readonly TreeField[];
  /** Its buffers (array nodes). */
  readonly buffers: readonly TreeBuffer[];
  /** Its children, dictionary and embedded structs. */
  readonly children: readonly TreeNode[];
  /** Why its branch could not be read further, or null. */
  readonly problem: string | null;
}

/**
 * The struct tree of an export, field by field: what `inspect` prints and the playground draws.
 */
export interface StructTree {
  /** The layout the structs are in. */
  readonly layout: 'wasm32' | 'lp64';
  /** The roots: the schema, then the array when there is one. */
  readonly roots: readonly TreeNode[];
  /** Every region, sorted by address. */
  readonly regions: readonly TreeRegion[];
}

const PREVIEW = 16;
const CPU_TYPE = constants.ARROW_DEVICE_CPU;

const pointerCount = (n: number) => `${n} pointer${n === 1 ? '' : 's'}`;

export const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;
const hexBytes = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/**
 * The names of the flags set ("ARROW_FLAG_NULLABLE | ..."), and what is left unnamed.
 *
 * Ownership: pure; nothing to release.
 * @param flags - the ArrowSchema flags.
 */
export function flagNames(flags: number): string {
  const names: string[] = ([[ARROW_FLAG_DICTIONARY_ORDERED, 'ARROW_FLAG_DICTIONARY_ORDERED'], [ARROW_FLAG_NULLABLE, 'ARROW_FLAG_NULLABLE'],
    [ARROW_FLAG_MAP_KEYS_SORTED, 'ARROW_FLAG_MAP_KEYS_SORTED']] as const).filter(([bit]) => (flags & bit) !== 0).map(([, n]) => n);
  const unknown = flags & ~7;
  if (unknown !== 0) names.push(`unknown bits 0x${unknown.toString(16)}`);
  return names.length === 0 ? 'none' : names.join(' | ');
}

/**
 * What buffer i of n of an array of this type holds.
 *
 * Ownership: pure; nothing to release.
 * @param type - the type.
 * @param i - the buffer's index.
 * @param n - how many buffers the array has.
 */
export function bufferRole(type: DataType, i: number, n: number): string {
  const offsets = (k: string) => (k.startsWith('large') ? 'offsets (int64)' : 'offsets (int32)');
  switch (type.kind) {
    case 'null': case 'run_end_encoded': return 'unexpected';
    case 'union': return i === 0 ? 'type ids (int8)' : 'offsets (int32)';
    case 'dictionary': return i === 0 ? 'validity bitmap' : `indices (${type.indexType.signed ? '' : 'u'}int${type.indexType.bitWidth})`;
    default: break;
  }
  if (i === 0) return 'validity bitmap';
  switch (type.kind) {
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': return i === 1 ? offsets(type.kind) : 'data';
    case 'binary_view': case 'utf8_view': return i === 1 ? 'views (16 bytes each)' : i === n - 1 ? 'variadic buffer sizes (int64)' : `variadic data ${i - 2}`;
    case 'list': case 'large_list': case 'map': return offsets(type.kind);
    case 'list_view': case 'large_list_view': return i === 1 ? offsets(type.kind.replace('_view', '')) : `sizes (${type.kind.startsWith('large') ? 'int64' : 'int32'})`;
    case 'bool': return 'values (bits)';
    default: return 'values';
  }
}

/** The fields, regions and problems found while walking one address space. */
class Walker {
  readonly regions: TreeRegion[] = [];
  constructor(readonly space: Pick<AddressSpace, 'structs' | 'bytes'>,
    public preview: (address: number, size: number) => Uint8Array | null, readonly loaderCallbacks: ReadonlySet<number>,
    readonly devicePreview: (address: number, size: number) => Uint8Array | null) {}

  /** Whether the buffers walked now are device memory (set while walking a device array not on the CPU). */
  onDevice = false;

  get s(): StructReader {
    return this.space.structs;
  }

  region(id: string, kind: RegionKind, address: number, size: number, label: string): void {
    if (address !== 0 && size > 0) this.regions.push({ id, kind, address, size, label });
  }

  /** Every field of a struct, read raw; meanings and links are filled by the caller. */
  fields(struct: StructName, address: number, meaning: (name: string, value: number) => [string | null, string | null]): TreeField[] {
    const layout = this.s.layout.structs[struct];
    const v = this.s.view;
    return Object.entries(layout.fields).map(([name, f]) => {
      const at = address + f.offset;
      let value: string;
      let n = 0;
      switch (f.kind) {
        case 'i64': n = Number(v.getBigInt64(at, true)); value = v.getBigInt64(at, true).toString(); break;
        case 'i32': n = v.getInt32(at, true); value = String(n); break;
        case 'i64x3': value = [0, 1, 2].map((k) => v.getBigInt64(at + 8 * k, true)).join(', '); break;
        case 'struct': value = '(embedded)'; break;
        default: n = this.s.ptrAt(at); value = n === 0 ? 'NULL' : hex(n);
      }
      const [m, link] = f.kind === 'struct' ? [null, null]
        : f.kind === 'fnptr' && n === 0 && this.loaderCallbacks.has(at) ? ['0 in the image: the loader installs its function here (callback table)', null]
          : meaning(name, n);
      return { name, offset: f.offset, size: f.size, kind: f.kind, value, meaning: m, link };
    });
  }

  /** A string field's text, registering its bytes; a problem reads as null. */
  cString(id: string, address: number, label: string): string | null {
    try {
      const text = this.s.cString(address, id);
      this.region(id, 'string', address, new TextEncoder().encode(text).length + 1, label);
      return text;
    } catch {
      return null;
    }
  }

  /** The entries of a pointer array of n, registering it. */
  pointers(id: string, address: number, n: number): number[] {
    const size = this.s.layout.pointerSize;
    this.s.checkRange(address, n * size, id);
    this.region(id, 'pointers', address, n * size, pointerCount(n));
    return Array.from({ length: n }, (_, i) => this.s.ptrAt(address + i * size));
  }

  schema(id: string, address: number, field: Field | null): TreeNode {
    const size = this.s.size('ArrowSchema');
    const title = field === null ? 'ArrowSchema' : `${field.name === '' ? '' : `'${field.name}': `}${typeToString(field.type)}`;
    const node = { id, struct: 'ArrowSchema' as const, address, size, title, buffers: [] as TreeBuffer[] };
    try {
      this.s.checkRange(address, size, id);
    } catch (e) {
      return { ...node, fields: [], children: [], problem: (e as Error).message };
    }
    this.region(id, 'struct', address, size, `ArrowSchema ${title}`);
    const nChildren = this.s.i64('ArrowSchema', address, 'n_children');
    const fields = this.fields('ArrowSchema', address, (name, value) => {
      if (value === 0 && name !== 'flags' && name !== 'n_children') return [name === 'release' ? 'NULL: released' : null, null];
      switch (name) {
        case 'format': case 'name': {
          const text = this.cString(`${id}.${name}`, value, `${name} of ${id}`);
          return [text === null ? 'unreadable' : JSON.stringify(text), `${id}.${name}`];
        }
        case 'metadata': return [this.metadata(`${id}.metadata`, value), `${id}.metadata`];
        case 'flags': return [flagNames(value), null];
        case 'n_children': return [null, null];
        case 'children': return [pointerCount(nChildren), `${id}.children`];
        case 'dictionary': return ['the dictionary\'s value type', `${id}.dictionary`];
        case 'release': return ['the producer\'s release callback', null];
        default: return ['the producer\'s', null];
      }
    });
    const children: TreeNode[] = [];
    let problem: string | null = null;
    try {
      const kids = field === null ? [] : childFields(field.type);
      const list = nChildren > 0 ? this.pointers(`${id}.children`, this.s.ptr('ArrowSchema', address, 'children'), nChildren) : [];
      list.forEach((p, i) => children.push(this.schema(`${id}.children[${i}]`, p, kids[i] ?? null)));
      const dictionary = this.s.ptr('ArrowSchema', address, 'dictionary');
      if (dictionary !== 0) {
        const value = field?.type.kind === 'dictionary' ? { name: '', type: field.type.valueType, nullable: true, metadata: null } : null;
        children.push(this.schema(`${id}.dictionary`, dictionary, value));
      }
    } catch (e) {
      problem = (e as Error).message;
    }
    return { ...node, fields, children, problem };
  }

  metadata(id: string, address: number): string {
    try {
      const bytes = metadataBytesAt(this.space, address, id);
      this.region(id, 'metadata', address, bytes.length, `metadata of ${id.replace(/\.metadata$/, '')}`);
      const m = decodeMetadataAt(this.space, address, id);
      return m === null ? 'none' : [...m].map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ');
    } catch (e) {
      return `unreadable: ${(e as Error).message}`;
    }
  }

  array(id: string, address: number, type: DataType | null, raw: RawArray | null): TreeNode {
    const size = this.s.size('ArrowArray');
    const title = type === null ? 'ArrowArray' : typeToString(type);
    const node = { id, struct: 'ArrowArray' as const, address, size, title };
    try {
      this.s.checkRange(address, size, id);
    } catch (e) {
      return { ...node, fields: [], buffers: [], children: [], problem: (e as Error).message };
    }
    this.region(id, 'struct', address, size, `ArrowArray ${title}`);
    const n = (f: string) => this.s.i64('ArrowArray', address, f);
    const fields = this.fields('ArrowArray', address, (name, value) => {
      switch (name) {
        case 'null_count': return [value === -1 ? 'not computed' : null, null];
        case 'buffers': return value === 0 ? [null, null] : [pointerCount(n('n_buffers')), `${id}.buffers`];
        case 'children': return value === 0 ? [null, null] : [pointerCount(n('n_children')), `${id}.children`];
        case 'dictionary': return value === 0 ? [null, null] : ['the dictionary\'s values', `${id}.dictionary`];
        case 'release': return [value === 0 ? 'NULL: released' : 'the producer\'s release callback', null];
        case 'private_data': return [value === 0 ? null : 'the producer\'s', null];
        default: return [null, null];
      }
    });
    const buffers: TreeBuffer[] = [];
    const children: TreeNode[] = [];
    let problem: string | null = null;
    try {
      const nBuffers = n('n_buffers');
      const list = nBuffers > 0 ? this.pointers(`${id}.buffers`, this.s.ptr('ArrowArray', address, 'buffers'), nBuffers) : [];
      list.forEach((p, i) => buffers.push(this.buffer(`${id}.buffers[${i}]`, i, p, type, nBuffers, raw?.buffers[i] ?? null)));
      const kids = type === null ? [] : type.kind === 'dictionary' ? [] : childFields(type);
      const nChildren = n('n_children');
      const childList = nChildren > 0 ? this.pointers(`${id}.children`, this.s.ptr('ArrowArray', address, 'children'), nChildren) : [];
      childList.forEach((p, i) => children.push(this.array(`${id}.children[${i}]`, p, kids[i]?.type ?? null, raw?.children[i] ?? null)));
      const dictionary = this.s.ptr('ArrowArray', address, 'dictionary');
      if (dictionary !== 0) {
        children.push(this.array(`${id}.dictionary`, dictionary, type?.kind === 'dictionary' ? type.valueType : null, raw?.dictionary ?? null));
      }
    } catch (e) {
      problem = (e as Error).message;
    }
    return { ...node, fields, buffers, children, problem };
  }

  buffer(id: string, index: number, address: number, type: DataType | null, n: number, bytes: Uint8Array | null): TreeBuffer {
    const role = type === null ? `buffer ${index}` : bufferRole(type, index, n);
    const size = address === 0 ? 0 : bytes === null ? null : bytes.length;
    if (size !== null && size > 0) this.region(id, 'buffer', address, size, `${role} of ${id.replace(/\.buffers\[\d+\]$/, '')}`);
    const read = this.onDevice ? this.devicePreview : this.preview;
    const first = address === 0 ? null : read(address, Math.min(size ?? PREVIEW, PREVIEW));
    return { index, id, address, size, role, first: first === null ? null : hexBytes(first), onDevice: this.onDevice && address !== 0 };
  }

  device(id: string, address: number, field: Field | null, raw: RawArray | null): TreeNode {
    const size = this.s.size('ArrowDeviceArray');
    const node = { id, struct: 'ArrowDeviceArray' as const, address, size, buffers: [] };
    try {
      this.s.checkRange(address, size, id);
    } catch (e) {
      return { ...node, title: 'a device array', fields: [], children: [], problem: (e as Error).message };
    }
    const type = this.s.i32('ArrowDeviceArray', address, 'device_type');
    const deviceId = this.s.i64('ArrowDeviceArray', address, 'device_id');
    const title = `on ${deviceName(type, deviceId)}`;
    this.region(id, 'struct', address, size, `ArrowDeviceArray ${title}`);
    const fields = this.fields('ArrowDeviceArray', address, (name, value) => {
      switch (name) {
        case 'device_type': {
          const t = deviceTypeName(value);
          return [t === undefined ? 'not a device type of the header' : `ARROW_DEVICE_${t.toUpperCase()} (${deviceName(value, deviceId)})`, null];
        }
        case 'device_id': return [value === -1 ? 'none (the CPU has no device id)' : null, null];
        case 'sync_event': {
          const event = eventTypeOf(type);
          if (value === 0) return [event === null ? 'NULL: this device type has no event type' : 'NULL: the data is ready', null];
          this.region(`${id}.sync_event`, 'event', value, 4, `the sync event (${event ?? 'no event type'})`);
          return [`a ${event ?? 'event the device type does not define'}`, `${id}.sync_event`];
        }
        case 'reserved': return [null, null];
        default: return [null, null];
      }
    });
    this.onDevice = isDeviceMemory(this.s, address);
    const array = this.array(`${id}.array`, address + this.s.offsetOf('ArrowDeviceArray', 'array'), field?.type ?? null, raw);
    this.onDevice = false;
    return { ...node, title, fields, children: [array], problem: null };
  }
}

/** Whether a device array's buffers are device memory (not the CPU, or behind a sync event); false when it cannot be read. */
function isDeviceMemory(s: StructReader, address: number): boolean {
  try {
    s.checkRange(address, s.size('ArrowDeviceArray'), 'device array');
  } catch {
    return false;
  }
  return s.i32('ArrowDeviceArray', address, 'device_type') !== CPU_TYPE || s.ptr('ArrowDeviceArray', address, 'sync_event') !== 0;
}

/** Options of `structTree`. */
export interface TreeOptions {
  /**
   * Reads up to `size` bytes at a buffer's address for its preview, or null
   * when they may not be read (device memory before its event). Default:
   * the address space's bytes.
   */
  readonly preview?: (address: number, size: number) => Uint8Array | null;
  /**
   * The same for the buffers of a device array that is not on the CPU (or
   * has a sync event): by default they are not read, since the host may
   * not read them before the event (inspect/batch.ts: deviceTree
   * waits on the event and reads through the device).
   */
  readonly devicePreview?: (address: number, size: number) => Uint8Array | null;
  /** In a fixture image: the places of the callback table, which hold 0 until a loader installs its functions. */
  readonly loaderCallbacks?: ReadonlySet<number>;
}

export const TREE_OPTION_KEYS = optionKeys<TreeOptions>()(['preview', 'devicePreview', 'loaderCallbacks']);

/**
 * The tree of a schema and, optionally, its array (an ArrowArray or an
 * ArrowDeviceArray) in an address space. Buffer sizes come from reading the
 * array as its schema says; when that fails, they are unknown and the root's
 * problem says why.
 *
 * Ownership: borrows the structs (nothing is moved or released); the tree is JS memory.
 * @param space - the address space the structs are in.
 * @param schema - the ArrowSchema's address.
 * @param array - the array's struct kind and address, or null.
 * @param options - how buffers are previewed.
 */
export function structTree(space: Pick<AddressSpace, 'structs' | 'bytes'>, schema: number, array: { struct: 'ArrowArray' | 'ArrowDeviceArray'; address: number } | null,
  options: TreeOptions = {}): StructTree {
  checkOptions('structTree', options, TREE_OPTION_KEYS);
  const bytes = space.bytes;
  const preview = options.preview ?? ((address: number, size: number) => (address + size <= bytes.length ? bytes.slice(address, address + size) : null));
  const w = new Walker(space, preview, options.loaderCallbacks ?? new Set(), options.devicePreview ?? (() => null));
  let field: Field | null = null;
  let fieldProblem: string | null = null;
  try {
    field = readField(space.structs, schema);
  } catch (e) {
    fieldProblem = (e as Error).message;
  }
  const roots: TreeNode[] = [];
  const schemaNode = w.schema('schema', schema, field);
  roots.push(fieldProblem === null || schemaNode.problem !== null ? schemaNode : { ...schemaNode, problem: fieldProblem });
  if (array !== null) {
    const at = array.struct === 'ArrowArray' ? array.address : array.address + space.structs.offsetOf('ArrowDeviceArray', 'array');
    let raw: RawArray | null = null;
    let rawProblem: string | null = null;
    const onDevice = array.struct === 'ArrowDeviceArray' && isDeviceMemory(space.structs, array.address);
    // Device memory is not read from the host: its buffer sizes stay unknown.
    if (field !== null && !onDevice) {
      try {
        raw = readRaw(space, at, field.type, 'copy');
      } catch (e) {
        rawProblem = (e as Error).message;
      }
    }
    const node = array.struct === 'ArrowArray' ? w.array('array', at, field?.type ?? null, raw) : w.device('device', array.address, field, raw);
    roots.push(rawProblem === null || node.problem !== null ? node : { ...node, problem: `buffer sizes unknown: ${rawProblem}` });
  }
  const layout = space.structs.layout.pointerSize === 4 ? 'wasm32' : 'lp64';
  return { layout, roots, regions: [...w.regions].sort((a, b) => a.address - b.address || b.size - a.size) };
}
