// apache-arrow Data ↔ raw arrays. apache-arrow pre-slices every buffer but the
// bitmaps (Data.offset applies to bitmaps only), while a C array's offset
// applies to all of them. So arrow-js data becomes a raw array with offset 0
// (bitmaps shifted, sliced offsets rebased), and a raw array becomes arrow-js
// Data built at its physical start and sliced by arrow-js.

import * as arrow from 'apache-arrow';
import { toArrowSchema, toArrowType } from './arrow-types.js';
import { copyBits } from '../model/bits.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../abi/errors.js';
import type { SlotScan } from '../abi/slot-scan.js';
import { byteWidth, hasValidity, offsetWidth, pathText, type Path, type RawArray } from '../model/raw.js';
import { checkShape } from '../validate/raw-shape.js';
import { intAt } from '../model/raw-values.js';
import { concatRaws } from '../model/concat.js';
import { childFields, int32, typeToString, type DataType, type Field, type Schema } from '../model/types.js';
import { gather, nullableBuilder } from './builders.js';
import { narrowedIndices } from './indices.js';

// ---- apache-arrow → raw -----------------------------------------------------

// Paths for messages ("array.children[2].buffers[1]") are joined only when a
// message needs one: a node gets its parent's path and its step.
export const ROOT = -1, DICTIONARY = -2;

/** The path of the node at `step` (a child's index, DICTIONARY, or ROOT: the parent itself) under parent. */
export function joinPath(parent: string, step: number): string {
  return step === ROOT ? parent : step === DICTIONARY ? `${parent}.dictionary` : `${parent}.children[${step}]`;
}

/** Bytes [from, from + size) of a typed array, as a view; throws, naming buffer i of the node, when it is shorter. */
function region(a: ArrayBufferView | undefined, from: number, size: number, parent: string, step: number, i: number): Uint8Array {
  if (size === 0) return new Uint8Array(0);
  if (a === undefined || a.byteLength < from + size) tooShort(a, from, size, parent, step, i);
  return new Uint8Array(a.buffer, a.byteOffset + from, size);
}

/** Throws: buffer i of the node needs bytes [from, from + size) of `a`, which is shorter. */
export function tooShort(a: ArrayBufferView | undefined, from: number, size: number, parent: string, step: number, i: number): never {
  const what = `${joinPath(parent, step)}.buffers[${i}]`;
  throw new ArrowCDeviceError(`${what}: expected at least ${from + size} bytes, found ${a?.byteLength ?? 0}`, EINVAL, what);
}

/**
 * Bits [bitOffset, bitOffset + n) of a bitmap (buffer i of the node), starting
 * at bit 0, unused bits cleared: a view when they already are so (a
 * byte-aligned start, a clear tail), else a copy.
 */
export function bits(src: Uint8Array | undefined, bitOffset: number, n: number, parent: string, step: number, i: number): Uint8Array {
  const size = (n + 7) >> 3;
  if ((bitOffset & 7) === 0 && src !== undefined && src.byteLength >= (bitOffset >> 3) + size) {
    const at = bitOffset >> 3;
    if ((n & 7) === 0 || (src[at + size - 1] >> (n & 7)) === 0) return src.subarray(at, at + size);
  }
  const out = new Uint8Array(size);
  copyBits(src ?? new Uint8Array(0), bitOffset, n, out, 0, `${joinPath(parent, step)}.buffers[${i}]`);
  return out;
}

/** apache-arrow Data of the given type (the model's) as a raw array with offset 0; buffers are views where they can be. */
export function fromArrowData(data: arrow.Data, type: DataType, path = 'array'): RawArray {
  return fromData(data, type, path, ROOT);
}

