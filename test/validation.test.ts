// Bad input through the public import path: every malformed struct gets an
// ArrowCDeviceError that names the place, the instance is never trapped, the
// structs stay with the caller, and the core keeps working afterwards.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice, ExportedArray } from '../ts/api.js';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { core, roundtripBatch } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const batch = () => new arrow.Table({
  i: arrow.vectorFromArray([1, null, 3, 4, 5], new arrow.Int32()),
  s: arrow.vectorFromArray(['a', 'bb', null, 'dddd', 'é'], new arrow.Utf8()),
  l: arrow.vectorFromArray([[1], [], null, [2, 3], [4]], new arrow.List(new arrow.Field('item', new arrow.Int16(), true))),
}).batches[0];

const st = () => acd.core.structs;
const child = (array: number, i: number) => st().ptrAt(st().ptr('ArrowArray', array, 'children') + i * st().layout.pointerSize);
const schemaChild = (schema: number, i: number) => st().ptrAt(st().ptr('ArrowSchema', schema, 'children') + i * st().layout.pointerSize);
const buffer = (array: number, i: number) => st().ptrAt(st().ptr('ArrowArray', array, 'buffers') + i * st().layout.pointerSize);
const setBuffer = (array: number, i: number, value: number) => {
  const at = st().ptr('ArrowArray', array, 'buffers') + i * st().layout.pointerSize;
  acd.core.view.setUint32(at, value, true);
};

/** Breaks an exported batch with `mutate`, imports it, and returns the error. */
function importBroken(mutate: (e: ExportedArray) => void, options: Parameters<ArrowCDevice['importBatch']>[2] = {}): ArrowCDeviceError {
  const start = acd.bytesAllocated();
  const exported = acd.exportBatch(batch());
  const saved = acd.core.bytes.slice(0); // restore everything afterwards, so release works
  mutate(exported);
  let error: unknown = null;
  try {
    acd.importBatch(exported.schema, exported.array, options).release();
  } catch (e) {
    error = e;
  }
  // The structs were left with the caller: restore and release them.
  acd.core.bytes.set(saved.subarray(0, acd.core.bytes.length));
  expect(st().ptr('ArrowArray', exported.array, 'release')).not.toBe(0);
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
  expect(error).toBeInstanceOf(ArrowCDeviceError);
  // The instance still works.
  roundtripBatch(acd, batch(), 'view');
  return error as ArrowCDeviceError;
}

describe('schema', () => {
  test('released schema', () => {
    const e = importBroken((x) => st().setPtr('ArrowSchema', x.schema, 'release', 0));
    expect(e.message).toMatch(/released/);
  });
  test('format pointer outside the memory', () => {
    const e = importBroken((x) => st().setPtr('ArrowSchema', schemaChild(x.schema, 1), 'format', 0x7ffffff0));
    expect(e.message).toMatch(/children\[1\]/);
  });
  test('malformed format string is quoted', () => {
    const e = importBroken((x) => {
      const p = st().ptr('ArrowSchema', schemaChild(x.schema, 0), 'format');
      acd.core.bytes.set([0x64, 0x3a, 0x31, 0], p); // "d:1" is not a complete decimal format
    });
    expect(e.message).toMatch(/children\[0\]/);
    expect(e.message).toMatch(/'d:1'/);
  });
  test('n_children that does not match the type', () => {
    const e = importBroken((x) => st().setI64('ArrowSchema', schemaChild(x.schema, 2), 'n_children', 0));
    expect(e.message).toMatch(/children\[2\]/);
  });
  test('a schema cycle', () => {
    const e = importBroken((x) => {
      const list = schemaChild(x.schema, 2);
      acd.core.view.setUint32(st().ptr('ArrowSchema', list, 'children'), list, true);
    });
    expect(e.message).toMatch(/cycle|deeper/);
  });
  test('metadata that runs past the end of memory', () => {
    const e = importBroken((x) => {
      const scratch = acd.core.alloc(16);
      acd.core.view.setInt32(scratch, 1, true);
      acd.core.view.setInt32(scratch + Int32Array.BYTES_PER_ELEMENT, 0x7fffff00, true);
      st().setPtr('ArrowSchema', x.schema, 'metadata', scratch);
    });
    expect(e.message).toMatch(/metadata/);
  });
});

