// Consuming: ArrowSchema / ArrowArray structs in the core's memory read into
// the type model and apache-arrow Data, after the C validator has checked
// them. Each node is built at its physical start (offset 0, length
// offset + length) and then sliced by arrow-js, which applies the C offset to
// every buffer and child the way the columnar format defines it.

import * as arrow from 'apache-arrow';
import type { Core } from './core.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from './errors.js';
import { byteWidth } from './export.js';
import { typeFromFormat } from './format.js';
import { decodeMetadata } from './metadata.js';
import type { StructReader } from './structs.js';
import { typeToString, type DataType, type Field } from './types.js';

/** view: zero-copy typed arrays over wasm memory; copy: owned copies. */
export type ImportMode = 'copy' | 'view';

/** Reads a validated ArrowSchema tree. */
export function readField(s: StructReader, ptr: number, path = 'schema'): Field {
  const format = s.cString(s.ptr('ArrowSchema', ptr, 'format'), `${path}.format`);
  const namePtr = s.ptr('ArrowSchema', ptr, 'name');
  const name = namePtr === 0 ? '' : s.cString(namePtr, `${path}.name`);
  const metadataPtr = s.ptr('ArrowSchema', ptr, 'metadata');
  const metadata = metadataPtr === 0 ? null : decodeMetadata(new Uint8Array(s.view.buffer, metadataPtr));
  const flags = s.i64('ArrowSchema', ptr, 'flags');
  const n = s.i64('ArrowSchema', ptr, 'n_children');
  const childArray = s.ptr('ArrowSchema', ptr, 'children');
  const children: Field[] = [];
  for (let i = 0; i < n; i++) {
    children.push(readField(s, s.ptrAt(childArray + i * s.layout.pointerSize), `${path}.children[${i}]`));
  }
  const dictionaryPtr = s.ptr('ArrowSchema', ptr, 'dictionary');
  const dictionaryValue = dictionaryPtr === 0 ? undefined : readField(s, dictionaryPtr, `${path}.dictionary`).type;
  const type = typeFromFormat(format, children, flags, dictionaryValue);
  return { name, type, nullable: (flags & 2) !== 0, metadata };
}

type TypedArrayCtor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): ArrayBufferView & ArrayLike<number | bigint>;
  new (length: number): ArrayBufferView & ArrayLike<number | bigint>;
  readonly BYTES_PER_ELEMENT: number;
};

/** Takes buffers out of memory as views or copies, checking bounds and alignment. */
class BufferTaker {
  constructor(private readonly s: StructReader, readonly mode: ImportMode) {}

  take<C extends TypedArrayCtor>(address: number, bytes: number, Ctor: C, what: string): InstanceType<C> {
    const count = Math.floor(bytes / Ctor.BYTES_PER_ELEMENT);
    if (bytes === 0) return new Ctor(0) as InstanceType<C>;
    this.s.checkRange(address, bytes, what);
    const buffer = this.s.view.buffer;
    if (this.mode === 'copy') {
      return new Ctor(buffer.slice(address, address + count * Ctor.BYTES_PER_ELEMENT), 0, count) as InstanceType<C>;
    }
    if (address % Ctor.BYTES_PER_ELEMENT !== 0) {
      throw new ArrowCDeviceError(`${what}: address ${address} is not aligned to ${Ctor.BYTES_PER_ELEMENT} bytes, ` +
        'which a zero-copy view needs; import it in copy mode', EINVAL);
    }
    return new Ctor(buffer, address, count) as InstanceType<C>;
  }
}

/** Reads a (validated) ArrowArray tree into apache-arrow Data of arrowType. */
export function readData(core: Core, ptr: number, type: DataType, arrowType: arrow.DataType, mode: ImportMode): arrow.Data {
  return new DataReader(core.structs, new BufferTaker(core.structs, mode)).read(ptr, type, arrowType, 'array');
}

class DataReader {
  constructor(private readonly s: StructReader, private readonly t: BufferTaker) {}