/** fromArrowData of the node at `step` under the node at path `parent`. */
export function fromData(data: arrow.Data, type: DataType, parent: string, step: number): RawArray {
  const n = data.length;
  const validity = hasValidity(type);
  const nulls = validity ? data.nullCount : 0;
  const buffers: (Uint8Array | null)[] = [];
  if (validity) buffers.push(nulls > 0 ? bits(data.nullBitmap, data.offset, n, parent, step, 0) : null);
  let children: RawArray[] = [];
  let dictionary: RawArray | null = null;

  switch (type.kind) {
    case 'null':
      return { type, length: n, nullCount: n, offset: 0, buffers: [], children: [], dictionary: null };
    case 'bool':
      buffers.push(bits(data.values as Uint8Array, data.offset, n, parent, step, 1));
      break;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
      const { offsets, first, last } = rebasedOffsets(data, n, offsetWidth(type) as 4 | 8, parent, step);
      buffers.push(offsets, region(data.values, first, last - first, parent, step, 2));
      break;
    }
    case 'binary_view': case 'utf8_view': {
      buffers.push(region(data.values, 0, n * 16, parent, step, 1));
      const sizes = new BigInt64Array(data.variadicBuffers.length);
      data.variadicBuffers.forEach((b, i) => {
        buffers.push(b);
        sizes[i] = BigInt(b.byteLength);
      });
      buffers.push(new Uint8Array(sizes.buffer));
      break;
    }
    case 'list': case 'large_list': case 'map': {
      const { offsets, first, last } = rebasedOffsets(data, n, offsetWidth(type) as 4 | 8, parent, step);
      buffers.push(offsets);
      const values = data.children[0];
      const used = first === 0 && values.length === last ? values : values.slice(first, last - first);
      children = [fromData(used, (type.kind === 'map' ? type.entries : type.child).type, joinPath(parent, step), 0)];
      break;
    }
    case 'fixed_size_list':
      children = [fromData(data.children[0], type.child.type, joinPath(parent, step), 0)];
      break;
    case 'struct': case 'union': {
      if (type.kind === 'union') {
        buffers.push(region(data.typeIds, 0, n, parent, step, 0));
        if (type.mode === 'dense') buffers.push(region(data.valueOffsets, 0, n * 4, parent, step, 1));
      }
      const path = joinPath(parent, step);
      const fields = type.children;
      children = new Array<RawArray>(fields.length);
      for (let i = 0; i < fields.length; i++) children[i] = fromData(data.children[i], fields[i].type, path, i);
      break;
    }
    case 'dictionary': {
      buffers.push(region(data.values, 0, n * byteWidth(type), parent, step, 1));
      const values = data.dictionary;
      if (values === undefined) {
        const path = joinPath(parent, step);
        throw new ArrowCDeviceError(`${path}: dictionary-encoded data without a dictionary`, EINVAL, path);
      }
      dictionary = dictionaryOf(values, type.valueType, joinPath(joinPath(parent, step), DICTIONARY));
      break;
    }
    case 'list_view': case 'large_list_view': case 'run_end_encoded': {
      const path = joinPath(parent, step);
      throw new ArrowCDeviceError(`${path}: ${typeToString(type)} data cannot come from apache-arrow`, ENOSYS, path);
    }
    default:
      buffers.push(region(data.values, 0, n * byteWidth(type), parent, step, 1));
  }
  return { type, length: n, nullCount: nulls, offset: 0, buffers, children, dictionary };
}

/**
 * The one dictionary a C array has, from apache-arrow's dictionary Vector: its
 * chunks end to end when it has several (delta dictionaries: the indices
 * index into the whole Vector). Chunks whose own values are
 * dictionary-encoded over different dictionaries keep their values: those
 * dictionaries are joined too, indices shifted.
 */
function dictionaryOf(values: arrow.Vector, type: DataType, path: string): RawArray {
  const chunks = values.data.map((d, i) => fromData(d, type, values.data.length === 1 ? path : `${path}.chunks[${i}]`, ROOT));
  if (chunks.length === 1) return chunks[0]!;
  if (chunks.length === 0) throw new ArrowCDeviceError(`${path}: a dictionary Vector with no chunks`, EINVAL);
  return concatRaws(chunks, path, 'join');
}

/** n + 1 offsets starting at 0 (buffer 1 of the node): a view when they already do, else a rebased copy. */
export function rebasedOffsets(data: arrow.Data, n: number, width: 4 | 8, parent: string, step: number): { offsets: Uint8Array; first: number; last: number } {
  const all = data.valueOffsets as Int32Array | BigInt64Array | undefined;
  // A zero-length array may come with no offsets (IPC files of Arrow 0.14);
  // the C interface still wants one.
  if (n === 0 && (all === undefined || all.length === 0)) return { offsets: new Uint8Array(width), first: 0, last: 0 };
  if (all === undefined || all.length < n + 1) {
    throw new ArrowCDeviceError(`${joinPath(parent, step)}.buffers[1]: expected ${n + 1} offsets, found ${all?.length ?? 0}`, EINVAL);
  }
  const used = all.subarray(0, n + 1);
  const first = Number(used[0]);
  const last = Number(used[n]);
  if (first === 0) return { offsets: new Uint8Array(used.buffer, used.byteOffset, used.byteLength), first, last };
  const rebased = used instanceof BigInt64Array
    ? BigInt64Array.from(used, (v) => v - BigInt(first))
    : Int32Array.from(used, (v) => v - first);
  return { offsets: new Uint8Array(rebased.buffer), first, last };
}

