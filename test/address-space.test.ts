// Issue 10, item 1: the address space is what a pointer means. The core's own
// memory is one (its allocator, function table and checked releases); a
// fixed image in either layout is another, read by the same readers.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { ArrowCDevice } from '../ts/api.js';
import { ImageSpace, MemorySpace, releaseThrough } from '../ts/abi/address-space.js';
import { EINVAL, ENOSYS } from '../ts/abi/errors.js';
import { lp64, wasm32 } from '../ts/abi/generated/layout.js';
import type { Layout } from '../ts/abi/layout-types.js';
import { decodeMetadataAt, encodeMetadata } from '../ts/model/metadata.js';
import { readRaw } from '../ts/model/raw.js';
import { rawValues } from '../ts/model/raw-values.js';
import { readField } from '../ts/model/schema.js';
import * as pkg from '../ts/index.js';
import { bytesMark, libraryError as error } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await ArrowCDevice.load(); });
const mark = bytesMark(() => acd);

const batch = () => arrow.tableFromArrays({ x: Int32Array.from([1, 2, 3]) }).batches[0];

describe("the core's memory as an address space", () => {
  test('it bundles the memory, the wasm32 layout, the allocator and the function table', () => {
    mark();
    const space = acd.core.space;
    expect(space).toBeInstanceOf(MemorySpace);
    expect(space.layout).toBe(wasm32);
    expect(space.memory).toBe(acd.memory);
    expect(space.structs).toBe(acd.core.structs);
    const before = acd.bytesAllocated();
    const p = space.allocator!.alloc(100);
    expect(acd.bytesAllocated()).toBeGreaterThanOrEqual(before + 100);
    space.allocator!.free(p);
    expect(acd.bytesAllocated()).toBe(before);
  });

  test('its views follow the memory when it grows', () => {
    mark();
    const space = acd.core.space;
    const old = space.bytes;
    const big = space.allocator!.alloc(64 << 20);  // more than the 16 MB the core starts with
    try {
      expect(space.bytes.length).toBe(acd.memory.buffer.byteLength);
      expect(space.bytes).not.toBe(old);
      expect(space.view.byteLength).toBe(acd.memory.buffer.byteLength);
    } finally {
      space.allocator!.free(big);
    }
  });

  test('its function table knows the signature of a release callback, and refuses another kind', () => {
    mark();
    const e = acd.exportBatch(batch());
    const space = acd.core.space;
    const release = space.structs.ptr('ArrowSchema', e.schema, 'release');
    expect(space.table!.signatureOf(release)).toBe('vi');
    expect(space.table!.signatureOf(0)).toBeNull();
    expect(space.table!.signatureOf(-1)).toBeNull();
    expect(space.table!.signatureOf(1e9)).toBeNull();
    const err = error(() => space.table!.call(release, 'iii', [e.schema, 0], 'schema.release'));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe(`schema.release: function pointer ${release} is not a function of signature 'iii' in the core's table`);
    e.release();
  });

  test("release goes through the core's checked releases; released structs are left alone", () => {
    mark();
    const e = acd.exportBatch(batch());
    const space = acd.core.space;
    expect(space.release('ArrowArray', e.array)).toBe(0);
    expect(space.structs.ptr('ArrowArray', e.array, 'release')).toBe(0);
    expect(space.release('ArrowArray', e.array)).toBe(0);
    expect(space.release('ArrowSchema', e.schema)).toBe(0);
    expect(space.structs.ptr('ArrowSchema', e.schema, 'release')).toBe(0);
    e.release();  // frees the two base structs; both are released already
  });

  test('releaseThrough calls a release through the table, and marks a wrong kind released without calling it', () => {
    mark();
    const e = acd.exportDeviceBatch(batch());
    const space = acd.core.space;
    expect(releaseThrough(space, 'ArrowDeviceArray', e.array)).toBe(0);
    expect(space.structs.ptr('ArrowArray', e.array + space.structs.offsetOf('ArrowDeviceArray', 'array'), 'release')).toBe(0);
    // The schema's release replaced by the address of a function of another kind (format is no function at all).
    const format = space.structs.ptr('ArrowSchema', e.schema, 'format');
    const release = space.structs.ptr('ArrowSchema', e.schema, 'release');
    space.structs.setPtr('ArrowSchema', e.schema, 'release', format);
    expect(releaseThrough(space, 'ArrowSchema', e.schema)).toBe(EINVAL);
    expect(space.structs.ptr('ArrowSchema', e.schema, 'release')).toBe(0);
    // Put the real one back, so that the schema's memory is freed.
    space.structs.setPtr('ArrowSchema', e.schema, 'release', release);
    expect(releaseThrough(space, 'ArrowSchema', e.schema)).toBe(0);
    e.release();
  });
});

