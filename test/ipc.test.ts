// The IPC reader (ts/io/ipc/): every gold IPC file (file and stream format) read
// into raw arrays equals the same case's integration JSON, schema and values,
// the 0.17.1 unions included (which arrow-js misreads); errors for truncated,
// corrupt and big-endian input and compressed bodies, made by hand with apache-arrow's
// flatbuffers builders; concatenation (delta dictionaries) on every gold
// column; and roundtripRaw (ts/roundtrip/roundtrip.ts) on every gold case, from the
// JSON and from both IPC formats, in copy and view mode.
// Longer than 400 lines because the hand-made corrupt inputs share one set of
// flatbuffers builders with the gold-file cases.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as flatbuffers from 'flatbuffers';
import { BodyCompression } from 'apache-arrow/fb/body-compression';
import { BodyCompressionMethod } from 'apache-arrow/fb/body-compression-method';
import { Buffer as FbBuffer } from 'apache-arrow/fb/buffer';
import { CompressionType } from 'apache-arrow/fb/compression-type';
import { DictionaryBatch } from 'apache-arrow/fb/dictionary-batch';
import { DictionaryEncoding } from 'apache-arrow/fb/dictionary-encoding';
import { Endianness } from 'apache-arrow/fb/endianness';
import { Field as FbField } from 'apache-arrow/fb/field';
import { FieldNode } from 'apache-arrow/fb/field-node';
import { Int } from 'apache-arrow/fb/int';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { MetadataVersion } from 'apache-arrow/fb/metadata-version';
import { RecordBatch } from 'apache-arrow/fb/record-batch';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { Type } from 'apache-arrow/fb/type';
import { Union } from 'apache-arrow/fb/union';
import { UnionMode } from 'apache-arrow/fb/union-mode';
import { Utf8 } from 'apache-arrow/fb/utf8';
import type { ArrowCDevice } from '../ts/api.js';
import { ArrowCDeviceError, EINVAL, ENOSYS } from '../ts/abi/errors.js';
import { concatRaw } from '../ts/model/concat.js';
import { readIpc } from '../ts/io/ipc/read.js';
import { readIntegrationJson, type IntegrationFile } from '../ts/io/json/read.js';
import type { RawArray } from '../ts/model/raw.js';
import { compareRaw, rawValues } from '../ts/model/raw-values.js';
import { roundtripRaw } from '../ts/roundtrip/roundtrip.js';
import { fieldsEqual, metadataEqual, typeToString, type EqualOptions, type Field, type Schema } from '../ts/model/types.js';
import { lz4Frame, prefixed, zstdFrame } from './compression-helpers.js';
import { core, GOLD, goldFiles, goldLevel, MODES } from './helpers.js';

