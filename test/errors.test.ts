// The shape of the library's error on real failures (issue 15, item 5): `code`
// is the errno's name and `errno` its number, `path` names the failing struct
// (from the C validator, which reports it apart from the message, and from
// the TypeScript readers), `level` the validation level and `layout` the
// struct layout where they apply; JSON.stringify gives all of them.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { ImageSpace } from '../ts/abi/address-space.js';
import { ArrowCDeviceError, EINVAL, EIO, ENOMEM, ENOSYS, ERANGE, withContext } from '../ts/abi/errors.js';
import { lp64 } from '../ts/abi/generated/layout.js';
import { readField } from '../ts/model/schema.js';
import { readRaw } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { caseImage } from '../ts/fixtures/corpus.js';
import { fixtureCases } from '../ts/fixtures/cases.js';
import { parseFixtureImage } from '../ts/fixtures/parse.js';
import { bytesMark, core, libraryError } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => {
  acd = await core();
});
const mark = bytesMark(() => acd);

const batch = () => new arrow.Table({
  a: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()),
  s: arrow.vectorFromArray(['x', 'yy', 'zzz'], new arrow.Utf8()),
}).batches[0];

const s = () => acd.core.structs;
/** Address of child i of an ArrowSchema or ArrowArray. */
const childOf = (struct: 'ArrowSchema' | 'ArrowArray', ptr: number, i: number) =>
  s().ptrAt(s().ptr(struct, ptr, 'children') + i * s().layout.pointerSize);
/** The slot of buffer i of an ArrowArray. */
const bufferSlot = (array: number, i: number) => s().ptr('ArrowArray', array, 'buffers') + i * s().layout.pointerSize;

describe('the C validator reports the failing struct path', () => {
  test("a corrupted child's format: the schema's path, code 'EINVAL'", () => {
    mark();
    const exported = acd.exportBatch(batch());
    const child = childOf('ArrowSchema', exported.schema, 1);
    const format = s().ptr('ArrowSchema', child, 'format');
    s().setPtr('ArrowSchema', child, 'format', 0);
    const e = libraryError(() => acd.importSchema(exported.schema));
    expect([e.code, e.errno, e.path]).toEqual(['EINVAL', EINVAL, 'root.children[1].format']);
    expect(e.message).toBe('root.children[1].format: expected a format string, found NULL');
    s().setPtr('ArrowSchema', child, 'format', format);
    exported.release();
  });

  test.each(['default', 'full'] as const)("a corrupted child's buffer: its path and the level (%s)", (level) => {
    mark();
    const exported = acd.exportBatch(batch());
    const child = childOf('ArrowArray', exported.array, 1);
    const slot = bufferSlot(child, 1);
    const offsets = s().ptrAt(slot);
    s().view.setUint32(slot, 0xfffffff0, true); // offsets outside memory
    const e = libraryError(() => acd.importBatch(exported.schema, exported.array, { validate: level }));
    expect([e.code, e.path, e.level]).toEqual(['EINVAL', 'root.children[1].buffers[1]', level]);
    expect(e.message.startsWith('root.children[1].buffers[1]: ')).toBe(true);
    // JSON-safe, for the CLI's --json and for logs.
    expect(JSON.parse(JSON.stringify(e))).toEqual({ name: 'ArrowCDeviceError', code: 'EINVAL', errno: EINVAL, message: e.message, path: 'root.children[1].buffers[1]', level });
    s().view.setUint32(slot, offsets, true);
    exported.release();
  });

  test("at minimal the validator leaves buffers to the reader, which names the same buffer (no level: not a validation)", () => {
    mark();
    const exported = acd.exportBatch(batch());
    const slot = bufferSlot(childOf('ArrowArray', exported.array, 1), 1);
    const offsets = s().ptrAt(slot);
    s().view.setUint32(slot, 0xfffffff0, true);
    const e = libraryError(() => acd.importBatch(exported.schema, exported.array, { validate: 'minimal' }));
    expect([e.code, e.path, e.level, e.layout]).toEqual(['EINVAL', 'array.children[1].buffers[1]', undefined, 'wasm32']);
    s().view.setUint32(slot, offsets, true);
    exported.release();
  });

  test('a content error found only at full names the node and the level', () => {
    mark();
    const exported = acd.exportBatch(batch());
    const child = childOf('ArrowArray', exported.array, 1);
    const offsets = s().ptrAt(bufferSlot(child, 1));
    acd.core.view.setInt32(offsets + 4, 5, true); // offsets 0, 5, 3: not increasing
    const e = libraryError(() => acd.importBatch(exported.schema, exported.array, { validate: 'full' }));
    expect([e.code, e.path, e.level]).toEqual(['EINVAL', 'root.children[1].buffers[1]', 'full']);
    acd.importBatch(exported.schema, exported.array, { validate: 'default' }).release();
    exported.release();
  });

  test('a device array with a buffer on another device: the path of that buffer', () => {
    mark();
    const exported = acd.exportDeviceBatch(batch(), { device: 'cuda:1' });
    const array = exported.array + s().offsetOf('ArrowDeviceArray', 'array');
    const e = libraryError(() => acd.importBatch(exported.schema, array, { validate: 'minimal' }));
    expect(e.message).toMatch(/^array: root\.children\[0\]\.buffers\[1\]: 0x8[0-9a-f]{7} is memory of device cuda:1/);
    expect(e.path).toBe('root.children[0].buffers[1]');
    exported.release();
  });

  test('a failure with no place has no path (none is left from an earlier failure)', () => {
    mark();
    const exported = acd.exportBatch(batch());
    s().setPtr('ArrowSchema', childOf('ArrowSchema', exported.schema, 0), 'format', 0);
    expect(libraryError(() => acd.importSchema(exported.schema)).path).toBe('root.children[0].format');
    exported.release();
    const e = libraryError(() => acd.core.formatCheck('xyz'));
    expect(e.message).toBe("format 'xyz': unknown format string");
    expect(e.path).toBeUndefined();
    expect(Object.keys(JSON.parse(JSON.stringify(e))).sort()).toEqual(['code', 'errno', 'message', 'name']);
  });
});