describe('a fixed image as an address space', () => {
  test('a snapshot of the memory reads as the memory did, and does not change with it', () => {
    mark();
    const e = acd.exportBatch(batch());
    const live = readField(acd.core.structs, e.schema);
    const image = new ImageSpace('snapshot', acd.core.bytes, wasm32);
    expect(image.table).toBeNull();
    expect(image.allocator).toBeNull();
    expect(readField(image.structs, e.schema)).toEqual(live);
    expect(rawValues(readRaw(image, e.array, live.type, 'copy'))).toEqual(rawValues(readRaw(acd.core, e.array, live.type, 'copy')));
    e.release();
    // Released in the memory; the image still holds the struct as it was, release callback and all.
    expect(acd.core.structs.ptr('ArrowSchema', e.schema, 'release')).toBe(0);
    expect(image.structs.ptr('ArrowSchema', e.schema, 'release')).not.toBe(0);
    const err = error(() => image.release('ArrowSchema', e.schema));
    expect(err.errno).toBe(ENOSYS);
    expect(err.message).toBe('ArrowSchema.release: snapshot has no function table, its callbacks cannot be called');
  });

  // A hand-built image, as a fixture generator would write one: an int32
  // column "x" = [7, null, 9] with metadata, its schema and array structs,
  // the strings and the buffers, laid out for `layout`.
  function buildImage(layout: Layout): { image: ImageSpace; schema: number; array: number } {
    const image = new ImageSpace(`image (${layout.pointerSize === 8 ? 'LP64' : 'wasm32'})`, new Uint8Array(1024), layout);
    const s = image.structs;
    const put = (at: number, bytes: Uint8Array) => { image.bytes.set(bytes, at); return at; };
    const text = (at: number, v: string) => put(at, new TextEncoder().encode(`${v}\0`));
    const schema = 64;
    const array = 256;
    const format = text(512, 'i');
    const name = text(520, 'x');
    const metadata = put(528, encodeMetadata(new Map([['k', 'v']]))!);
    const validity = put(576, new Uint8Array([0b101]));
    const values = put(640, new Uint8Array(new Int32Array([7, 0, 9]).buffer));
    const buffers = 704;
    s.setPtr('ArrowSchema', schema, 'format', format);
    s.setPtr('ArrowSchema', schema, 'name', name);
    s.setPtr('ArrowSchema', schema, 'metadata', metadata);
    s.setI64('ArrowSchema', schema, 'flags', 2);
    s.setI64('ArrowArray', array, 'length', 3);
    s.setI64('ArrowArray', array, 'null_count', 1);
    s.setI64('ArrowArray', array, 'n_buffers', 2);
    s.setPtr('ArrowArray', array, 'buffers', buffers);
    const ps = layout.pointerSize;
    if (ps === 4) {
      image.view.setUint32(buffers, validity, true);
      image.view.setUint32(buffers + 4, values, true);
    } else {
      image.view.setBigUint64(buffers, BigInt(validity), true);
      image.view.setBigUint64(buffers + 8, BigInt(values), true);
    }
    return { image, schema, array };
  }

  test.each([['wasm32', wasm32], ['LP64', lp64]])('a %s image is read by the same readers', (_name, layout) => {
    const { image, schema, array } = buildImage(layout);
    const field = readField(image.structs, schema);
    expect(field).toEqual({ name: 'x', type: { kind: 'int', bitWidth: 32, signed: true }, nullable: true, metadata: new Map([['k', 'v']]) });
    expect(rawValues(readRaw(image, array, field.type, 'view'))).toEqual([7, null, 9]);
    // An unreleased struct in an image: its (null) release needs no call.
    expect(image.release('ArrowArray', array)).toBe(0);
  });

  test('reads outside an image are the library error, naming the field', () => {
    const { image } = buildImage(lp64);
    let err = error(() => image.structs.ptr('ArrowSchema', 1020, 'format'));
    expect(err.errno).toBe(EINVAL);
    expect(err.message).toBe('ArrowSchema.format: address 1020 (+8 bytes) is outside the memory of 1024 bytes');
    err = error(() => decodeMetadataAt(image, 1022, 'schema.metadata'));
    expect(err.message).toBe('schema.metadata: address 1022 (+4 bytes) is outside the memory of 1024 bytes');
    image.bytes[1023] = 0x41;  // 'A', and the image ends
    err = error(() => image.structs.cString(1023, 'schema.name'));
    expect(err.message).toBe('schema.name: string at 1023 is not NUL-terminated');
  });

  test("the README's example, through the package's exports", () => {
    const { image: built, schema, array } = buildImage(lp64);
    const image = new pkg.ImageSpace('fixture', built.bytes, pkg.lp64);
    const field = pkg.readField(image.structs, schema);
    expect(pkg.rawValues(pkg.readRaw(image, array, field.type, 'copy'))).toEqual([7, null, 9]);
    // A release callback in an image cannot be called.
    image.structs.setPtr('ArrowArray', array, 'release', 5);
    expect(error(() => image.release('ArrowArray', array)).errno).toBe(ENOSYS);
  });
});