const gunzip = (path: string) => gunzipSync(readFileSync(path)).toString('utf8');
const jsonOf = (ipcPath: string) => ipcPath.replace(/\.(arrow_file|stream)$/, '.json.gz');
const describeField = (f: Field) => `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;

function schemaDifferences(a: Schema, b: Schema, options: EqualOptions = {}): string[] {
  const out: string[] = [];
  if (a.fields.length !== b.fields.length) out.push(`expected ${a.fields.length} fields, found ${b.fields.length}`);
  a.fields.forEach((f, i) => {
    const g = b.fields[i];
    if (g !== undefined && !fieldsEqual(f, g, options)) out.push(`field ${i}: expected ${describeField(f)}, found ${describeField(g)}`);
  });
  if (!metadataEqual(a.metadata, b.metadata)) out.push('schema metadata differs');
  return out;
}

/** Schema, batch count and values (compareRaw: null counts included). */
function fileDifferences(expected: IntegrationFile, found: IntegrationFile, options: EqualOptions = {}): string[] {
  const out = schemaDifferences(expected.schema, found.schema, options);
  if (expected.batches.length !== found.batches.length) out.push(`expected ${expected.batches.length} batches, found ${found.batches.length}`);
  expected.batches.forEach((batch, i) => {
    const other = found.batches[i];
    if (other === undefined) return;
    // compareRaw compares types with their names: without names, compare the columns' values.
    if (options.checkNames === false) batch.children.forEach((c, k) => out.push(...compareRaw(c, { ...other.children[k]!, type: c.type }, `batches[${i}][${k}]`)));
    else out.push(...compareRaw(batch, other, `batches[${i}]`));
  });
  return out;
}

/** Whether every buffer of a raw tree is a view of `bytes`, or one the reader had to make. */
function buffersOf(raw: RawArray, out: Uint8Array[] = []): Uint8Array[] {
  for (const b of raw.buffers) if (b !== null) out.push(b);
  raw.children.forEach((c) => buffersOf(c, out));
  if (raw.dictionary !== null) buffersOf(raw.dictionary, out);
  return out;
}

function expectError(f: () => unknown, code: number, message: RegExp): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ArrowCDeviceError);
  expect((error as ArrowCDeviceError).message).toMatch(message);
  expect((error as ArrowCDeviceError).errno).toBe(code);
}

const files = goldFiles();
const CANONICAL_NAMES = /generated_map_non_canonical\.stream$/;

describe('gold files', () => {
  test('all 66 IPC files are there', () => {
    expect(files).toHaveLength(66);
  });

  test.each(files)('%s: the same schema and values as the JSON', (name, path) => {
    const bytes = readFileSync(path);
    const ipc = readIpc(bytes);
    const json = readIntegrationJson(gunzip(jsonOf(path)));
    if (CANONICAL_NAMES.test(name)) {
      // This gold stream was written with the map's canonical child names (entries/key/value);
      // its .arrow_file and .json keep the case's own (some_entries/some_key/some_value).
      expect(fileDifferences(json, ipc, { checkNames: false })).toEqual([]);
      expect(typeToString(ipc.schema.fields[0]!.type)).toBe('map<key: utf8 not null, value: int32>');
    } else {
      expect(fileDifferences(json, ipc)).toEqual([]);
    }
    // Zero-copy: the buffers are views of the input, but for the few the reader makes up.
    const all = ipc.batches.flatMap((b) => buffersOf(b));
    const views = all.filter((b) => b.buffer === bytes.buffer);
    expect(views.length).toBeGreaterThanOrEqual(all.length - all.filter((b) => b.byteLength <= 8).length);
  });
});

// ---- messages built by hand --------------------------------------------------------

type Build = (b: flatbuffers.Builder) => number;

/** An encapsulated message: continuation marker (optional), length, Message flatbuffer padded to 8, body. */
function message(headerType: MessageHeader, build: Build, body: Uint8Array = new Uint8Array(0), version = MetadataVersion.V5, continuation = true): Uint8Array {
  const b = new flatbuffers.Builder(256);
  const header = build(b);
  b.finish(Message.createMessage(b, version, headerType, header, BigInt(body.byteLength), 0));
  const meta = b.asUint8Array();
  const prefix = continuation ? 8 : 4;
  const metaLength = Math.ceil((prefix + meta.byteLength) / 8) * 8 - prefix;
  const out = new Uint8Array(prefix + metaLength + body.byteLength);
  const dv = new DataView(out.buffer);
  if (continuation) dv.setUint32(0, 0xffffffff, true);
  dv.setInt32(prefix - 4, metaLength, true);
  out.set(meta, prefix);
  out.set(body, prefix + metaLength);
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.byteLength), 0);
  return out;
}

/** A stream of messages, with the end-of-stream marker of its framing. */
const stream = (messages: Uint8Array[], continuation = true) =>
  concatBytes([...messages, continuation ? new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0]) : new Uint8Array(4)]);

function field(name: string, typeType: Type, type: Build, children: Build[] = [], dictionary?: Build): Build {
  return (b) => {
    const n = b.createString(name);
    const t = type(b);
    const kids = FbField.createChildrenVector(b, children.map((c) => c(b)));
    const d = dictionary?.(b);
    FbField.startField(b);
    FbField.addName(b, n);
    FbField.addNullable(b, true);
    FbField.addTypeType(b, typeType);
    FbField.addType(b, t);
    FbField.addChildren(b, kids);
    if (d !== undefined) FbField.addDictionary(b, d);
    return FbField.endField(b);
  };
}
const int = (bitWidth: number): Build => (b) => Int.createInt(b, bitWidth, true);
const intField = (name: string, bitWidth = 32) => field(name, Type.Int, int(bitWidth));
const utf8 = (b: flatbuffers.Builder) => Utf8.createUtf8(b);
const unionField = (name: string, children: Build[]) =>
  field(name, Type.Union, (b) => Union.createUnion(b, UnionMode.Sparse, Union.createTypeIdsVector(b, children.map((_, i) => i))), children);
const dictionaryField = (name: string, id: number) => field(name, Type.Utf8, utf8, [], (b) => {
  const index = Int.createInt(b, 8, true);
  DictionaryEncoding.startDictionaryEncoding(b);
  DictionaryEncoding.addId(b, BigInt(id));
  DictionaryEncoding.addIndexType(b, index);
  return DictionaryEncoding.endDictionaryEncoding(b);
});

function schemaMessage(fields: Build[], endianness = Endianness.Little, version = MetadataVersion.V5, continuation = true): Uint8Array {
  return message(MessageHeader.Schema, (b) => {
    const v = FbSchema.createFieldsVector(b, fields.map((f) => f(b)));
    FbSchema.startSchema(b);
    if (endianness !== Endianness.Little) FbSchema.addEndianness(b, endianness);
    FbSchema.addFields(b, v);
    return FbSchema.endSchema(b);
  }, undefined, version, continuation);
}

/** Buffers laid end to end, each padded to 8 bytes: the body and each one's [offset, length]. */
function body(buffers: ArrayLike<number>[]): { bytes: Uint8Array; layout: [number, number][] } {
  const layout: [number, number][] = [];
  let at = 0;
  for (const b of buffers) {
    layout.push([at, b.length]);
    at += Math.ceil(b.length / 8) * 8;
  }
  const bytes = new Uint8Array(at);
  buffers.forEach((b, i) => bytes.set(Array.from(b), layout[i]![0]));
  return { bytes, layout };
}

interface BatchSpec {
  length: number;
  nodes: [number, number][];
  buffers: ArrayLike<number>[];
  /** Replaces the computed [offset, length] of the buffers. */
  layout?: [number, number][];
  codec?: CompressionType;
}

function batchTable(b: flatbuffers.Builder, spec: BatchSpec, layout: [number, number][]): number {
  RecordBatch.startNodesVector(b, spec.nodes.length);
  for (const [length, nulls] of [...spec.nodes].reverse()) FieldNode.createFieldNode(b, BigInt(length), BigInt(nulls));
  const nodes = b.endVector();
  RecordBatch.startBuffersVector(b, layout.length);
  for (const [offset, length] of [...layout].reverse()) FbBuffer.createBuffer(b, BigInt(offset), BigInt(length));
  const buffers = b.endVector();
  const compression = spec.codec === undefined ? 0 : BodyCompression.createBodyCompression(b, spec.codec, BodyCompressionMethod.BUFFER);
  RecordBatch.startRecordBatch(b);
  RecordBatch.addLength(b, BigInt(spec.length));
  RecordBatch.addNodes(b, nodes);
  RecordBatch.addBuffers(b, buffers);
  if (spec.codec !== undefined) RecordBatch.addCompression(b, compression);
  return RecordBatch.endRecordBatch(b);
}

function batchMessage(spec: BatchSpec, version = MetadataVersion.V5, continuation = true): Uint8Array {
  const { bytes, layout } = body(spec.buffers);
  return message(MessageHeader.RecordBatch, (b) => batchTable(b, spec, spec.layout ?? layout), bytes, version, continuation);
}

function dictionaryMessage(id: number, spec: BatchSpec, isDelta: boolean): Uint8Array {
  const { bytes, layout } = body(spec.buffers);
  return message(MessageHeader.DictionaryBatch, (b) => {
    const data = batchTable(b, spec, layout);
    DictionaryBatch.startDictionaryBatch(b);
    DictionaryBatch.addId(b, BigInt(id));
    DictionaryBatch.addData(b, data);
    if (isDelta) DictionaryBatch.addIsDelta(b, true);
    return DictionaryBatch.endDictionaryBatch(b);
  }, bytes);
}

const le32 = (...values: number[]) => new Uint8Array(Int32Array.from(values).buffer);
const text = (s: string) => Array.from(Buffer.from(s));
/** An int32 column of 3 slots, the middle one null: [7, null, -9]. */
const INT32_BATCH: BatchSpec = { length: 3, nodes: [[3, 1]], buffers: [[0b101], le32(7, 0, -9)] };
/** A utf8 dictionary batch of strings. */
function utf8Dictionary(values: string[]): BatchSpec {
  const offsets = values.reduce((o, v) => [...o, o[o.length - 1]! + Buffer.byteLength(v)], [0]);
  return { length: values.length, nodes: [[values.length, 0]], buffers: [[], le32(...offsets), text(values.join(''))] };
}
const int8Indices = (indices: (number | null)[]): BatchSpec => {
  const validity = indices.reduce<number>((bits, v, i) => (v === null ? bits : bits | (1 << i)), 0);
  const nulls = indices.filter((v) => v === null).length;
  return { length: indices.length, nodes: [[indices.length, nulls]], buffers: [[validity], Int8Array.from(indices, (v) => v ?? 0)] };
};

const columnValues = (file: IntegrationFile) => file.batches.map((b) => b.children.map((c) => rawValues(c)));

describe('messages built by hand', () => {
  test('a stream with continuation markers, and one without (before 0.15)', () => {
    for (const continuation of [true, false]) {
      const file = readIpc(stream([schemaMessage([intField('x')], Endianness.Little, MetadataVersion.V5, continuation),
        batchMessage(INT32_BATCH, MetadataVersion.V5, continuation)], continuation));
      expect(file.schema.fields.map(describeField)).toEqual(['x: int32']);
      expect(columnValues(file)).toEqual([[[7, null, -9]]]);
    }
  });

  test('a stream that ends without an end-of-stream marker', () => {
    const file = readIpc(concatBytes([schemaMessage([intField('x')]), batchMessage(INT32_BATCH)]));
    expect(columnValues(file)).toEqual([[[7, null, -9]]]);
  });

  test.each([[CompressionType.LZ4_FRAME, 'LZ4_FRAME'], [CompressionType.ZSTD, 'ZSTD']])('a compressed body (codec %s): decompressed buffers', (codec) => {
    const values = Array.from(le32(7, 0, -9));
    const frame = codec === CompressionType.LZ4_FRAME ? lz4Frame([{ bytes: values, raw: true }]) : zstdFrame([{ raw: values }], false);
    // The validity not compressed (-1), the values compressed.
    const bytes = stream([schemaMessage([intField('x')]), batchMessage({ ...INT32_BATCH, codec, buffers: [prefixed(-1, [0b101]), prefixed(12, frame)] })]);
    expect(columnValues(readIpc(bytes))).toEqual([[[7, null, -9]]]);
  });

  test('compressed bodies: an unknown codec, a wrong uncompressed length, a truncated frame, an impossible claim', () => {
    const frame = lz4Frame([{ bytes: Array.from(le32(7, 0, -9)), raw: true }]);
    const read = (values: number[], codec = CompressionType.LZ4_FRAME) => readIpc(stream([schemaMessage([intField('x')]),
      batchMessage({ ...INT32_BATCH, codec, buffers: [prefixed(-1, [0b101]), values] })]));
    expectError(() => read(prefixed(12, frame), 5 as CompressionType), EINVAL, /^message 1 \(record batch\): compression codec 5, expected 0 \(LZ4_FRAME\) or 1 \(ZSTD\)$/);
    const buffer = /^message 1 \(record batch\): buffer 1 \(column 0 'x' \(int32\) values\): /;
    expectError(() => read(prefixed(16, frame)), EINVAL, new RegExp(`${buffer.source}LZ4 frame: decompresses to 12 bytes, the IPC buffer's uncompressed length is 16$`));
    expectError(() => read(prefixed(8, frame)), EINVAL, new RegExp(`${buffer.source}LZ4 frame: frame 0 block 0: decompresses past 8 bytes$`));
    expectError(() => read(prefixed(12, frame.subarray(0, frame.length - 3))), EINVAL, new RegExp(`${buffer.source}LZ4 frame: frame 0: .* \\(truncated\\?\\)$`));
    expectError(() => read(prefixed(2n ** 40n, frame)), EINVAL, new RegExp(`${buffer.source}uncompressed length ${2n ** 40n} from ${frame.length} bytes of LZ4_FRAME, which expands at most 256-fold$`));
    expectError(() => read(prefixed(12, frame), CompressionType.ZSTD), EINVAL, new RegExp(`${buffer.source}ZSTD frame: frame 0: magic number 0x184d2204`));
  });

  test('a big-endian schema: ENOSYS', () => {
    const bytes = stream([schemaMessage([intField('x')], Endianness.Big), batchMessage(INT32_BATCH)]);
    expectError(() => readIpc(bytes), ENOSYS, /^message 0 metadata: Message.header: the data is big-endian; only little-endian Arrow IPC is supported/);
  });

  test('a buffer past the end of the body, too few buffers, too short a buffer, a null count above the length', () => {
    const schema = schemaMessage([intField('x')]);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, layout: [[0, 1], [8, 32]] })])), EINVAL,
      /^message 1 \(record batch\): body of 24 bytes, buffer 1 \(column 0 'x' \(int32\) values\) needs bytes 8\.\.40$/);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, buffers: [[0b101]] })])), EINVAL,
      /^message 1 \(record batch\): column 0 'x' \(int32\) needs buffer 1 \(values\), the batch has 1$/);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, layout: [[0, 1], [8, 4]] })])), EINVAL,
      /buffer 1 \(column 0 'x' \(int32\) values\) has 4 bytes, expected at least 12/);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, nodes: [[3, 4]] })])), EINVAL, /null_count 4 exceeds length 3/);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, nodes: [[3, 1], [1, 0]] })])), EINVAL,
      /1 of 2 field nodes left over after the schema's fields/);
    expectError(() => readIpc(stream([schema, batchMessage({ ...INT32_BATCH, length: 4 })])), EINVAL, /column 0 'x' has length 3, the batch 4/);
  });

  test('a stream that does not start with a schema', () => {
    expectError(() => readIpc(stream([batchMessage(INT32_BATCH)])), EINVAL, /^message 0 \(record batch\): a stream starts with a schema message/);
  });

  test('pre-1.0 unions: an all-valid validity buffer is dropped, one with nulls is refused (ENOSYS)', () => {
    const schema = (version: MetadataVersion) => schemaMessage([unionField('u', [intField('i', 8)])], Endianness.Little, version);
    // union validity, type ids, then the child: validity, values.
    const union = (validity: number, nulls: number): BatchSpec =>
      ({ length: 2, nodes: [[2, nulls], [2, 0]], buffers: [[validity], [0, 0], [], [5, 6]] });
    const ok = readIpc(stream([schema(MetadataVersion.V4), batchMessage(union(0b11, 0), MetadataVersion.V4)]));
    expect(columnValues(ok)).toEqual([[[{ typeId: 0, value: 5 }, { typeId: 0, value: 6 }]]]);
    expect(ok.batches[0]!.children[0]!.buffers).toHaveLength(1);
    expectError(() => readIpc(stream([schema(MetadataVersion.V4), batchMessage(union(0b01, 1), MetadataVersion.V4)])), ENOSYS,
      /column 0 'u' \(sparse_union<i: int8=0>\): a union with 1 null slots in a validity buffer \(pre-1\.0 union metadata\) is not supported/);
    // Since V5 a union has no validity buffer, so no null count either.
    const v5 = { length: 2, nodes: [[2, 1], [2, 0]], buffers: [[0, 0], [], [5, 6]] } satisfies BatchSpec;
    expectError(() => readIpc(stream([schema(MetadataVersion.V5), batchMessage(v5)])), EINVAL, /null_count 1 for a union, which has no validity buffer/);
  });

  test('metadata versions before V4 are refused', () => {
    expectError(() => readIpc(stream([schemaMessage([intField('x')], Endianness.Little, MetadataVersion.V3)])), ENOSYS,
      /^message 0 \(schema\): metadata version V3 \(Arrow before 0\.8\) is not supported/);
  });

  test('dictionaries: each batch gets the one current at it (delta, then replacement)', () => {
    const bytes = stream([
      schemaMessage([dictionaryField('d', 7)]),
      dictionaryMessage(7, utf8Dictionary(['a', 'bc']), false),
      batchMessage(int8Indices([1, null, 0])),
      dictionaryMessage(7, utf8Dictionary(['', 'déf']), true),
      batchMessage(int8Indices([3, 2, 0])),
      dictionaryMessage(7, utf8Dictionary(['z']), false),
      batchMessage(int8Indices([0])),
    ]);
    const file = readIpc(bytes);
    expect(file.schema.fields.map(describeField)).toEqual(['d: dictionary<values=utf8, indices=int8>']);
    expect(columnValues(file)).toEqual([[['bc', null, 'a']], [['déf', '', 'a']], [['z']]]);
    expect(rawValues(file.batches[1]!.children[0]!.dictionary!)).toEqual(['a', 'bc', '', 'déf']);
  });

  test('dictionaries: a batch before its dictionary is refused, unless all its slots are null', () => {
    const schema = schemaMessage([dictionaryField('d', 7)]);
    expectError(() => readIpc(stream([schema, batchMessage(int8Indices([0]))])), EINVAL,
      /^message 1 \(record batch\): column 0 'd' \(dictionary<values=utf8, indices=int8>\): dictionary id 7 is used before any dictionary batch defined it$/);
    const file = readIpc(stream([schema, batchMessage(int8Indices([null, null])), dictionaryMessage(7, utf8Dictionary(['x']), false), batchMessage(int8Indices([0]))]));
    expect(columnValues(file)).toEqual([[[null, null]], [['x']]]);
    expect(file.batches[0]!.children[0]!.dictionary!.length).toBe(0);
    expectError(() => readIpc(stream([schema, dictionaryMessage(8, utf8Dictionary(['x']), false)])), EINVAL, /dictionary id 8 is not in the schema/);
  });
});