// ---- raw → apache-arrow -----------------------------------------------------

/** Types apache-arrow lacks that an import may convert, when asked to. */
export type { Conversion } from '../model/types.js';
import type { Conversion } from '../model/types.js';

/** The type apache-arrow gets for a model type, with the requested conversions applied. */
export function convertedType(type: DataType, convert: readonly Conversion[]): DataType {
  const field = (f: Field): Field => ({ ...f, type: convertedType(f.type, convert) });
  switch (type.kind) {
    case 'run_end_encoded':
      return convert.includes('run_end_encoded') ? convertedType(type.values.type, convert) : type;
    case 'list_view': case 'large_list_view':
      if (!convert.includes('list_view')) return type;
      return { kind: type.kind === 'list_view' ? 'list' : 'large_list', child: field(type.child) };
    case 'list': case 'large_list': case 'fixed_size_list':
      return { ...type, child: field(type.child) };
    case 'struct': case 'union':
      return { ...type, children: type.children.map(field) };
    case 'map':
      return { ...type, entries: field(type.entries) };
    case 'dictionary':
      return { ...type, indexType: type.indexType.bitWidth === 64 && convert.includes('dictionary_index64') ? int32() : type.indexType,
        valueType: convertedType(type.valueType, convert) };
    default:
      return type;
  }
}

type TypedArrayCtor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): ArrayBufferView & ArrayLike<number | bigint>;
  new (length: number): ArrayBufferView & ArrayLike<number | bigint>;
  readonly BYTES_PER_ELEMENT: number;
};

/** A typed array over buffer i of a raw node (no copy); throws when it is not aligned for one. */
function typed<C extends TypedArrayCtor>(b: Uint8Array | null, Ctor: C, path: Path, i: number): InstanceType<C> {
  if (b === null || b.byteLength === 0) return new Ctor(0) as InstanceType<C>;
  const size = Ctor.BYTES_PER_ELEMENT;
  if (b.byteOffset % size !== 0) {
    const what = `${pathText(path)}.buffers[${i}]`;
    throw new ArrowCDeviceError(`${what}: address ${b.byteOffset} is not aligned to ${size} bytes, which a ` +
      'zero-copy view needs; import it in copy mode', EINVAL, what);
  }
  return new Ctor(b.buffer, b.byteOffset, Math.floor(b.byteLength / size)) as InstanceType<C>;
}

/**
 * apache-arrow Data for a raw array. Its buffers are used as they are (views
 * stay views). Types apache-arrow lacks throw unless `convert` names them.
 * validatedFully: no pass over every slot (the C validator checked them at
 * 'full', or checkForArrow). arrowType: raw.type's apache-arrow type (the
 * conversions applied) when the caller has it (built once per imported
 * schema). slots: the scans of the core whose memory raw's buffers may view
 * (checkShape), or null.
 */
export function toArrowData(raw: RawArray, convert: readonly Conversion[] = [], path = 'array', validatedFully = false,
  arrowType?: arrow.DataType, slots: SlotScan | null = null): arrow.Data {
  checkForArrow(raw, convert, path, validatedFully, slots);
  return toData(raw, arrowType ?? toArrowType(convertedType(raw.type, convert)), convert, path);
}

/**
 * toArrowData's checks, apart: apache-arrow can hold raw's types and read
 * every slot within bounds (apache-arrow reads later, unchecked). Copy mode
 * checks the views where the core's scans run, then builds over a copy.
 */
export function checkForArrow(raw: RawArray, convert: readonly Conversion[], path: string, validatedFully: boolean, slots: SlotScan | null): void {
  checkConvertible(raw.type, convert, path);
  checkShape(raw, path, !validatedFully, slots);
}