describe('the TypeScript readers report the path', () => {
  test("validate: 'none' and a child's buffer outside memory: the reader's path", () => {
    mark();
    const exported = acd.exportBatch(batch());
    const child = childOf('ArrowArray', exported.array, 1);
    s().view.setUint32(bufferSlot(child, 2), 0xfffffff0, true);
    const e = libraryError(() => acd.importBatch(exported.schema, exported.array, { validate: 'none' }));
    expect([e.code, e.path, e.layout]).toEqual(['EINVAL', 'array.children[1].buffers[2]', 'wasm32']);
    expect(e.level).toBeUndefined();
    exported.release();
  });

  test("what apache-arrow would read out of bounds: the node's path (the check before it gets an array)", () => {
    mark();
    const exported = acd.exportBatch(batch());
    acd.core.structs.setI64('ArrowArray', exported.array, 'length', 1500);
    const e = libraryError(() => acd.importBatch(exported.schema, exported.array, { validate: 'none' }));
    expect([e.message, e.path]).toEqual(['array.children[0]: length 3 is shorter than the 1500 slots the struct refers to', 'array.children[0]']);
    exported.release();
  });

  test("a device array that the policy refuses: the field's path", () => {
    mark();
    const exported = acd.exportDeviceBatch(batch(), { device: 'cuda:0' });
    const e = libraryError(() => acd.importDeviceBatch(exported.schema, exported.array, { device: 'reject' }));
    expect([e.code, e.path]).toEqual(['ENODEV', 'device_type']);
    exported.release();
  });

  test('an LP64 image: the path and the layout', () => {
    const image = new ImageSpace('image', new Uint8Array(256), lp64);
    const schema = 64;
    image.structs.setPtr('ArrowSchema', schema, 'format', 250); // a string that runs off the image
    image.bytes.fill(0x41, 250);
    const e = libraryError(() => readField(image.structs, schema));
    expect([e.code, e.path, e.layout]).toEqual(['EINVAL', 'schema.format', 'lp64']);
    const array = 128;
    image.structs.setI64('ArrowArray', array, 'length', 1);
    image.structs.setI64('ArrowArray', array, 'n_buffers', 2);
    image.structs.setPtr('ArrowArray', array, 'buffers', 4000);
    const r = libraryError(() => readRaw(image, array, t.int32(), 'copy'));
    expect([r.path, r.layout]).toEqual(['array.buffers', 'lp64']);
  });

  test.each(['wasm32', 'lp64'] as const)('a corrupt fixture image (%s): the layout its header names', (layout) => {
    const bytes = caseImage(fixtureCases()[0]!, layout);
    bytes[12] = 1; // flags, which must be 0
    const e = libraryError(() => parseFixtureImage(bytes, 'int8'));
    expect([e.message, e.layout, e.path]).toEqual(['int8: expected flags 0', layout, undefined]);
    // Before the header names a layout, there is none to say.
    expect(libraryError(() => parseFixtureImage(bytes.subarray(0, 8), 'int8')).layout).toBeUndefined();
  });

  test("another module's struct: the module's name before the message, the path kept", () => {
    mark();
    const memory = new WebAssembly.Memory({ initial: 1 });
    const from = acd.foreign({ name: 'producer', memory });
    const at = 64;
    // A live ArrowSchema (release set) whose format is NULL, in the other module's memory.
    from.space.structs.setPtr('ArrowSchema', at, 'release', 1);
    const e = libraryError(() => acd.importSchema(at, { from }));
    expect([e.message, e.path, e.layout]).toEqual(['producer: schema.format: expected a string, found NULL', 'schema.format', undefined]);
  });
});

describe('the class', () => {
  test('JSON.stringify gives name, code, errno, message and the details that are set', () => {
    const e = new ArrowCDeviceError('root.children[0].length: bad', EINVAL, { path: 'root.children[0].length', level: 'full', layout: 'lp64' });
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      name: 'ArrowCDeviceError', code: 'EINVAL', errno: 28, message: 'root.children[0].length: bad',
      path: 'root.children[0].length', level: 'full', layout: 'lp64',
    });
    expect(JSON.parse(JSON.stringify(new ArrowCDeviceError('plain', ENOMEM)))).toEqual({ name: 'ArrowCDeviceError', code: 'ENOMEM', errno: ENOMEM, message: 'plain' });
    // Details that do not apply are absent, not undefined.
    expect(Object.keys(new ArrowCDeviceError('plain'))).not.toContain('path');
  });

  test('withContext keeps errno, path, level and layout', () => {
    const e = withContext(new ArrowCDeviceError('bad', ERANGE, { path: 'array.buffers[1]', level: 'default', layout: 'wasm32' }), 'batch 2');
    expect(e.toJSON()).toEqual({ name: 'ArrowCDeviceError', code: 'ERANGE', errno: ERANGE, message: 'batch 2: bad', path: 'array.buffers[1]', level: 'default', layout: 'wasm32' });
    expect(withContext(e, 'x', EIO).code).toBe('EIO');
  });
});

test('errno names: every constant has its name, another number E<number>', () => {
  expect(new ArrowCDeviceError('x', ENOSYS).code).toBe('ENOSYS');
  expect(new ArrowCDeviceError('x', 7).code).toBe('E7');
});
