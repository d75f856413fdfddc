// Views of a core's memory for copying an export's buffers into it
// (ts/model/flat.ts): one per typed array type, so that a source is copied
// through a view of its own type (a memcpy, no conversion and no view made
// per buffer), kept from export to export until the memory grows.

export const TYPED_ARRAYS: ReadonlySet<unknown> = new Set([Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array,
  Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]);

type TypedArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array
  | Float32Array | Float64Array | BigInt64Array | BigUint64Array;
type TypedArrayConstructor = new (buffer: ArrayBufferLike) => TypedArray;

/**
 * Views of the core's memory, one per typed array type met (a source is
 * copied through its own type's), kept from export to export until the
 * memory grows (which replaces its buffer).
 */
export class HeapViews {
  readonly u8: Uint8Array;
  readonly f64: Float64Array;
  #views = new Map<unknown, TypedArray>();
  #type: unknown = Uint8Array;
  #view: TypedArray;

  constructor(readonly buffer: ArrayBufferLike) {
    this.u8 = new Uint8Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.#views.set(Uint8Array, this.u8);
    this.#views.set(Float64Array, this.f64);
    this.#view = this.u8;
  }

  /**
   * Copies `source` to byte address `at` (aligned for its type) through the
   * view of its type; the last type used is remembered (columns of one type
   * come in runs). A type that is not one of the standard typed arrays (a
   * subclass, such as Node's Buffer) is copied as bytes: its constructor is
   * never called.
   */
  copy(source: ArrayBufferView, at: number): void {
    const type = source.constructor;
    if (type !== this.#type) {
      if (!TYPED_ARRAYS.has(type)) {
        this.u8.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), at);
        return;
      }
      let view = this.#views.get(type);
      if (view === undefined) {
        view = new (type as TypedArrayConstructor)(this.buffer);
        this.#views.set(type, view);
      }
      this.#type = type;
      this.#view = view;
    }
    const view = this.#view as Uint8Array;
    view.set(source as Uint8Array, at / view.BYTES_PER_ELEMENT);
  }
}

/** Per memory buffer (several cores may export in turn); the last one used first. */
const heaps = new WeakMap<ArrayBufferLike, HeapViews>();
let heap: HeapViews | null = null;

export function heapViews(buffer: ArrayBufferLike): HeapViews {
  if (heap !== null && heap.buffer === buffer) return heap;
  heap = heaps.get(buffer) ?? new HeapViews(buffer);
  heaps.set(buffer, heap);
  return heap;
}