// ---- corrupt and truncated input ----------------------------------------------------

/** readIpc either reads the bytes or throws an ArrowCDeviceError: never another error. */
function readOrReject(bytes: Uint8Array): 'read' | 'rejected' {
  try {
    readIpc(bytes);
    return 'read';
  } catch (e) {
    if (!(e instanceof ArrowCDeviceError)) throw new Error(`not an ArrowCDeviceError: ${(e as Error).stack}`);
    return 'rejected';
  }
}

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('corrupt and truncated input', () => {
  const small = files.filter(([name]) => /generated_(nested|union|dictionary|nested_dictionary|map|null|shared_dict|interval|extension)\./.test(name));

  test('the sample of small files covers both formats', () => {
    expect(small.length).toBeGreaterThanOrEqual(20);
  });

  test.each(small)('%s: every truncation is refused with an ArrowCDeviceError (a stream cut between messages reads)', (name, path) => {
    const bytes = new Uint8Array(readFileSync(path));
    const outcomes = { read: 0, rejected: 0 };
    for (let n = 0; n < bytes.byteLength; n++) outcomes[readOrReject(bytes.subarray(0, n))]++;
    if (name.endsWith('.arrow_file')) expect(outcomes.read).toBe(0);
    expect(outcomes.rejected).toBeGreaterThan(bytes.byteLength / 2);
  });

  test.each(small)('%s: 300 random byte changes are each read or refused with an ArrowCDeviceError', (_, path) => {
    const next = random(42);
    const bytes = new Uint8Array(readFileSync(path));
    for (let i = 0; i < 300; i++) {
      const copy = bytes.slice();
      // Half of the changes go to the first 1024 and the last 512 bytes, where the metadata of small files is.
      const at = () => {
        const r = next();
        if (r < 0.5) return Math.floor(next() * copy.length);
        return r < 0.8 ? Math.floor(next() * Math.min(1024, copy.length)) : copy.length - 1 - Math.floor(next() * Math.min(512, copy.length));
      };
      for (let k = 0; k < 1 + Math.floor(next() * 3); k++) copy[at()] = Math.floor(next() * 256);
      readOrReject(copy);
    }
  });

  test('bad magic, a broken end, a bad footer length, an empty input', () => {
    const bytes = new Uint8Array(readFileSync(join(GOLD, '1.0.0-littleendian', 'generated_primitive.arrow_file')));
    const copy = (f: (b: Uint8Array, dv: DataView) => void) => {
      const b = bytes.slice();
      f(b, new DataView(b.buffer));
      return b;
    };
    expectError(() => readIpc(copy((b) => (b[5] = 0x32))), EINVAL, /^not an Arrow IPC file or stream: expected the magic ARROW1 or a message \(0xFFFFFFFF and a length\), found bytes 41 52 52 4f 57 32 00 00$/);
    expectError(() => readIpc(copy((b) => (b[b.length - 1] = 0x32))), EINVAL, /^not a complete Arrow IPC file: it starts with ARROW1 but does not end with it/);
    expectError(() => readIpc(copy((b, dv) => dv.setInt32(b.length - 10, b.length, true))), EINVAL, /^footer length \d+ at byte \d+, expected 1\.\.\d+/);
    expectError(() => readIpc(new Uint8Array(0)), EINVAL, /^the input is empty/);
    expectError(() => readIpc(new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0])), EINVAL, /^the stream ends before its schema message/);
  });
});