describe('array', () => {
  test('released array', () => {
    const e = importBroken((x) => st().setPtr('ArrowArray', x.array, 'release', 0));
    expect(e.message).toMatch(/released/);
  });
  test('negative length', () => {
    const e = importBroken((x) => st().setI64('ArrowArray', child(x.array, 0), 'length', -1));
    expect(e.message).toMatch(/children\[0\].*length/);
  });
  test('null_count larger than the length', () => {
    const e = importBroken((x) => st().setI64('ArrowArray', child(x.array, 0), 'null_count', 99));
    expect(e.message).toMatch(/children\[0\].*null_count/);
  });
  test('a data buffer that is NULL', () => {
    const e = importBroken((x) => setBuffer(child(x.array, 0), 1, 0));
    expect(e.message).toMatch(/children\[0\]\.buffers\[1\]/);
  });
  test('a buffer pointer outside the memory', () => {
    const e = importBroken((x) => setBuffer(child(x.array, 1), 2, 0x7ffffff0));
    expect(e.message).toMatch(/children\[1\]\.buffers\[2\]/);
  });
  test('a last offset past the data', () => {
    const e = importBroken((x) => {
      const offsets = buffer(child(x.array, 1), 1);
      acd.core.view.setInt32(offsets + 5 * Int32Array.BYTES_PER_ELEMENT, 0x7fffff00, true);
    });
    expect(e.message).toMatch(/children\[1\]/);
  });
  test('a length larger than the buffers', () => {
    const e = importBroken((x) => {
      st().setI64('ArrowArray', x.array, 'length', 1 << 30);
      for (let i = 0; i < 3; i++) st().setI64('ArrowArray', child(x.array, i), 'length', 1 << 30);
    });
    expect(e.message).toMatch(/buffers|expected/);
  });
  test('a child pointer that is NULL', () => {
    const e = importBroken((x) => acd.core.view.setUint32(st().ptr('ArrowArray', x.array, 'children') + st().layout.pointerSize, 0, true));
    expect(e.message).toMatch(/children\[1\]/);
  });
  test('a release callback that is not a function of the table', () => {
    const e = importBroken((x) => st().setPtr('ArrowArray', child(x.array, 0), 'release', 0));
    expect(e.message).toMatch(/children\[0\].*released/);
  });
  test('non-decreasing offsets: full validation catches what default does not read', () => {
    const mutate = (x: ExportedArray) => {
      const offsets = buffer(child(x.array, 1), 1);
      acd.core.view.setInt32(offsets + 2 * Int32Array.BYTES_PER_ELEMENT, 4, true); // [0,1,4,3,...]
    };
    const e = importBroken(mutate, { validate: 'full' });
    expect(e.message).toMatch(/children\[1\].*offset/);
  });
  test('invalid UTF-8 is caught by full validation', () => {
    const e = importBroken((x) => {
      const data = buffer(child(x.array, 1), 2);
      acd.core.bytes[data] = 0xff;
    }, { validate: 'full' });
    expect(e.message).toMatch(/children\[1\].*UTF-8/);
  });
  test('a validation level that does not exist', () => {
    const e = importBroken(() => {}, { validate: 'paranoid' as never });
    expect(e.message).toMatch(/validate: expected none, minimal, default or full/);
  });
  test('a mode that does not exist', () => {
    const e = importBroken(() => {}, { mode: 'borrow' as never });
    expect(e.message).toMatch(/mode: expected 'copy' or 'view'/);
  });
});

test('an address outside the memory', () => {
  expect(() => acd.importBatch(0x7ffffff0, 0x7ffffff0)).toThrow(/outside the memory/);
  expect(() => acd.importSchema(0)).toThrow(/outside the memory/);
});