/** Throws, naming the way out, for a type apache-arrow lacks that `convert` does not convert. */
function checkConvertible(type: DataType, convert: readonly Conversion[], path: Path): void {
  if (type.kind === 'run_end_encoded' && !convert.includes('run_end_encoded')) throw notSupported(type, path, 'run_end_encoded', 'into plain values');
  if ((type.kind === 'list_view' || type.kind === 'large_list_view') && !convert.includes('list_view')) throw notSupported(type, path, 'list_view', 'into a list');
  if (type.kind === 'dictionary' && type.indexType.bitWidth === 64 && !convert.includes('dictionary_index64')) {
    // apache-arrow holds 64-bit indices, but its get() mixes the BigInt index with numbers.
    throw notSupported(type, path, 'dictionary_index64', 'to int32 indices', 'a dictionary with 64-bit indices (apache-arrow cannot read through them)');
  }
  if (type.kind === 'dictionary') checkConvertible(type.valueType, convert, { parent: path, suffix: '.dictionary' });
  const children = childFields(type);
  for (let i = 0; i < children.length; i++) checkConvertible(children[i]!.type, convert, { parent: path, suffix: i });
}

/** A typed array of the offset width of raw's type over buffer i (one offset for an empty array without any). */
function offsetsOf(raw: RawArray, i: number, path: Path): Int32Array | BigInt64Array {
  const Ctor = offsetWidth(raw.type) === 8 ? BigInt64Array : Int32Array;
  const o = typed(raw.buffers[i] ?? null, Ctor as unknown as TypedArrayCtor, path, i) as Int32Array | BigInt64Array;
  // A zero-length array may have no offsets: apache-arrow wants one.
  return o.length === 0 && raw.offset + raw.length === 0 ? new Ctor(1) : o;
}

/** The children of raw as apache-arrow Data of arrowType's child types. */
function childrenOf(raw: RawArray, arrowType: arrow.DataType, convert: readonly Conversion[], path: Path): arrow.Data[] {
  const out = new Array<arrow.Data>(raw.children.length);
  for (let i = 0; i < out.length; i++) out[i] = toData(raw.children[i]!, arrowType.children[i]!.type, convert, { parent: path, suffix: i });
  return out;
}

const EMPTY = new Uint8Array(0);

function toData(raw: RawArray, arrowType: arrow.DataType, convert: readonly Conversion[], path: Path): arrow.Data {
  const { type, buffers } = raw;
  const phys = raw.offset + raw.length;
  const nc = raw.offset > 0 && raw.nullCount !== 0 ? -1 : raw.nullCount;
  const validity = buffers[0] ?? undefined;
  let data: arrow.Data;
  switch (type.kind) {
    case 'null':
      data = new arrow.Data(arrowType, 0, phys, phys);
      break;
    case 'bool':
      data = new arrow.Data(arrowType, 0, phys, nc, { 1: buffers[1] ?? EMPTY, 2: validity } as never);
      break;
    case 'binary': case 'utf8': case 'large_binary': case 'large_utf8':
      data = new arrow.Data(arrowType, 0, phys, nc, { 0: offsetsOf(raw, 1, path), 1: buffers[2] ?? EMPTY, 2: validity } as never);
      break;
    case 'binary_view': case 'utf8_view':
      data = new arrow.Data(arrowType, 0, phys, nc, { 1: buffers[1] ?? EMPTY, 2: validity } as never, [], undefined,
        buffers.slice(2, -1).map((b) => b ?? EMPTY));
      break;
    case 'list': case 'large_list': case 'map':
      data = new arrow.Data(arrowType, 0, phys, nc, { 0: offsetsOf(raw, 1, path), 2: validity } as never, childrenOf(raw, arrowType, convert, path));
      break;
    case 'fixed_size_list': case 'struct':
      data = new arrow.Data(arrowType, 0, phys, nc, { 2: validity } as never, childrenOf(raw, arrowType, convert, path));
      break;
    case 'union':
      data = new arrow.Data(arrowType, 0, phys, nc, {
        3: typed(buffers[0] ?? null, Int8Array, path, 0),
        0: type.mode === 'dense' ? typed(buffers[1] ?? null, Int32Array, path, 1) : undefined,
      } as never, childrenOf(raw, arrowType, convert, path));
      break;
    case 'dictionary': {
      const dictType = arrowType as arrow.Dictionary;
      const values = toData(raw.dictionary!, dictType.dictionary, convert, { parent: path, suffix: '.dictionary' });
      const indices = type.indexType.bitWidth === 64 ? narrowedIndices(raw, path)
        : typed(buffers[1] ?? null, dictType.indices.ArrayType as unknown as TypedArrayCtor, path, 1);
      data = new arrow.Data(arrowType, 0, phys, nc, { 1: indices, 2: validity } as never, [], new arrow.Vector([values]));
      break;
    }
    case 'list_view': case 'large_list_view':
      if (!convert.includes('list_view')) throw notSupported(type, path, 'list_view', 'into a list');
      return listViewToList(raw, arrowType, convert, pathText(path));
    case 'run_end_encoded':
      if (!convert.includes('run_end_encoded')) throw notSupported(type, path, 'run_end_encoded', 'into plain values');
      return expandRuns(raw, arrowType, convert, pathText(path));
    default:
      data = new arrow.Data(arrowType, 0, phys, nc,
        { 1: typed(buffers[1] ?? null, arrowType.ArrayType as unknown as TypedArrayCtor, path, 1), 2: validity } as never);
  }
  return raw.offset > 0 ? data.slice(raw.offset, raw.length) : data;
}

