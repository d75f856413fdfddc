// Issue 9, items 3, 4 and 9: a corrupted callback, a struct tree that is a
// DAG, and a misaligned struct are each refused with an ArrowCDeviceError that
// names the place, never a trap; the instance keeps working and no byte leaks.
// Longer than 400 lines because the three items share the corrupting helpers;
// each test is named after its item.
import { beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice, ExportedArray } from '../ts/api.js';
import { ArrowCDeviceError, EINVAL } from '../ts/abi/errors.js';
import { TABLE_SIGNATURES } from '../ts/abi/generated/wasm-table.js';
import type { StructName } from '../ts/abi/layout-types.js';
import { CAsyncConsumer, CBatchSource, cStream, startCAsyncProducer } from '../ts/stream/c-backed.js';
import { parseTableSignatures } from '../ts/abi/wasm-table.js';
import { core, roundtripBatch } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await core(); });

const st = () => acd.core.structs;
const childOf = (struct: 'ArrowSchema' | 'ArrowArray', base: number, i: number) =>
  st().ptrAt(st().ptr(struct, base, 'children') + i * st().layout.pointerSize);
const setChild = (struct: 'ArrowSchema' | 'ArrowArray', base: number, i: number, value: number) =>
  acd.core.view.setUint32(st().ptr(struct, base, 'children') + i * st().layout.pointerSize, value, true);

