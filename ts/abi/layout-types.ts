// The shape of the generated layout tables (ts/abi/generated/layout.ts).

export type FieldKind = 'ptr' | 'fnptr' | 'i64' | 'i32' | 'i64x3' | 'struct';

/**
 * Where a field of a struct is: its offset, size and kind, from the compiler's `offsetof` and `sizeof`.
 */
export interface FieldLayout {
  /** Its offset in the struct, in bytes. */
  readonly offset: number;
  /** Its size in bytes. */
  readonly size: number;
  /**
   * What it holds: a pointer, a function pointer, an int64 or int32, three int64 (`reserved`), or an embedded struct.
   */
  readonly kind: FieldKind;
}

/** A struct's size, alignment and fields. */
export interface StructLayout {
  /** Its size in bytes (`sizeof`). */
  readonly size: number;
  /** Its alignment in bytes. */
  readonly align: number;
  /** Its fields by the spec's names. */
  readonly fields: Readonly<Record<string, FieldLayout>>;
}

/** The structs of the spec's header. */
export type StructName =
  | 'ArrowSchema'
  | 'ArrowArray'
  | 'ArrowDeviceArray'
  | 'ArrowArrayStream'
  | 'ArrowDeviceArrayStream'
  | 'ArrowAsyncTask'
  | 'ArrowAsyncProducer'
  | 'ArrowAsyncDeviceStreamHandler';

/**
 * The layout of every struct of the header for one pointer width: `wasm32` (4-byte pointers) or `lp64` (8-byte).
 */
export interface Layout {
  /** The pointer width in bytes. */
  readonly pointerSize: 4 | 8;
  /** Each struct's layout. */
  readonly structs: Readonly<Record<StructName, StructLayout>>;
}