function notSupported(type: DataType, path: Path, conversion: Conversion, what: string, described = typeToString(type)): ArrowCDeviceError {
  const p = pathText(path);
  return new ArrowCDeviceError(`${p}: ${described} is not supported by apache-arrow; import with ` +
    `{ convert: ['${conversion}'] } to convert it ${what}, or with importRaw to keep it as it is`, ENOSYS, p);
}

/** A run-end encoded array as plain values of its values' type (logical slice applied). */
function expandRuns(raw: RawArray, arrowType: arrow.DataType, convert: readonly Conversion[], path: string): arrow.Data {
  const [runEnds, values] = raw.children;
  const width = byteWidth(runEnds.type);
  const valuesData = toData(values, arrowType, convert, `${path}.children[1]`);
  const source = new arrow.Vector([valuesData]);
  function* indices() {
    let run = 0;
    for (let i = raw.offset; i < raw.offset + raw.length; i++) {
      while (intAt(runEnds.buffers[1], width, runEnds.offset + run) <= i) run++;
      yield run;
    }
  }
  return gather(arrowType, source, indices());
}

/** A list view as a list: each view's values gathered in order (logical slice applied). */
function listViewToList(raw: RawArray, arrowType: arrow.DataType, convert: readonly Conversion[], path: string): arrow.Data {
  const width = offsetWidth(raw.type);
  const childType = arrowType.children[0].type;
  const values = new arrow.Vector([toData(raw.children[0], childType, convert, `${path}.children[0]`)]);
  const valid = (i: number) => raw.buffers[0] === null || ((raw.buffers[0][i >> 3] >> (i & 7)) & 1) === 1;
  const builder = nullableBuilder(arrowType);
  for (let i = raw.offset; i < raw.offset + raw.length; i++) {
    if (!valid(i)) {
      builder.append(null);
      continue;
    }
    const start = intAt(raw.buffers[1], width, i);
    const size = intAt(raw.buffers[2], width, i);
    builder.append(Array.from({ length: size }, (_, k) => values.get(start + k)));
  }
  return builder.finish().flush();
}

/**
 * An apache-arrow RecordBatch over a struct Data, made without its
 * constructor: the constructor's Schema.assign finds every field by name, so
 * its cost grows with the square of the column count, and it merges columns
 * of the same name. The result is what the constructor gives for a batch
 * whose columns all have the batch's length (checked by the tests): the
 * schema, the data, and empty batch metadata.
 */
export function toRecordBatch(schema: arrow.Schema, data: arrow.Data<arrow.Struct>): arrow.RecordBatch {
  const n = data.length;
  const sameLength = data.children.every((c) => c.length === n);
  const body = sameLength ? data : arrow.makeData({
    type: data.type, length: n, nullCount: 0, children: data.children.map((c) => (c.length === n ? c : c.slice(0, n))),
  });
  const batch = Object.create(arrow.RecordBatch.prototype) as { schema: arrow.Schema; data: arrow.Data<arrow.Struct>; _metadata: Map<string, string> };
  batch.schema = schema;
  batch.data = body;
  batch._metadata = new Map();
  return batch as unknown as arrow.RecordBatch;
}

/**
 * An apache-arrow Table of raw record batches (struct arrays of `schema`'s
 * fields), for a file this library read itself; types apache-arrow lacks
 * throw as in toArrowData.
 *
 * Ownership: the table's columns are views of the raw arrays' buffers where they can be: they stay valid as long as those buffers do; nothing to release.
 * @param schema - the schema.
 * @param batches - the raw struct arrays of the batches.
 */
export function toArrowTable(schema: Schema, batches: readonly RawArray[]): arrow.Table {
  const arrowSchema = toArrowSchema(schema);
  return new arrow.Table(arrowSchema, batches.map((b, i) => toRecordBatch(arrowSchema, toArrowData(b, [], `batches[${i}]`) as arrow.Data<arrow.Struct>)));
}