  read(ptr: number, type: DataType, arrowType: arrow.DataType, path: string): arrow.Data {
    const s = this.s;
    const length = s.i64('ArrowArray', ptr, 'length');
    const offset = s.i64('ArrowArray', ptr, 'offset');
    const nullCount = s.i64('ArrowArray', ptr, 'null_count');
    const nBuffers = s.i64('ArrowArray', ptr, 'n_buffers');
    const buffers = s.ptr('ArrowArray', ptr, 'buffers');
    const childArray = s.ptr('ArrowArray', ptr, 'children');
    const phys = offset + length;
    const buffer = (i: number) => s.ptrAt(buffers + i * s.layout.pointerSize);
    const child = (i: number) => s.ptrAt(childArray + i * s.layout.pointerSize);
    const take = <C extends TypedArrayCtor>(i: number, bytes: number, Ctor: C) =>
      this.t.take(buffer(i), bytes, Ctor, `${path}.buffers[${i}]`);
    const validity = () => (buffer(0) === 0 ? undefined : take(0, Math.ceil(phys / 8), Uint8Array));
    // The C null_count describes the logical slice; the physical node's is unknown.
    const nc = offset > 0 && nullCount !== 0 ? -1 : nullCount;
    const make = (bufs: Partial<Record<0 | 1 | 2 | 3, ArrayBufferView | undefined>>, children: arrow.Data[] = [],
      dictionary?: arrow.Vector, variadic?: Uint8Array[]) =>
      new arrow.Data(arrowType, 0, phys, nc, bufs as never, children, dictionary, variadic);

    let data: arrow.Data;
    switch (type.kind) {
      case 'null':
        data = new arrow.Data(arrowType, 0, phys, phys);
        break;
      case 'bool':
        data = make({ 1: take(1, Math.ceil(phys / 8), Uint8Array), 2: validity() });
        break;
      case 'binary': case 'utf8': case 'large_binary': case 'large_utf8': {
        const offsets = this.offsets(take, buffer(1), phys, type.kind.startsWith('large'));
        const last = Number(offsets[phys]);
        data = make({ 0: offsets, 1: take(2, last, Uint8Array), 2: validity() });
        break;
      }
      case 'binary_view': case 'utf8_view': {
        const nVariadic = nBuffers - 3;
        const sizesAt = buffer(nBuffers - 1);
        if (nVariadic > 0) s.checkRange(sizesAt, nVariadic * 8, `${path}.buffers[${nBuffers - 1}]`);
        const variadic: Uint8Array[] = [];
        for (let i = 0; i < nVariadic; i++) {
          variadic.push(take(2 + i, Number(s.view.getBigInt64(sizesAt + i * 8, true)), Uint8Array));
        }
        data = make({ 1: take(1, phys * 16, Uint8Array), 2: validity() }, [], undefined, variadic);
        break;
      }
      case 'list': case 'large_list': case 'map': {
        const offsets = this.offsets(take, buffer(1), phys, type.kind === 'large_list');
        const childField = type.kind === 'map' ? type.entries : type.child;
        const values = this.read(child(0), childField.type, arrowType.children[0].type, `${path}.children[0]`);
        data = make({ 0: offsets, 2: validity() }, [values]);
        break;
      }
      case 'fixed_size_list': {
        const values = this.read(child(0), type.child.type, arrowType.children[0].type, `${path}.children[0]`);
        data = make({ 2: validity() }, [values]);
        break;
      }
      case 'struct':
        data = make({ 2: validity() }, type.children.map((f, i) =>
          this.read(child(i), f.type, arrowType.children[i].type, `${path}.children[${i}]`)));
        break;
      case 'union': {
        const children = type.children.map((f, i) =>
          this.read(child(i), f.type, arrowType.children[i].type, `${path}.children[${i}]`));
        const typeIds = this.t.take(buffer(0), phys, Int8Array, `${path}.buffers[0]`);
        const valueOffsets = type.mode === 'dense' ? this.t.take(buffer(1), phys * 4, Int32Array, `${path}.buffers[1]`) : undefined;
        data = make({ 0: valueOffsets, 3: typeIds }, children);
        break;
      }
      case 'dictionary': {
        const dictType = arrowType as arrow.Dictionary;
        const indices = take(1, phys * byteWidth(type), dictType.indices.ArrayType as unknown as TypedArrayCtor);
        const dictionaryPtr = s.ptr('ArrowArray', ptr, 'dictionary');
        const values = this.read(dictionaryPtr, type.valueType, dictType.dictionary, `${path}.dictionary`);
        data = make({ 1: indices, 2: validity() }, [], new arrow.Vector([values]));
        break;
      }
      case 'list_view': case 'large_list_view': case 'run_end_encoded':
        throw new ArrowCDeviceError(`${path}: ${typeToString(type)} is not supported by apache-arrow`, ENOSYS);
      default:
        data = make({ 1: take(1, phys * byteWidth(type), arrowType.ArrayType as unknown as TypedArrayCtor), 2: validity() });
    }
    return offset > 0 ? data.slice(offset, length) : data;
  }

  /** n + 1 offsets; a zero-length array may have none (then [0]). */
  private offsets(take: <C extends TypedArrayCtor>(i: number, bytes: number, Ctor: C) => InstanceType<C>,
    address: number, n: number, large: boolean): Int32Array | BigInt64Array {
    if (n === 0 && address === 0) return large ? new BigInt64Array(1) : new Int32Array(1);
    const Ctor = large ? BigInt64Array : Int32Array;
    return take(1, (n + 1) * Ctor.BYTES_PER_ELEMENT, Ctor as unknown as TypedArrayCtor) as unknown as Int32Array | BigInt64Array;
  }
}
