// A RecordBatch table and its message body → raw arrays: field nodes and
// buffers taken in the IPC's pre-order, every buffer checked against the body
// and against what its array's length needs. Buffers are views of the body
// (zero-copy; RawArray buffers are byte views, read unaligned), except where
// the C Data Interface wants something IPC does not have: the variadic buffer
// sizes of view types, and offsets of zero-length arrays written without any.
// A compressed body (LZ4_FRAME, ZSTD) gives decompressed copies instead
// (./compression.ts).

import { ArrowCDeviceError, EINVAL, ENOSYS, ERANGE } from '../../abi/errors.js';
import { byteWidth, offsetWidth, type RawArray } from '../../model/raw.js';
import { typeToString, type DataType, type Field } from '../../model/types.js';
import { bodyCompression, decompressBuffer, type BodyCompression } from './compression.js';
import type { Table } from './flatbuffers.js';
import type { SchemaDictionaries } from './schema.js';

/**
 * Slots that need no bytes of the body (null arrays, structs without
 * children, zero-width values, run-end encoded arrays) are the only lengths the
 * input size does not bound; a whole input may declare at most this many, so
 * that a corrupt length cannot make its readers loop for hours.
 */
export const MAX_UNBACKED_SLOTS = 1 << 24;
const FIELD_NODE_SIZE = 16;
const BUFFER_SIZE = 16;

/** What the body reader needs to know about the stream so far. */
export interface BodyContext {
  readonly dictionaries: SchemaDictionaries;
  /** The dictionary current for an id, or undefined before the first batch of it. */
  readonly current: (id: bigint) => RawArray | undefined;
  /** Unions carry a validity buffer before metadata version V5 (format 1.0). */
  readonly unionValidity: boolean;
  /**
   * Shared by the input's messages: unbacked slots declared so far (see
   * MAX_UNBACKED_SLOTS) and bytes decompressed (see MAX_DECOMPRESSED_BYTES).
   */
  readonly budget: { unbacked: number; decompressed: number };
}

/** Reads the arrays of one RecordBatch table (of a record batch or a dictionary batch). */
export class BodyReader {
  private readonly nodes: number[];
  private readonly buffers: number[];
  private readonly variadic: bigint[];
  private readonly compression: BodyCompression | null;
  private nextNode = 0;
  private nextBuffer = 0;
  private nextVariadic = 0;

  /** where: the message, for errors ("message 3 (record batch)"). */
  constructor(private readonly batch: Table, private readonly body: Uint8Array, private readonly where: string,
    private readonly context: BodyContext) {
    this.compression = bodyCompression(batch, where);
    this.nodes = batch.structs(1, 'nodes', FIELD_NODE_SIZE);
    this.buffers = batch.structs(2, 'buffers', BUFFER_SIZE);
    this.variadic = batch.int64s(4, 'variadicBufferCounts') ?? [];
  }

  private fail(message: string, code = EINVAL): never {
    throw new ArrowCDeviceError(`${this.where}: ${message}`, code);
  }

  /** The record count of the RecordBatch table. */
  length(): number {
    return this.count(this.batch.int64(0, 'length'), 'length');
  }

