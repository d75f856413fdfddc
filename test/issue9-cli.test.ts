// Issue 9, item 8: the CLI never says "ok" to what is not Arrow data, and
// answers every corrupt file within seconds (apache-arrow, given such files
// first, hung past 60 s or ran out of memory).
import { afterAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as flatbuffers from 'flatbuffers';
import { Field as FbField } from 'apache-arrow/fb/field';
import { Footer } from 'apache-arrow/fb/footer';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { MetadataVersion } from 'apache-arrow/fb/metadata-version';
import { Null as FbNull } from 'apache-arrow/fb/null';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { Struct_ } from 'apache-arrow/fb/struct-';
import { Type } from 'apache-arrow/fb/type';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { readIpc } from '../ts/io/ipc/read.js';
import { GOLD } from './helpers.js';

const BIN = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
const dir = mkdtempSync(join(tmpdir(), 'acd-issue9-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(...args: string[]) {
  const start = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' });
  return { ...r, ms: performance.now() - start };
}

function file(name: string, bytes: Uint8Array | number[]): string {
  const path = join(dir, name);
  writeFileSync(path, Uint8Array.from(bytes));
  return path;
}

/** Exit 2 within 10 s: one line on stderr; with --json, one JSON error object on stdout. */
function expectRefused(path: string, message: RegExp): void {
  const r = run('roundtrip', path, '--json');
  expect(r.ms).toBeLessThan(10_000);
  expect(r.status).toBe(2);
  const err = r.stderr.trim().split('\n');
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(message);
  const out = r.stdout.trim().split('\n');
  expect(out).toHaveLength(1);
  // The --json error: the same line as its message; code and errno from the reader's ArrowCDeviceError
  // (code a bare number until errno names, 'EINVAL', reach it), its struct path when it has one.
  const json = JSON.parse(out[0]);
  expect(json).toEqual({ ok: false, exitCode: 2, error: expect.objectContaining({ name: 'UsageError', message: err[0].replace(/^arrow-c-device: /, '') }) });
  expect(Object.keys(json.error).filter((k) => !['name', 'code', 'errno', 'message', 'path', 'level', 'layout'].includes(k))).toEqual([]);
  expect({ code: json.error.code, ok: typeof json.error.code === 'number' || /^E[A-Z0-9]+$/.test(json.error.code) }).toEqual({ code: json.error.code, ok: true });
  expect(typeof json.error.errno).toBe('number');
  // Without --json: the same line, nothing on stdout.
  const plain = run('roundtrip', path);
  expect(plain.status).toBe(2);
  expect(plain.stdout).toBe('');
  expect(plain.stderr.trim()).toBe(err[0]);
}

/** An IPC stream of a table, with every aligned int64 equal to `from` set to `to`. */
function patchedStream(table: arrow.Table, from: bigint, to: bigint): Uint8Array {
  const bytes = arrow.tableToIPC(table, 'stream');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i + 8 <= bytes.byteLength; i += 8) if (dv.getBigInt64(i, true) === from) dv.setBigInt64(i, to, true);
  return bytes;
}

describe('item 8: what is not Arrow data exits 2 with one line', () => {
  test('item 8: an empty file is not Arrow data', () => {
    expectRefused(file('empty.arrow', []), /empty\.arrow is not a readable Arrow IPC file.*the input is empty/);
  });

  test.each([
    ['1 byte', [0x9c], /the length prefix needs bytes 0\.\.4, the input has 1/],
    ['6 bytes', [0x3b, 0x10, 0xe7, 0x55, 0x02, 0xaa], /expected the magic ARROW1 or a message .* found bytes 3b 10 e7 55 02 aa/],
    ['8 bytes: an end-of-stream marker and no schema', [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], /the stream ends before its schema message/],
  ])('item 8: a file of %s is not Arrow data', (name, bytes, message) => {
    expectRefused(file(`short-${bytes.length}.arrow`, bytes as number[]), message);
  });

  test.each([
    ['huge', [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4], /metadata of 2147483647 bytes needs bytes 0\.\.2147483655, the input has 12/],
    ['negative', [0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x80, 1, 2, 3, 4], /metadata length -2147483648, expected a positive length/],
  ])('item 8: a stream with a %s continuation length is not Arrow data', (name, bytes, message) => {
    expectRefused(file(`${name}.stream`, bytes as number[]), message);
  });

  test('item 8: invalid UTF-8 in a string column is not valid Arrow data (apache-arrow read it as U+FFFD, "ok")', () => {
    const bytes = arrow.tableToIPC(arrow.tableFromArrays({ s: ['fine', 'QQQQQQQQ'] }), 'stream');
    const at = Buffer.from(bytes).indexOf('QQQQQQQQ');
    expect(at).toBeGreaterThan(0);
    bytes[at + 3] = 0xff;
    expectRefused(file('utf8.stream', bytes), /is not valid Arrow data: batch 0: .*expected UTF-8 in slot 1/);
  });
});

describe('item 8: a corrupt file gets an answer within seconds', () => {
  test('item 8: a file whose record batch message length is negative (apache-arrow hung past 10 s)', () => {
    const bytes = new Uint8Array(readFileSync(join(GOLD, '1.0.0-littleendian', 'generated_null_trivial.arrow_file')));
    const dv = new DataView(bytes.buffer);
    expect(dv.getUint32(136, true)).toBe(0xffffffff); // the continuation marker of the batch message
    dv.setInt32(140, -(2 ** 31), true);
    expectRefused(file('negative-batch.arrow_file', bytes), /message 0 at byte 136: metadata length -2147483648, expected a positive length/);
  });

  test('item 8: a null column declaring 2^40 rows is refused, not expanded', () => {
    const table = new arrow.Table({ n: arrow.makeVector(arrow.makeData({ type: new arrow.Null(), length: 3, nullCount: 3 })) });
    const bytes = patchedStream(table, 3n, 1n << 40n);
    expectRefused(file('null40.stream', bytes),
      /column 0 'n' \(null\): 1099511627776 slots that carry no data .* more than this reader's bound of 16777216/);
  });

  test('item 8: a struct longer than its children is not Arrow data: exit 2 before apache-arrow reads it', () => {
    const table = arrow.tableFromArrays({ s: arrow.vectorFromArray([{ a: 1 }, { a: 2 }, { a: 3 }]) });
    const bytes = arrow.tableToIPC(table, 'stream');
    // The field nodes are {length 3, null_count 0} pairs: make the struct's (the first) 2^30 long, and the batch's.
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const nodes: number[] = [];
    for (let i = 0; i + 16 <= bytes.byteLength; i += 8) if (dv.getBigInt64(i, true) === 3n && dv.getBigInt64(i + 8, true) === 0n) nodes.push(i);
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    for (let i = 0; i + 8 <= bytes.byteLength; i += 8) if (dv.getBigInt64(i, true) === 3n && i !== nodes[1]) dv.setBigInt64(i, 1n << 30n, true);
    expectRefused(file('struct.stream', bytes), /column 0 's' \(struct<a: .*>\): child 0 has length 3, expected at least 1073741824/);
  });
});

describe('item 8: apache-arrow\'s misreadings are not reported as its success', () => {
  const dup = join(GOLD, '1.0.0-littleendian', 'generated_duplicate_fieldnames.stream');

  test('item 8: duplicate field names (apache-arrow merges the columns) go through the own reader, which says why', () => {
    const r = run('roundtrip', dup, '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, reader: 'own', bytesLeaked: 0, mismatches: [], errors: [] });
    expect(summary.notes[0]).toMatch(/^apache-arrow misreads this file \(apache-arrow reads the schema as <ints: int32, ints: int32, .*this library's reader as <ints: int8, ints: int32/);
  });

  test('item 8: --reader apache-arrow on that file is exit 1, with the disagreement as its error', () => {
    const r = run('roundtrip', dup, '--reader', 'apache-arrow', '--json');
    expect(r.status).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: false, reader: 'apache-arrow', bytesLeaked: 0 });
    expect(summary.errors).toEqual([expect.stringMatching(/^apache-arrow misreads this file: apache-arrow reads the schema as/)]);
  });
});

describe('item 8: the own reader bounds the work a small input can ask for', () => {
  test('item 8: a schema whose fields share children (a DAG of 2^40 fields in under 2 KB) is refused', () => {
    const b = new flatbuffers.Builder(1024);
    const typed = (typeType: Type, type: number, children: number[]) => {
      const kids = FbField.createChildrenVector(b, children);
      FbField.startField(b);
      FbField.addTypeType(b, typeType);
      FbField.addType(b, type);
      FbField.addChildren(b, kids);
      return FbField.endField(b);
    };
    FbNull.startNull(b);
    let f = typed(Type.Null, FbNull.endNull(b), []);
    for (let depth = 0; depth < 40; depth++) {
      Struct_.startStruct_(b);
      f = typed(Type.Struct_, Struct_.endStruct_(b), [f, f]);
    }
    const fields = FbSchema.createFieldsVector(b, [f]);
    FbSchema.startSchema(b);
    FbSchema.addFields(b, fields);
    b.finish(Message.createMessage(b, MetadataVersion.V5, MessageHeader.Schema, FbSchema.endSchema(b), 0n, 0));
    const meta = b.asUint8Array();
    const padded = Math.ceil(meta.byteLength / 8) * 8;
    const bytes = new Uint8Array(8 + padded + 8);
    const dv = new DataView(bytes.buffer);
    dv.setUint32(0, 0xffffffff, true);
    dv.setInt32(4, padded, true);
    bytes.set(meta, 8);
    dv.setUint32(8 + padded, 0xffffffff, true);
    expect(bytes.byteLength).toBeLessThan(2048);
    const start = performance.now();
    expect(() => readIpc(bytes)).toThrow(ArrowCDeviceError);
    expect(() => readIpc(bytes)).toThrow(new RegExp(`more fields than a flatbuffer of ${padded} bytes holds: fields are shared \\(a DAG, not a tree\\)`));
    expect(performance.now() - start).toBeLessThan(1000);
  });

  test('item 8: a footer naming one record batch twice is refused (the input would be read twice over)', () => {
    const batch = arrow.tableFromArrays({ x: Int32Array.from([1, 2, 3]) }).batches[0]!;
    const bytes = arrow.tableToIPC(new arrow.Table([batch, batch]), 'file');
    expect(readIpc(bytes).batches).toHaveLength(2);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const footerLength = dv.getInt32(bytes.byteLength - 10, true);
    const footerAt = bytes.byteLength - 10 - footerLength;
    const footer = Footer.getRootAsFooter(new flatbuffers.ByteBuffer(bytes.subarray(footerAt, bytes.byteLength - 10)));
    const [first, second] = [footer.recordBatches(0)!, footer.recordBatches(1)!];
    const at = (block: typeof first) => footerAt + block.bb_pos;
    bytes.copyWithin(at(second), at(first), at(first) + 24);
    expect(() => readIpc(bytes)).toThrow(ArrowCDeviceError);
    expect(() => readIpc(bytes)).toThrow(/^footer: recordBatches\[0\]: bytes \d+\.\.\d+ overlap recordBatches\[1\] at byte \d+$/);
  });
});

describe('item 7 at the CLI: values Arrow C++\'s ValidateFull refuses', () => {
  const datetime = join(GOLD, '0.14.1', 'generated_datetime.arrow_file');

  test('the default check (--validate full) refuses a date64 that is not a whole number of days: exit 2', () => {
    expectRefused(datetime, /is not valid Arrow data: batch 0: root\.children\[1\]: date64 value 0 is \d+ ms, not a whole number of days/);
  });

  test('--validate default reads the same file and round-trips it: exit 0', () => {
    const r = run('roundtrip', datetime, '--validate', 'default', '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, bytesLeaked: 0 });
    expect(summary.batches).toBeGreaterThan(0);
  });
});