// ---- concatenation (delta dictionaries) on every gold column ------------------------------

describe('concatRaw', () => {
  const jsonCases = [...new Set(files.map(([, path]) => jsonOf(path)))];
  const slice = (a: RawArray, start: number, length: number): RawArray => ({ ...a, offset: a.offset + start, length, nullCount: -1 });

  test.each(jsonCases.map((p) => [p.slice(GOLD.length + 1), p]))('%s: a + a and a[1:] + a[:n-1] hold the values of both, in order', (_, path) => {
    const file = readIntegrationJson(gunzip(path));
    for (const batch of file.batches) {
      batch.children.forEach((a, k) => {
        const values = rawValues(a);
        expect([k, rawValues(concatRaw(a, a))]).toEqual([k, [...values, ...values]]);
        if (a.length < 2) return;
        const tail = slice(a, 1, a.length - 1);
        const head = slice(a, 0, a.length - 1);
        const joined = concatRaw(tail, head);
        expect([k, joined.offset, rawValues(joined)]).toEqual([k, 0, [...values.slice(1), ...values.slice(0, -1)]]);
      });
    }
  });

  test('arrays of different types are refused', () => {
    const file = readIntegrationJson(gunzip(join(GOLD, '1.0.0-littleendian', 'generated_primitive.json.gz')));
    const columns = file.batches[0]!.children;
    const a = columns.find((c) => c.type.kind === 'bool')!;
    const b = columns.find((c) => c.type.kind === 'utf8')!;
    expectError(() => concatRaw(a, b), EINVAL, /^array: cannot concatenate bool and utf8$/);
  });
});