  private count(v: bigint, what: string): number {
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`${what} ${v}, expected a count in 0..2^53`);
    return Number(v);
  }

  /** Reads one array of `field`'s type (and its children), `path` naming it for errors. */
  read(field: Field, path: string): RawArray {
    return this.array(field.type, `${path} (${typeToString(field.type)})`);
  }

  /** Fails unless every field node, buffer and variadic count was used. */
  finish(): void {
    const left: string[] = [];
    if (this.nextNode < this.nodes.length) left.push(`${this.nodes.length - this.nextNode} of ${this.nodes.length} field nodes`);
    if (this.nextBuffer < this.buffers.length) left.push(`${this.buffers.length - this.nextBuffer} of ${this.buffers.length} buffers`);
    if (this.nextVariadic < this.variadic.length) left.push(`${this.variadic.length - this.nextVariadic} of ${this.variadic.length} variadicBufferCounts`);
    if (left.length > 0) this.fail(`${left.join(', ')} left over after the schema's fields: the batch does not match the schema`);
  }

  private node(path: string): { length: number; nullCount: number } {
    const i = this.nextNode++;
    const at = this.nodes[i];
    if (at === undefined) this.fail(`${path} needs field node ${i}, the batch has ${this.nodes.length}`);
    const fb = this.batch.fb;
    const length = this.count(fb.i64(at, `nodes[${i}].length`), `${path}: field node ${i}: length`);
    const nullCount = this.count(fb.i64(at + 8, `nodes[${i}].null_count`), `${path}: field node ${i}: null_count`);
    if (nullCount > length) this.fail(`${path}: field node ${i}: null_count ${nullCount} exceeds length ${length}`);
    return { length, nullCount };
  }

  /** The next buffer as a view of the body, at least `min` bytes long. */
  private buffer(path: string, what: string, min: number): Uint8Array {
    const i = this.nextBuffer++;
    const at = this.buffers[i];
    if (at === undefined) this.fail(`${path} needs buffer ${i} (${what}), the batch has ${this.buffers.length}`);
    const fb = this.batch.fb;
    const offset = fb.i64(at, `buffers[${i}].offset`);
    const length = fb.i64(at + 8, `buffers[${i}].length`);
    const size = BigInt(this.body.byteLength);
    if (offset < 0n || length < 0n || offset + length > size) {
      this.fail(`body of ${size} bytes, buffer ${i} (${path} ${what}) needs bytes ${offset}..${offset + length}`);
    }
    let bytes = this.body.subarray(Number(offset), Number(offset + length));
    if (this.compression !== null) {
      try {
        bytes = decompressBuffer(this.compression, bytes, this.context.budget);
      } catch (e) {
        if (!(e instanceof ArrowCDeviceError)) throw e;
        this.fail(`buffer ${i} (${path} ${what}): ${e.message}`, e.errno);
      }
    }
    if (bytes.byteLength < min) this.fail(`buffer ${i} (${path} ${what}) has ${bytes.byteLength} bytes, expected at least ${min}`);
    return bytes;
  }

  private validity(path: string, length: number, nullCount: number): Uint8Array | null {
    const i = this.nextBuffer;
    const bytes = this.buffer(path, 'validity', 0);
    if (bytes.byteLength === 0) {
      if (nullCount > 0) this.fail(`buffer ${i} (${path} validity) is empty, expected ${Math.ceil(length / 8)} bytes for ${nullCount} nulls`);
      return null;
    }
    if (bytes.byteLength < Math.ceil(length / 8)) {
      this.fail(`buffer ${i} (${path} validity) has ${bytes.byteLength} bytes, expected at least ${Math.ceil(length / 8)}`);
    }
    return bytes;
  }

  /** n + 1 offsets; zero-length arrays may come with none (0.14.1 files), then one 0 is made up. */
  private offsets(path: string, n: number, width: 4 | 8): Uint8Array {
    const i = this.nextBuffer;
    const bytes = this.buffer(path, 'offsets', 0);
    if (bytes.byteLength === 0 && n === 0) return new Uint8Array(width);
    if (bytes.byteLength < (n + 1) * width) this.fail(`buffer ${i} (${path} offsets) has ${bytes.byteLength} bytes, expected at least ${(n + 1) * width} for ${n + 1} offsets`);
    return bytes;
  }

  /** Counts slots that no buffer pays for against the input's budget. */
  private unbacked(n: number, path: string): void {
    const budget = this.context.budget;
    budget.unbacked += n;
    if (budget.unbacked > MAX_UNBACKED_SLOTS) {
      this.fail(`${path}: ${n} slots that carry no data bring the input to ${budget.unbacked}, more than this reader's ` +
        `bound of ${MAX_UNBACKED_SLOTS} (null, empty struct, zero-width and run-end encoded slots)`, ERANGE);
    }
  }

  /** A child that must cover its parent's slots (struct, sparse union, fixed-size list). */
  private covering(child: RawArray, needed: number, path: string, k: number): RawArray {
    if (child.length < needed) this.fail(`${path}: child ${k} has length ${child.length}, expected at least ${needed}`);
    return child;
  }

  private array(type: DataType, path: string): RawArray {
    const { length: n, nullCount } = this.node(path);
    const zeroWidth = type.kind === 'null' || type.kind === 'run_end_encoded' || (type.kind === 'struct' && type.children.length === 0) ||
      (type.kind === 'fixed_size_list' && type.listSize === 0) || (type.kind === 'fixed_size_binary' && type.byteWidth === 0);
    if (zeroWidth) this.unbacked(n, path);
    const make = (buffers: (Uint8Array | null)[], children: RawArray[] = [], dictionary: RawArray | null = null, nulls = nullCount): RawArray =>
      ({ type, length: n, nullCount: nulls, offset: 0, buffers, children, dictionary });
    const child = (f: Field, k: number) => this.array(f.type, `${path}.children[${k}] '${f.name}'`);

    switch (type.kind) {
      case 'null':
        // No buffers in IPC; the null count is the length, as Arrow C++ reads it.
        return make([], [], null, n);
      case 'union': {
        if (this.context.unionValidity) {
          // Pre-1.0 union: a validity buffer first. Dropped when all valid (as Arrow C++, Go and C# do).
          this.validity(path, n, nullCount);
          if (nullCount > 0) {
            this.fail(`${path}: a union with ${nullCount} null slots in a validity buffer (pre-1.0 union metadata) is not supported; ` +
              'since format 1.0 a union\'s nulls are its children\'s', ENOSYS);
          }
        } else if (nullCount !== 0) {
          this.fail(`${path}: null_count ${nullCount} for a union, which has no validity buffer, expected 0`);
        }
        const typeIds = this.buffer(path, 'type ids', n);
        const offsets = type.mode === 'dense' ? this.buffer(path, 'offsets', 4 * n) : null;
        const children = type.children.map((f, k) => (type.mode === 'sparse' ? this.covering(child(f, k), n, path, k) : child(f, k)));
        return make(offsets === null ? [typeIds] : [typeIds, offsets], children, null, 0);
      }
      case 'run_end_encoded':
        if (nullCount !== 0) this.fail(`${path}: null_count ${nullCount} for a run-end encoded array, which has no validity buffer, expected 0`);
        return make([], [child(type.runEnds, 0), child(type.values, 1)]);
      default:
        break;
    }

    const validity = this.validity(path, n, nullCount);
    switch (type.kind) {
      case 'bool':
        return make([validity, this.buffer(path, 'values', Math.ceil(n / 8))]);
      case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
        const w = offsetWidth(type) as 4 | 8;
        const offsets = this.offsets(path, n, w);
        const end = entry(offsets, w, n);
        const i = this.nextBuffer;
        const data = this.buffer(path, 'data', 0);
        if (end < 0 || end > data.byteLength) this.fail(`buffer ${i} (${path} data) has ${data.byteLength} bytes, the last offset is ${end}`);
        return make([validity, offsets, data]);
      }
      case 'binary_view': case 'utf8_view': {
        const views = this.buffer(path, 'views', 16 * n);
        const k = this.nextVariadic++;
        const count = this.variadic[k];
        if (count === undefined) this.fail(`${path} needs variadicBufferCounts[${k}], the batch has ${this.variadic.length}`);
        if (count < 0n || count > BigInt(this.buffers.length - this.nextBuffer)) {
          this.fail(`${path}: variadicBufferCounts[${k}] is ${count}, the batch has ${this.buffers.length - this.nextBuffer} buffers left`);
        }
        const data = Array.from({ length: Number(count) }, (_, j) => this.buffer(path, `variadic data ${j}`, 0));
        const sizes = new BigInt64Array(data.map((d) => BigInt(d.byteLength)));
        return make([validity, views, ...data, new Uint8Array(sizes.buffer)]);
      }
      case 'list': case 'large_list': case 'map': {
        const offsets = this.offsets(path, n, offsetWidth(type) as 4 | 8);
        return make([validity, offsets], [child(type.kind === 'map' ? type.entries : type.child, 0)]);
      }
      case 'list_view': case 'large_list_view': {
        const w = offsetWidth(type);
        const offsets = this.buffer(path, 'offsets', n * w);
        return make([validity, offsets, this.buffer(path, 'sizes', n * w)], [child(type.child, 0)]);
      }
      case 'fixed_size_list':
        return make([validity], [this.covering(child(type.child, 0), n * type.listSize, path, 0)]);
      case 'struct':
        return make([validity], type.children.map((f, k) => this.covering(child(f, k), n, path, k)));
      case 'dictionary': {
        const indices = this.buffer(path, 'indices', n * byteWidth(type));
        const id = this.context.dictionaries.idOf.get(type)!;
        let dictionary = this.context.current(id);
        if (dictionary === undefined) {
          // The spec allows a dictionary to come after a batch whose column is all null.
          if (nullCount < n) this.fail(`${path}: dictionary id ${id} is used before any dictionary batch defined it`);
          dictionary = emptyArray(type.valueType);
        }
        return make([validity, indices], [], dictionary);
      }
      default:
        return make([validity, this.buffer(path, 'values', n * byteWidth(type))]);
    }
  }
}

