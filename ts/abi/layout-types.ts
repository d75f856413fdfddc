// The shape of the generated layout tables (ts/abi/generated/layout.ts).

export type FieldKind = 'ptr' | 'fnptr' | 'i64' | 'i32' | 'i64x3' | 'struct';

export interface FieldLayout {
  readonly offset: number;
  readonly size: number;
  readonly kind: FieldKind;
}

export interface StructLayout {
  readonly size: number;
  readonly align: number;
  readonly fields: Readonly<Record<string, FieldLayout>>;
}

export type StructName =
  | 'ArrowSchema'
  | 'ArrowArray'
  | 'ArrowDeviceArray'
  | 'ArrowArrayStream'
  | 'ArrowDeviceArrayStream'
  | 'ArrowAsyncTask'
  | 'ArrowAsyncProducer'
  | 'ArrowAsyncDeviceStreamHandler';

export interface Layout {
  readonly pointerSize: 4 | 8;
  readonly structs: Readonly<Record<StructName, StructLayout>>;
}