// ---- the round trip through C structs ------------------------------------------------------

describe('roundtripRaw on every gold case', () => {
  let acd: ArrowCDevice;
  beforeAll(async () => { acd = await core(); });
  const jsonCases = [...new Set(files.map(([, path]) => jsonOf(path)))].map((p) => [p.slice(GOLD.length + 1), p] as const);
  const inputs: [string, 'copy' | 'view', string][] = [];
  for (const mode of MODES) {
    for (const [name, path] of jsonCases) inputs.push([name, mode, path]);
    for (const [name, path] of files) inputs.push([name, mode, path]);
  }

  test.each(inputs)('%s, %s mode: validated at full level, equal after the import, nothing leaked', (name, mode, path) => {
    const file = path.endsWith('.json.gz') ? readIntegrationJson(gunzip(path)) : readIpc(readFileSync(path));
    const summary = roundtripRaw(acd, file, name, { mode, validate: goldLevel(name) });
    expect(summary.errors).toEqual([]);
    expect(summary.mismatches).toEqual([]);
    expect(summary.bytesLeaked).toBe(0);
    expect(summary).toMatchObject({ ok: true, file: name, mode, batches: file.batches.length, columns: file.schema.fields.length });
    expect(summary.rows).toBe(file.batches.reduce((n, b) => n + b.length, 0));
  });

  test('a batch the validator rejects: an error naming the batch, nothing leaked; at level 0 it goes through', () => {
    // Invalid UTF-8 in a utf8 column: only the full validation reads the bytes.
    const bytes = stream([
      schemaMessage([field('s', Type.Utf8, utf8)]),
      batchMessage({ length: 1, nodes: [[1, 0]], buffers: [[], le32(0, 2), [0xc3, 0x28]] }),
    ]);
    const file = readIpc(bytes);
    const start = acd.bytesAllocated();
    const full = roundtripRaw(acd, file, 'bad-utf8', { mode: 'copy', validate: 'full' });
    expect(full.ok).toBe(false);
    expect(full.errors).toHaveLength(1);
    expect(full.errors[0]).toMatch(/^batch 0: .*UTF-8/);
    expect(full.bytesLeaked).toBe(0);
    const none = roundtripRaw(acd, file, 'bad-utf8', { mode: 'view', validate: 'none' });
    expect(none).toMatchObject({ ok: true, errors: [], mismatches: [], batches: 1, rows: 1, columns: 1 });
    expect(acd.bytesAllocated()).toBe(start);
  });
});