const batch = () => new arrow.Table({
  i: arrow.vectorFromArray([1, null, 3], new arrow.Int32()),
  s: arrow.vectorFromArray(['a', 'bb', null], new arrow.Utf8()),
  d: arrow.vectorFromArray(['x', 'y', 'x'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
}).batches[0];

// ---- the corruptions ------------------------------------------------------------

const SLOTS = TABLE_SIGNATURES.split(',');
/** A table slot of the core whose function has this wasm signature. */
const slotWith = (signature: string) => {
  const i = SLOTS.findIndex((s, k) => k > 0 && s === signature);
  if (i < 0) throw new Error(`no table slot of signature ${signature}`);
  return i;
};
const OUT_OF_RANGE = 123456;

/** A corrupted value; `found` is what the message must say of it. NULL is "released" for a release. */
interface Corruption { label: string; value: () => number; found: RegExp; isNull?: boolean }

/** The corruptions of a callback of wasm signature `signature`; `other` is one of ours of another role. */
function corruptions(signature: string, other?: { value: () => number; found: RegExp }): Corruption[] {
  const wrong = signature === 'vi' ? 'iii' : 'vi';
  const list: Corruption[] = [
    { label: 'an index out of the table', value: () => OUT_OF_RANGE, found: /found index 123456, which is not one/ },
    // One of ours may be named by its role, any other by its index.
    { label: `a function of another signature ('${wrong}')`, value: () => slotWith(wrong),
      found: new RegExp(`found (index ${slotWith(wrong)}, which is not one|the \\w+ of a struct \\w+ \\(function table index ${slotWith(wrong)}\\))`) },
  ];
  if (other) list.push({ label: 'a function of the same signature made for another struct', ...other });
  list.push({ label: 'NULL', value: () => 0, found: /found NULL|released/, isNull: true });
  return list;
}

/** Our own callbacks, read from live structs: an array's release, a schema's. */
function ownRelease(kind: 'ArrowSchema' | 'ArrowArray'): number {
  const exported = acd.exportBatch(batch());
  const value = kind === 'ArrowSchema' ? st().ptr('ArrowSchema', exported.schema, 'release') : st().ptr('ArrowArray', exported.array, 'release');
  exported.release();
  return value;
}
function ownStreamCallback(kind: 'array' | 'device', field: string): number {
  const stream = cStream(acd.core, CBatchSource.generator(acd.core), kind);
  const value = st().ptr(kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream', stream.ptr, field);
  stream.release();
  return value;
}

const SCHEMA_RELEASE = /expected a function void\(struct ArrowSchema\*\)/;
const ARRAY_RELEASE = /expected a function void\(struct ArrowArray\*\)/;

/** Runs `attempt` on a corrupted field, expects the library's error, restores, and checks the instance. */
function expectRefused(at: number, corruption: Corruption, attempt: () => void, where: RegExp, expected: RegExp): void {
  const saved = acd.core.view.getUint32(at, true);
  const before = acd.bytesAllocated();
  acd.core.view.setUint32(at, corruption.value(), true);
  let error: unknown = null;
  try {
    attempt();
  } catch (e) {
    error = e;
  }
  acd.core.view.setUint32(at, saved, true);
  expect(error).toBeInstanceOf(ArrowCDeviceError);
  const message = (error as Error).message;
  expect(message).toMatch(where);
  if (!corruption.isNull) expect(message).toMatch(expected);
  expect(message).toMatch(corruption.found);
  // Nothing was taken or leaked: the structs are still the caller's.
  expect(acd.bytesAllocated()).toBe(before);
}

// ---- item 3: schemas, arrays, device arrays ---------------------------------------

type Target = { name: string; struct: 'ArrowSchema' | 'ArrowArray'; at: (x: ExportedArray, device: boolean) => number; where: RegExp };
const arrayOf = (x: ExportedArray, device: boolean) => device ? x.array + st().offsetOf('ArrowDeviceArray', 'array') : x.array;
const TARGETS: Target[] = [
  { name: 'the schema', struct: 'ArrowSchema', at: (x) => x.schema, where: /root\.release: / },
  { name: 'a child schema', struct: 'ArrowSchema', at: (x) => childOf('ArrowSchema', x.schema, 1), where: /root\.children\[1\]\.release: / },
  { name: 'a dictionary schema', struct: 'ArrowSchema', at: (x) => st().ptr('ArrowSchema', childOf('ArrowSchema', x.schema, 2), 'dictionary'), where: /root\.children\[2\]\.dictionary\.release: / },
  { name: 'the array', struct: 'ArrowArray', at: arrayOf, where: /root\.release: / },
  { name: 'a child array', struct: 'ArrowArray', at: (x, d) => childOf('ArrowArray', arrayOf(x, d), 1), where: /root\.children\[1\]\.release: / },
  { name: 'a dictionary array', struct: 'ArrowArray', at: (x, d) => st().ptr('ArrowArray', childOf('ArrowArray', arrayOf(x, d), 2), 'dictionary'), where: /root\.children\[2\]\.dictionary\.release: / },
];

describe.each([
  ['importBatch', false, (x: ExportedArray, validate: 'minimal' | 'default' | 'full') => acd.importBatch(x.schema, x.array, { validate }).release()],
  ['importDeviceBatch', true, (x: ExportedArray, validate: 'minimal' | 'default' | 'full') => acd.importDeviceBatch(x.schema, x.array, { validate }).release()],
] as const)('item 3: %s', (route, device, importIt) => {
  test.each(TARGETS.map((t) => [t.name, t] as const))('item 3: a corrupted release of %s is an error naming it, not a trap', (_, target) => {
    const start = acd.bytesAllocated();
    const struct = target.struct;
    const other = struct === 'ArrowSchema'
      ? { value: () => ownRelease('ArrowArray'), found: /found the release of a struct ArrowArray/ }
      : { value: () => ownRelease('ArrowSchema'), found: /found the release of a struct ArrowSchema/ };
    for (const corruption of corruptions('vi', other)) {
      for (const validate of ['minimal', 'default', 'full'] as const) {
        const exported = device ? acd.exportDeviceBatch(batch()) : acd.exportBatch(batch());
        const at = target.at(exported, device) + st().offsetOf(struct, 'release');
        // A NULL release means "released": the message names the struct, not its release.
        const where = corruption.isNull ? new RegExp(target.where.source.replace('\\.release', '')) : target.where;
        expectRefused(at, corruption, () => importIt(exported, validate), where, struct === 'ArrowSchema' ? SCHEMA_RELEASE : ARRAY_RELEASE);
        expect(st().ptr(struct, target.at(exported, device), 'release')).not.toBe(0);
        exported.release();
        expect(acd.bytesAllocated()).toBe(start);
      }
    }
    roundtripBatch(acd, batch(), 'copy');
    roundtripBatch(acd, batch(), 'view');
    expect(acd.bytesAllocated()).toBe(start);
    expect(route).toMatch(/import/);
  });
});

test('item 3: at validate none, the root release is still checked before the import takes it', () => {
  const start = acd.bytesAllocated();
  for (const corruption of corruptions('vi', { value: () => ownRelease('ArrowSchema'), found: /found the release of a struct ArrowSchema/ })) {
    const exported = acd.exportBatch(batch());
    expectRefused(exported.array + st().offsetOf('ArrowArray', 'release'), corruption,
      () => acd.importBatch(exported.schema, exported.array, { validate: 'none' }).release(), /^root(\.release)?: /, ARRAY_RELEASE);
    exported.release();
  }
  expect(acd.bytesAllocated()).toBe(start);
  roundtripBatch(acd, batch(), 'copy');
});

test('item 3: a release that cannot be called is reported by core.arrayRelease, never called, and the struct marked released', () => {
  const start = acd.bytesAllocated();
  const exported = acd.exportBatch(batch());
  const at = exported.array + st().offsetOf('ArrowArray', 'release');
  const saved = acd.core.view.getUint32(at, true);
  acd.core.view.setUint32(at, OUT_OF_RANGE, true);
  expect(acd.core.arrayRelease(exported.array)).toBe(EINVAL);
  expect(acd.core.lastErrorMessage()).toMatch(/^release: expected a function void\(struct ArrowArray\*\) in the function table, found index 123456/);
  expect(st().ptr('ArrowArray', exported.array, 'release')).toBe(0); // the consumer's side is done
  // The producer's resources leaked: give the struct its callback back to free them here.
  acd.core.view.setUint32(at, saved, true);
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
});

test('item 3: our release, reached through a struct that is not ours, touches nothing', () => {
  const start = acd.bytesAllocated();
  const a = acd.exportBatch(batch());
  const b = acd.exportBatch(batch());
  // b's release is ours, its private_data is not one of our array blocks.
  const at = b.array + st().offsetOf('ArrowArray', 'private_data');
  const saved = acd.core.view.getUint32(at, true);
  const release = st().ptr('ArrowArray', b.array, 'release');
  for (const foreign of [a.schema, st().ptr('ArrowSchema', a.schema, 'private_data'), st().ptr('ArrowArray', a.array, 'private_data') + 16, 0x7ffffff0]) {
    acd.core.view.setUint32(at, foreign, true);
    expect(acd.core.arrayRelease(b.array)).toBe(EINVAL);
    expect(acd.core.lastErrorMessage()).toMatch(/returned without marking the array released/);
    st().setPtr('ArrowArray', b.array, 'release', release);
  }
  acd.core.view.setUint32(at, saved, true);
  a.release();
  b.release();
  expect(acd.bytesAllocated()).toBe(start);
  roundtripBatch(acd, batch(), 'view');
});

// ---- item 3: pull streams ------------------------------------------------------------

const STREAM_FIELDS = [
  { field: 'get_schema', signature: 'iii', other: 'get_next', prototype: (s: string) => `int\\(struct ${s}\\*, struct ArrowSchema\\*\\)` },
  { field: 'get_next', signature: 'iii', other: 'get_schema', prototype: (s: string) => `int\\(struct ${s}\\*, struct Arrow(Device)?Array\\*\\)` },
  { field: 'get_last_error', signature: 'ii', other: null, prototype: (s: string) => `const char\\*\\(struct ${s}\\*\\)` },
  { field: 'release', signature: 'vi', other: null, prototype: (s: string) => `void\\(struct ${s}\\*\\)` },
] as const;

describe.each(['array', 'device'] as const)('item 3: %s streams', (kind) => {
  const struct: StructName = kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream';
  test.each(STREAM_FIELDS.map((f) => [f.field, f] as const))('item 3: a corrupted %s is an error naming it, not a trap', (field, f) => {
    const start = acd.bytesAllocated();
    const other = f.other !== null
      ? { value: () => ownStreamCallback(kind, f.other!), found: new RegExp(`found the ${f.other} of a struct ${struct}`) }
      : f.field === 'release'
        ? { value: () => ownRelease('ArrowArray'), found: /found the release of a struct ArrowArray/ }
        : { value: () => ownStreamCallback(kind === 'array' ? 'device' : 'array', 'get_last_error'), found: /found the get_last_error of a struct Arrow(Device)?ArrayStream/ };
    for (const corruption of corruptions(f.signature, other)) {
      const stream = cStream(acd.core, CBatchSource.generator(acd.core), kind);
      const importIt = () => (kind === 'array' ? acd.importArrayStream(stream.ptr) : acd.importDeviceArrayStream(stream.ptr)).release();
      // A NULL release means a released stream; any other NULL callback is named.
      const where = corruption.isNull && field === 'release' ? /released/ : new RegExp(`^${field}: `);
      expectRefused(stream.ptr + st().offsetOf(struct, field), corruption, importIt, where, new RegExp(`expected a function ${f.prototype(struct)}`));
      // The stream went back to the caller, whole.
      expect(st().ptr(struct, stream.ptr, 'release')).not.toBe(0);
      stream.release();
    }
    expect(acd.bytesAllocated()).toBe(start);
    // The instance works: a stream reads to its end.
    const stream = cStream(acd.core, CBatchSource.generator(acd.core, { batches: 2 }), kind);
    const reader = kind === 'array' ? acd.importArrayStream(stream.ptr) : acd.importDeviceArrayStream(stream.ptr);
    expect(reader.readAll().map((b) => b.numRows)).toEqual([5, 5]);
    reader.release();
    stream.release();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('item 3: get_last_error\'s message is read only when it is a string in memory', () => {
    const start = acd.bytesAllocated();
    const end = acd.core.memory.buffer.byteLength;
    acd.core.bytes.fill(0x61, end - 64, end); // no NUL before the end of memory
    for (const [message, found] of [[0x7ffffff0, /get_last_error gave an invalid string/], [end - 64, /get_last_error gave an invalid string/]] as const) {
      const lastError = acd.core.addFunction(() => message, 'ii');
      const stream = cStream(acd.core, CBatchSource.generator(acd.core, { failAt: 1, failMessage: 'boom' }), kind);
      st().setPtr(struct, stream.ptr, 'get_last_error', lastError);
      const reader = kind === 'array' ? acd.importArrayStream(stream.ptr) : acd.importDeviceArrayStream(stream.ptr);
      expect(reader.next().done).toBe(false);
      let error: unknown = null;
      try {
        reader.next();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ArrowCDeviceError);
      expect((error as Error).message).toMatch(/^batch 1: get_next: error \d+ /);
      expect((error as Error).message).toMatch(found);
      reader.release();
      stream.release();
      acd.core.removeFunction(lastError);
    }
    expect(acd.bytesAllocated()).toBe(start);
  });
});

// ---- item 3: the async device stream ---------------------------------------------------

const HANDLER_FIELDS = [
  { field: 'on_schema', signature: 'iii', prototype: /int\(struct ArrowAsyncDeviceStreamHandler\*, struct ArrowSchema\*\)/ },
  { field: 'on_next_task', signature: 'iiii', prototype: /int\(struct ArrowAsyncDeviceStreamHandler\*, struct ArrowAsyncTask\*, const char\*\)/ },
  { field: 'on_error', signature: 'viiii', prototype: /void\(struct ArrowAsyncDeviceStreamHandler\*, int, const char\*, const char\*\)/ },
  { field: 'release', signature: 'vi', prototype: /void\(struct ArrowAsyncDeviceStreamHandler\*\)/ },
] as const;

test.each(HANDLER_FIELDS.map((f) => [f.field, f] as const))('item 3: a handler with a corrupted %s is refused by the C producer and by the trampolines', (field, f) => {
  const start = acd.bytesAllocated();
  const s = acd.core.stream;
  const other = f.signature === 'iii' ? { value: () => ownStreamCallback('array', 'get_next'), found: /found the get_next of a struct ArrowArrayStream/ }
    : f.signature === 'vi' ? { value: () => ownRelease('ArrowArray'), found: /found the release of a struct ArrowArray/ } : undefined;
  for (const corruption of corruptions(f.signature, other)) {
    const consumer = new CAsyncConsumer(acd.core);
    const source = CBatchSource.generator(acd.core);
    const at = consumer.handler + st().offsetOf('ArrowAsyncDeviceStreamHandler', field);
    expectRefused(at, corruption, () => startCAsyncProducer(acd.core, consumer.handler, source), new RegExp(`^handler\\.${field}: `), f.prototype);
    // The trampolines that TypeScript producers call: EINVAL and a message, no call.
    const saved = acd.core.view.getUint32(at, true);
    acd.core.view.setUint32(at, corruption.value(), true);
    const code = field === 'on_schema' ? s.asyncHandlerCallOnSchema(consumer.handler, 0)
      : field === 'on_next_task' ? s.asyncHandlerCallOnNextTask(consumer.handler, 0, 0)
        : field === 'on_error' ? s.asyncHandlerCallOnError(consumer.handler, EINVAL, 0, 0)
          : s.asyncHandlerCallRelease(consumer.handler);
    acd.core.view.setUint32(at, saved, true);
    expect(code).toBe(EINVAL);
    expect(s.streamLastError()).toMatch(new RegExp(`^${field}: `));
    expect(s.streamLastError()).toMatch(corruption.found);
    expect(consumer.state()).toMatchObject({ schemaReceived: false, released: false });
    source.release();
    consumer.release();
  }
  expect(acd.bytesAllocated()).toBe(start);
  roundtripBatch(acd, batch(), 'copy');
});

test.each([
  ['producer', 'ArrowAsyncProducer', 'request', 'vij', /void\(struct ArrowAsyncProducer\*, int64_t\)/],
  ['producer', 'ArrowAsyncProducer', 'cancel', 'vi', /void\(struct ArrowAsyncProducer\*\)/],
  ['task', 'ArrowAsyncTask', 'extract_data', 'iii', /int\(struct ArrowAsyncTask\*, struct ArrowDeviceArray\*\)/],
] as const)('item 3: a %s with a corrupted %s is refused by the trampoline, not called', (owner, struct, field, signature, prototype) => {
  const start = acd.bytesAllocated();
  const s = acd.core.stream;
  const other = signature === 'vi' ? { value: () => ownRelease('ArrowArray'), found: /found the release of a struct ArrowArray/ }
    : signature === 'iii' ? { value: () => ownStreamCallback('device', 'get_next'), found: /found the get_next of a struct ArrowDeviceArrayStream/ } : undefined;
  const ptr = acd.core.alloc(st().size(struct));
  for (const corruption of corruptions(signature, other)) {
    st().setPtr(struct, ptr, field, corruption.value());
    const code = field === 'request' ? s.asyncProducerCallRequest(ptr, 1)
      : field === 'cancel' ? s.asyncProducerCallCancel(ptr) : s.asyncTaskCallExtractData(ptr, 0);
    expect(code).toBe(EINVAL);
    expect(() => acd.core.checkStream(code)).toThrow(ArrowCDeviceError);
    expect(s.streamLastError()).toMatch(new RegExp(`^${owner}\\.${field}: `));
    expect(s.streamLastError()).toMatch(prototype);
    expect(s.streamLastError()).toMatch(corruption.found);
  }
  acd.core.free(ptr);
  expect(acd.bytesAllocated()).toBe(start);
  roundtripBatch(acd, batch(), 'copy');
});

// ---- item 3: the table parser, at build time and at load time -------------------------

test('item 3: a wasmBinary supplied at load is parsed with the same parser, and its callbacks are checked', async () => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { embeddedWasm } = await import('../ts/abi/wasm-table.js');
  const { ArrowCDevice } = await import('../ts/api.js');
  const binary = embeddedWasm(readFileSync(join(__dirname, '..', 'ts', 'abi', 'generated', 'core.js'), 'utf8'));
  expect(parseTableSignatures(binary)).toEqual(SLOTS);
  expect(SLOTS.filter((x) => x === 'vi').length).toBeGreaterThan(5);
  const other = await ArrowCDevice.load({ wasmBinary: binary });
  const exported = other.exportBatch(batch());
  const s = other.core.structs;
  const child = s.ptrAt(s.ptr('ArrowArray', exported.array, 'children'));
  const release = s.ptr('ArrowArray', child, 'release');
  s.setPtr('ArrowArray', child, 'release', OUT_OF_RANGE);
  expect(() => other.importBatch(exported.schema, exported.array)).toThrow(/root\.children\[0\]\.release: expected a function void\(struct ArrowArray\*\)/);
  s.setPtr('ArrowArray', child, 'release', release);
  expect(() => parseTableSignatures(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(/not a wasm binary/);
  await expect(ArrowCDevice.load({ wasmBinary: binary.slice(0, 200) })).rejects.toThrow(/^wasmBinary: its function table could not be read: wasm: unexpected end/);
  exported.release();
});

// ---- item 4: a C Data tree is a tree ----------------------------------------------------

const twoInts = () => new arrow.Table({
  a: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()),
  b: arrow.vectorFromArray([4, 5, 6], new arrow.Int32()),
  s: arrow.vectorFromArray(['p', 'q', 'r'], new arrow.Utf8()),
  d: arrow.vectorFromArray(['x', 'y', 'x'], new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32())),
}).batches[0];

/** Imports an export after `mutate` (undone afterwards); returns the error. */
function refusedImport(mutate: (x: ExportedArray) => () => void, validate: 'minimal' | 'default' | 'full' = 'default'): Error {
  const start = acd.bytesAllocated();
  const exported = acd.exportBatch(twoInts());
  const undo = mutate(exported);
  let error: unknown = null;
  try {
    acd.importBatch(exported.schema, exported.array, { validate }).release();
  } catch (e) {
    error = e;
  }
  undo();
  exported.release();
  expect(acd.bytesAllocated()).toBe(start);
  expect(error).toBeInstanceOf(ArrowCDeviceError);
  roundtripBatch(acd, twoInts(), 'view');
  return error as Error;
}

/** Points children[i] of a struct at another struct; returns the undo. */
function alias(struct: 'ArrowSchema' | 'ArrowArray', base: number, i: number, target: number): () => void {
  const saved = childOf(struct, base, i);
  setChild(struct, base, i, target);
  return () => setChild(struct, base, i, saved);
}

describe('item 4: a struct reached twice is refused, naming both paths', () => {
  test.each(['minimal', 'default', 'full'] as const)('item 4: two array children that are one struct (validate %s)', (validate) => {
    const e = refusedImport((x) => alias('ArrowArray', x.array, 1, childOf('ArrowArray', x.array, 0)), validate);
    expect(e.message).toMatch(/root\.children\[1\]: the same struct ArrowArray as root\.children\[0\] \(0x[0-9a-f]+\): a C Data tree is a tree/);
  });
  test('item 4: two schema children that are one struct', () => {
    const e = refusedImport((x) => alias('ArrowSchema', x.schema, 1, childOf('ArrowSchema', x.schema, 0)));
    expect(e.message).toMatch(/root\.children\[1\]: the same struct ArrowSchema as root\.children\[0\] /);
  });
  test('item 4: a dictionary that is another field\'s struct (schema and array)', () => {
    const dictionaryOf = (struct: 'ArrowSchema' | 'ArrowArray', base: number) => st().ptr(struct, childOf(struct, base, 3), 'dictionary');
    const redirect = (struct: 'ArrowSchema' | 'ArrowArray', base: number) => {
      const at = childOf(struct, base, 3) + st().offsetOf(struct, 'dictionary');
      const saved = dictionaryOf(struct, base);
      acd.core.view.setUint32(at, childOf(struct, base, 2), true); // utf8 's', the dictionary's own type
      return () => acd.core.view.setUint32(at, saved, true);
    };
    expect(refusedImport((x) => redirect('ArrowSchema', x.schema)).message)
      .toMatch(/root\.children\[3\]\.dictionary: the same struct ArrowSchema as root\.children\[2\] /);
    expect(refusedImport((x) => redirect('ArrowArray', x.array)).message)
      .toMatch(/root\.children\[3\]\.dictionary: the same struct ArrowArray as root\.children\[2\] /);
  });
  test('item 4: a cycle names the ancestor', () => {
    const e = refusedImport((x) => alias('ArrowSchema', x.schema, 1, x.schema));
    expect(e.message).toMatch(/root\.children\[1\]: the same struct ArrowSchema as root /);
  });

  test('item 4: a DAG of depth 30 (2^30 paths, 31 structs) is refused at once', () => {
    const start = acd.bytesAllocated();
    const depth = 30;
    const release = acd.core.addFunction((ptr: number) => st().setPtr('ArrowSchema', ptr, 'release', 0), 'vi');
    const strings = acd.core.alloc(8);
    acd.core.bytes.set([0x2b, 0x73, 0, 0x69, 0], strings); // "+s", "i"
    const size = st().size('ArrowSchema');
    const nodes = Array.from({ length: depth + 1 }, () => acd.core.alloc(size + 8));
    nodes.forEach((node, level) => {
      const leaf = level === depth;
      st().setPtr('ArrowSchema', node, 'format', leaf ? strings + 3 : strings);
      st().setI64('ArrowSchema', node, 'n_children', leaf ? 0 : 2);
      // Both children of a level are the next level's one struct.
      st().setPtr('ArrowSchema', node, 'children', leaf ? 0 : node + size);
      if (!leaf) {
        acd.core.view.setUint32(node + size, nodes[level + 1], true);
        acd.core.view.setUint32(node + size + 4, nodes[level + 1], true);
      }
      st().setPtr('ArrowSchema', node, 'release', release);
    });
    const began = performance.now();
    let error: unknown = null;
    try {
      acd.importSchema(nodes[0]).release();
    } catch (e) {
      error = e;
    }
    const ms = performance.now() - began;
    expect(error).toBeInstanceOf(ArrowCDeviceError);
    const deepest = 'root' + '.children[0]'.repeat(depth - 1);
    expect((error as Error).message).toContain(`${deepest}.children[1]: the same struct ArrowSchema as ${deepest}.children[0] `);
    expect(ms).toBeLessThan(50);
    for (const node of nodes) acd.core.free(node);
    acd.core.free(strings);
    acd.core.removeFunction(release);
    expect(acd.bytesAllocated()).toBe(start);
  });
});

// ---- item 9: misaligned structs -----------------------------------------------------------

describe('item 9: a misaligned struct pointer is an error, not undefined behaviour', () => {
  /** A copy of the struct at ptr, `shift` bytes past an aligned address; returns [copy, block]. */
  const misalignedCopy = (struct: StructName, ptr: number, shift: number): [number, number] => {
    const size = st().size(struct);
    const block = acd.core.alloc(size + 16);
    acd.core.bytes.copyWithin(block + shift, ptr, ptr + size);
    return [block + shift, block];
  };

  test.each([1, 4])('item 9: a schema at an address +%i', (shift) => {
    const start = acd.bytesAllocated();
    const exported = acd.exportBatch(batch());
    const [copy, block] = misalignedCopy('ArrowSchema', exported.schema, shift);
    expect(() => acd.importSchema(copy)).toThrow(new RegExp(`^root: expected a struct ArrowSchema aligned to 8 bytes, found 0x${copy.toString(16)}$`));
    expect(() => acd.importBatch(copy, exported.array)).toThrow(ArrowCDeviceError);
    acd.core.free(block);
    exported.release();
    expect(acd.bytesAllocated()).toBe(start);
  });

  test.each([1, 4])('item 9: a child schema and a child array at an address +%i', (shift) => {
    const e1 = refusedImport((x) => {
      const [copy, block] = misalignedCopy('ArrowSchema', childOf('ArrowSchema', x.schema, 1), shift);
      const undo = alias('ArrowSchema', x.schema, 1, copy);
      return () => { undo(); acd.core.free(block); };
    });
    expect(e1.message).toMatch(/root\.children\[1\]: expected a struct ArrowSchema aligned to 8 bytes/);
    const e2 = refusedImport((x) => {
      const [copy, block] = misalignedCopy('ArrowArray', childOf('ArrowArray', x.array, 1), shift);
      const undo = alias('ArrowArray', x.array, 1, copy);
      return () => { undo(); acd.core.free(block); };
    });
    expect(e2.message).toMatch(/root\.children\[1\]: expected a struct ArrowArray aligned to 8 bytes/);
  });

  test('item 9: an array, a device array and a pointer array at an odd address', () => {
    const e = refusedImport((x) => {
      const at = x.array + st().offsetOf('ArrowArray', 'children');
      const saved = acd.core.view.getUint32(at, true);
      acd.core.view.setUint32(at, saved + 2, true);
      return () => acd.core.view.setUint32(at, saved, true);
    });
    expect(e.message).toMatch(/root\.children: expected 4 pointers aligned to 4 bytes/);
    const start = acd.bytesAllocated();
    const exported = acd.exportDeviceBatch(batch());
    const [copy, block] = misalignedCopy('ArrowDeviceArray', exported.array, 4);
    expect(() => acd.importDeviceBatch(exported.schema, copy)).toThrow(/expected a struct ArrowArray aligned to 8 bytes/);
    expect(() => acd.importDeviceBatch(exported.schema, copy, { device: 'keep' })).toThrow(ArrowCDeviceError);
    acd.core.free(block);
    exported.release();
    expect(acd.bytesAllocated()).toBe(start);
  });
});

describe('a stream callback of the right signature in the wrong slot', () => {
  // get_schema and get_next take (stream, out) alike: a get_next in the get_schema slot writes an
  // ArrowDeviceArray (104 bytes on wasm32) where an ArrowSchema (48) was asked for. It wrote past
  // the allocation and corrupted the next block (found by the fuzz suite: the device memory
  // registry). The core's calls give the producer room for the largest struct, then move out the one asked for.
  const room = () => Math.max(st().size('ArrowSchema'), st().size('ArrowArray'), st().size('ArrowDeviceArray'));
  const calls = [
    ['ArrowArrayStream', 'get_schema', 'ArrowSchema', (s: number, o: number) => acd.core.stream.arrayStreamGetSchema(s, o)],
    ['ArrowArrayStream', 'get_next', 'ArrowArray', (s: number, o: number) => acd.core.stream.arrayStreamGetNext(s, o)],
    ['ArrowDeviceArrayStream', 'get_schema', 'ArrowSchema', (s: number, o: number) => acd.core.stream.deviceArrayStreamGetSchema(s, o)],
  ] as const;
  test.each(calls)('%s.%s writes no byte past the %s asked for', (struct, slot, asked, call) => {
    const start = acd.bytesAllocated();
    const stream = acd.core.alloc(st().size(struct));
    const area = acd.core.alloc(room() + 64);
    acd.core.bytes.fill(0, stream, stream + st().size(struct));
    // A callback that fills the largest struct there is with a pattern, as a get_next of a device stream would.
    const wide = acd.core.addFunction((_s: number, out: number) => { acd.core.bytes.fill(0xab, out, out + room()); return 0; }, 'iii');
    const noop = acd.core.addFunction(() => 0, 'iii');
    const lastError = acd.core.addFunction(() => 0, 'ii');
    const release = acd.core.addFunction((p: number) => st().setPtr(struct, p, 'release', 0), 'vi');
    try {
      st().setPtr(struct, stream, 'get_schema', slot === 'get_schema' ? wide : noop);
      st().setPtr(struct, stream, 'get_next', slot === 'get_next' ? wide : noop);
      st().setPtr(struct, stream, 'get_last_error', lastError);
      st().setPtr(struct, stream, 'release', release);
      if (struct === 'ArrowDeviceArrayStream') acd.core.view.setInt32(stream + st().offsetOf(struct, 'device_type'), 1, true);
      acd.core.bytes.fill(0, area, area + room() + 64);
      const code = call(stream, area);
      expect([code, code === 0 ? "" : acd.core.stream.streamLastError()]).toEqual([0, ""]);
      const written = acd.core.bytes.subarray(area, area + room() + 64);
      // The struct asked for was moved out whole; nothing after it was touched.
      expect(written.subarray(0, st().size(asked)).every((b) => b === 0xab)).toBe(true);
      expect(written.subarray(st().size(asked)).every((b) => b === 0)).toBe(true);
    } finally {
      acd.core.removeFunction(wide);
      acd.core.removeFunction(noop);
      acd.core.removeFunction(lastError);
      acd.core.removeFunction(release);
      acd.core.free(area);
      acd.core.free(stream);
    }
    expect(acd.bytesAllocated()).toBe(start);
  });
});