/** Entry i of little-endian int32 or int64 offsets. */
export function entry(bytes: Uint8Array, width: 4 | 8, i: number): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return width === 4 ? v.getInt32(i * 4, true) : Number(v.getBigInt64(i * 8, true));
}

/** A zero-length array of any type. */
export function emptyArray(type: DataType): RawArray {
  const make = (buffers: (Uint8Array | null)[], children: RawArray[] = [], dictionary: RawArray | null = null): RawArray =>
    ({ type, length: 0, nullCount: 0, offset: 0, buffers, children, dictionary });
  const empty = () => new Uint8Array(0);
  switch (type.kind) {
    case 'null': return make([]);
    case 'union': return make(type.mode === 'dense' ? [empty(), empty()] : [empty()], type.children.map((f) => emptyArray(f.type)));
    case 'run_end_encoded': return make([], [emptyArray(type.runEnds.type), emptyArray(type.values.type)]);
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': return make([null, new Uint8Array(offsetWidth(type)), empty()]);
    case 'binary_view': case 'utf8_view': return make([null, empty(), empty()]);
    case 'list': case 'large_list': return make([null, new Uint8Array(offsetWidth(type))], [emptyArray(type.child.type)]);
    case 'map': return make([null, new Uint8Array(4)], [emptyArray(type.entries.type)]);
    case 'list_view': case 'large_list_view': return make([null, empty(), empty()], [emptyArray(type.child.type)]);
    case 'fixed_size_list': return make([null], [emptyArray(type.child.type)]);
    case 'struct': return make([null], type.children.map((f) => emptyArray(f.type)));
    case 'dictionary': return make([null, empty()], [], emptyArray(type.valueType));
    default: return make([null, empty()]);
  }
}
