// Arguments of the wrong kind (issue 15, errors): a TypeError naming the
// method, the argument and what to pass, before anything is read or moved.
import { beforeAll, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { core } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('nothing was thrown');
};

test('a Table where a batch belongs', () => {
  const table = arrow.tableFromArrays({ x: Int32Array.of(1, 2) });
  for (const method of ['exportBatch', 'exportDeviceBatch'] as const) {
    const e = thrown(() => acd[method](table as unknown as arrow.RecordBatch));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe(`${method}: batch: expected an apache-arrow RecordBatch, found a Table: pass one of table.batches, or use exportTable for all of them`);
  }
  expect(thrown(() => acd.exportBatch(42 as unknown as arrow.RecordBatch)).message).toBe('exportBatch: batch: expected an apache-arrow RecordBatch, found 42');
  expect(acd.bytesAllocated()).toBe(0);
});

test('a BigInt, negative or fractional address, and an object that is no ImportedSchema', () => {
  const exported = acd.exportBatch(arrow.tableFromArrays({ x: Int32Array.of(1, 2) }).batches[0]!);
  try {
    const cases: [() => unknown, string][] = [
      [() => acd.importBatch(BigInt(exported.schema) as unknown as number, exported.array),
        `importBatch: schema: expected an address in wasm memory (a non-negative integer), found the bigint ${exported.schema}n (pass Number(${exported.schema}n): addresses are numbers)`],
      [() => acd.importRaw(exported.schema, -8), 'importRaw: array: expected an address in wasm memory (a non-negative integer), found -8'],
      [() => acd.importVector(exported.schema, 1.5), 'importVector: array: expected an address in wasm memory (a non-negative integer), found 1.5'],
      [() => acd.importDeviceRaw({ schema: 1 } as unknown as number, exported.array),
        'importDeviceRaw: schema: expected an address in wasm memory or an ImportedSchema (from importSchema), found an object (Object)'],
      [() => acd.importDeviceRaw(exported.schema, undefined as unknown as number), 'importDeviceRaw: deviceArray: expected an address in wasm memory (a non-negative integer), found undefined'],
      [() => acd.importSchema('16' as unknown as number), 'importSchema: ptr: expected an address in wasm memory (a non-negative integer), found a string'],
    ];
    for (const [f, message] of cases) {
      const e = thrown(f);
      expect({ type: e.constructor.name, message: e.message }).toEqual({ type: 'TypeError', message });
    }
    // Nothing was moved: the structs import as they are.
    const back = acd.importBatch(exported.schema, exported.array);
    expect(back.value.getChildAt(0)!.toArray()).toEqual(Int32Array.of(1, 2));
    back.release();
  } finally {
    exported.release();
  }
  expect(acd.bytesAllocated()).toBe(0);
});
