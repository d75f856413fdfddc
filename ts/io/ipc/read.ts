// Arrow IPC (Columnar.rst, "Serialization and Interprocess Communication")
// → the project's schema and raw arrays, for every type of the spec and
// independent of apache-arrow: the file format (ARROW1 magic, footer) and the
// stream format, with or without the 0xFFFFFFFF continuation marker (streams
// before 0.15 have none). Buffers are views of the input bytes, except those
// of bodies compressed with LZ4_FRAME or ZSTD (./compression.ts), which are
// decompressed copies.

import { ArrowCDeviceError, EINVAL, ENOSYS } from '../../abi/errors.js';
import type { IntegrationFile } from '../json/read.js';
import type { RawArray } from '../../model/raw.js';
import type { DataType } from '../../model/types.js';
import { BodyReader } from './body.js';
import { concatRaw } from '../../model/concat.js';
import { FlatBuffer, type Table } from './flatbuffers.js';
import { readSchema, type IpcSchema } from './schema.js';

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31]; // "ARROW1"
const CONTINUATION = 0xffffffff;
const HEADERS = ['none', 'schema', 'dictionary batch', 'record batch', 'tensor', 'sparse tensor'];
const Header = { Schema: 1, DictionaryBatch: 2, RecordBatch: 3 } as const;
type Header = (typeof Header)[keyof typeof Header];
/** MetadataVersion V4 (0.8 to 0.17) and V5 (1.0 and later); earlier ones are refused. */
const V4 = 3;
const V5 = 4;

/** One encapsulated message: its Message table and its body (a view of the input). */
interface Message {
  readonly index: number;
  readonly header: number;
  readonly table: Table;
  readonly version: number;
  readonly body: Uint8Array;
  /** "message 3 (record batch)", for errors. */
  readonly where: string;
}

function fail(message: string, code = EINVAL): never {
  throw new ArrowCDeviceError(message, code);
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  return at >= 0 && at + MAGIC.length <= bytes.byteLength && MAGIC.every((b, i) => bytes[at + i] === b);
}

function describeBytes(bytes: Uint8Array, at: number): string {
  const b = Array.from(bytes.subarray(at, at + 8), (x) => x.toString(16).padStart(2, '0')).join(' ');
  return b === '' ? 'nothing' : b;
}

/**
 * Reads the encapsulated message at `at` (continuation marker optional).
 * Returns null at an end-of-stream marker; `end` is where the message ends.
 * In the file format, `bodyAt` and `bodyLength` come from the footer's block.
 */
function readMessage(bytes: Uint8Array, at: number, index: number, block?: { metaDataLength: number; bodyLength: bigint }):
  { message: Message; end: number } | null {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const name = `message ${index}`;
  const need = (size: number, what: string) => {
    if (at + size > bytes.byteLength) fail(`${name} at byte ${at}: ${what} needs bytes ${at}..${at + size}, the input has ${bytes.byteLength}`);
  };
  need(4, 'the length prefix');
  let prefix = 4;
  let length = dv.getInt32(at, true);
  if (dv.getUint32(at, true) === CONTINUATION) {
    need(8, 'the length prefix');
    prefix = 8;
    length = dv.getInt32(at + 4, true);
  }
  if (length === 0) return null;
  if (length < 0) fail(`${name} at byte ${at}: metadata length ${length}, expected a positive length`);
  need(prefix + length, `metadata of ${length} bytes`);
  const metadataEnd = at + prefix + length;
  const fb = new FlatBuffer(bytes.subarray(at + prefix, metadataEnd), `${name} metadata`);
  const table = fb.root('Message');
  const version = table.int16(0, 'version', 0);
  const header = table.uint8(1, 'header_type', 0);
  const kind = HEADERS[header] ?? `header type ${header}`;
  const where = `${name} (${kind})`;
  if (version < V4) fail(`${where}: metadata version V${version + 1} (Arrow before 0.8) is not supported`, ENOSYS);
  if (version > V5) fail(`${where}: metadata version V${version + 1} is newer than this reader (V5)`, ENOSYS);
  const bodyLength = table.int64(3, 'bodyLength');
  let bodyAt = metadataEnd;
  if (block !== undefined) {
    if (block.bodyLength !== bodyLength) fail(`${where}: the footer's block gives a body of ${block.bodyLength} bytes, the message ${bodyLength}`);
    // Equal, not merely enough: readers that take the body right after the metadata must see the same bytes.
    if (block.metaDataLength !== prefix + length) fail(`${where}: the footer's block gives ${block.metaDataLength} bytes of metadata, the message has ${prefix + length}`);
    bodyAt = at + block.metaDataLength;
  }
  if (bodyLength < 0n || BigInt(bodyAt) + bodyLength > BigInt(bytes.byteLength)) {
    fail(`${where}: body of ${bodyLength} bytes at byte ${bodyAt} runs past the end of the input (${bytes.byteLength} bytes)`);
  }
  const body = bytes.subarray(bodyAt, bodyAt + Number(bodyLength));
  const tableOf = table.table(2, 'header');
  if (tableOf === null) fail(`${where}: no header table`);
  return { message: { index, header, table: tableOf, version, body, where }, end: bodyAt + body.byteLength };
}

/** Dictionaries by id, as the messages define, replace and extend them. */
class DictionaryState {
  private readonly current = new Map<bigint, RawArray>();
  private readonly budget = { unbacked: 0, decompressed: 0 };

  constructor(private readonly ipc: IpcSchema, private readonly fileFormat: boolean) {}

  get(id: bigint): RawArray | undefined {
    return this.current.get(id);
  }

  read(m: Message): void {
    const id = m.table.int64(0, 'id');
    const valueType: DataType | undefined = this.ipc.dictionaries.valueType.get(id);
    if (valueType === undefined) fail(`${m.where}: dictionary id ${id} is not in the schema`);
    const data = m.table.table(1, 'data');
    if (data === null) fail(`${m.where}: no data`);
    const reader = this.reader(data, m);
    const length = reader.length();
    const values = reader.read({ name: `dictionary ${id}`, type: valueType, nullable: true, metadata: null }, 'values');
    reader.finish();
    if (values.length !== length) fail(`${m.where}: the batch has length ${length}, its column ${values.length}`);
    const previous = this.current.get(id);
    const delta = m.table.bool(2, 'isDelta');
    if (!delta && previous !== undefined && this.fileFormat) {
      fail(`${m.where}: a second dictionary for id ${id} that is not a delta; the file format does not allow replacing dictionaries`);
    }
    this.current.set(id, delta && previous !== undefined ? concatRaw(previous, values, `${m.where} (delta of id ${id})`) : values);
  }

  reader(data: Table, m: Message): BodyReader {
    return new BodyReader(data, m.body, m.where, {
      dictionaries: this.ipc.dictionaries,
      current: (id) => this.current.get(id),
      unionValidity: m.version < V5,
      budget: this.budget,
    });
  }
}

function readBatch(m: Message, ipc: IpcSchema, dicts: DictionaryState): RawArray {
  const reader = dicts.reader(m.table, m);
  const length = reader.length();
  const { fields } = ipc.schema;
  const children = fields.map((f, k) => {
    const column = reader.read(f, `column ${k} '${f.name}'`);
    if (column.length !== length) fail(`${m.where}: column ${k} '${f.name}' has length ${column.length}, the batch ${length}`);
    return column;
  });
  reader.finish();
  return { type: { kind: 'struct', children: fields }, length, nullCount: 0, offset: 0, buffers: [null], children, dictionary: null };
}

function expectHeader(m: Message, header: Header): void {
  if (m.header !== header) fail(`${m.where}: expected a ${HEADERS[header]} message`);
}

function readStream(bytes: Uint8Array, start: number): IntegrationFile {
  let at = start;
  let index = 0;
  let ipc: IpcSchema | undefined;
  let dicts: DictionaryState | undefined;
  const batches: RawArray[] = [];
  while (at < bytes.byteLength) {
    const read = readMessage(bytes, at, index);
    if (read === null) break;
    const { message: m, end } = read;
    if (ipc === undefined || dicts === undefined) {
      if (m.header !== Header.Schema) {
        fail(`${m.where}: a stream starts with a schema message`);
      }
      ipc = readSchema(m.table);
      dicts = new DictionaryState(ipc, false);
    } else if (m.header === Header.DictionaryBatch) {
      dicts.read(m);
    } else if (m.header === Header.RecordBatch) {
      batches.push(readBatch(m, ipc, dicts));
    } else {
      fail(`${m.where}: expected a dictionary batch or a record batch after the schema`, m.header === Header.Schema ? EINVAL : ENOSYS);
    }
    at = end;
    index++;
  }
  if (ipc === undefined) {
    fail(at === start && bytes.byteLength === start ? 'the input is empty: expected an Arrow IPC file or stream' : 'the stream ends before its schema message');
  }
  return { schema: ipc.schema, batches };
}

/**
 * The footer's blocks must not overlap (nor end past the footer): a footer
 * naming one message many times would make the input read many times over.
 */
function disjoint(blocks: { at: number; metaDataLength: number; bodyLength: bigint; path: string }[], footerAt: number): void {
  const sorted = [...blocks].sort((a, b) => a.at - b.at);
  sorted.forEach((b, i) => {
    const end = BigInt(b.at + b.metaDataLength) + b.bodyLength;
    const next = sorted[i + 1];
    const limit = next === undefined ? BigInt(footerAt) : BigInt(next.at);
    if (b.bodyLength < 0n || end > limit) {
      fail(`footer: ${b.path}: bytes ${b.at}..${end} overlap ${next === undefined ? `the footer at byte ${footerAt}` : `${next.path} at byte ${next.at}`}`);
    }
  });
}

function readFile(bytes: Uint8Array): IntegrationFile {
  const size = bytes.byteLength;
  // magic (6) + padding (2) + ... + footer length (4) + magic (6)
  if (size < 18 || !hasMagic(bytes, size - 6)) {
    fail(`not a complete Arrow IPC file: it starts with ARROW1 but does not end with it (${size} bytes; truncated?)`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerLength = dv.getInt32(size - 10, true);
  const footerAt = size - 10 - footerLength;
  if (footerLength <= 0 || footerAt < 8) fail(`footer length ${footerLength} at byte ${size - 10}, expected 1..${size - 18} for a file of ${size} bytes`);
  const footer = new FlatBuffer(bytes.subarray(footerAt, size - 10), 'footer').root('Footer');
  const schemaTable = footer.table(1, 'schema');
  if (schemaTable === null) fail('footer: no schema');
  const ipc = readSchema(schemaTable);
  const dicts = new DictionaryState(ipc, true);
  const blocks = (slot: number, name: string) => footer.structs(slot, name, 24).map((p, i) => {
    const path = `${name}[${i}]`;
    const offset = footer.fb.i64(p, `${path}.offset`);
    const metaDataLength = footer.fb.i32(p + 8, `${path}.metaDataLength`);
    const bodyLength = footer.fb.i64(p + 16, `${path}.bodyLength`);
    if (offset < 8n || offset >= BigInt(footerAt)) fail(`footer: ${path}: offset ${offset}, expected one in 8..${footerAt}`);
    if (metaDataLength <= 0) fail(`footer: ${path}: metaDataLength ${metaDataLength}, expected a positive length`);
    return { at: Number(offset), metaDataLength, bodyLength, path };
  });
  const dictionaryBlocks = blocks(2, 'dictionaries');
  const batchBlocks = blocks(3, 'recordBatches');
  disjoint([...dictionaryBlocks, ...batchBlocks], footerAt);
  let index = 0;
  const message = (block: ReturnType<typeof blocks>[number]): Message => {
    const read = readMessage(bytes.subarray(0, footerAt), block.at, index++, block);
    if (read === null) fail(`footer: ${block.path}: an end-of-stream marker at byte ${block.at}, expected a message`);
    return read.message;
  };
  // Dictionaries first, in footer order (deltas apply in that order); the file format has no replacements.
  for (const block of dictionaryBlocks) {
    const m = message(block);
    expectHeader(m, Header.DictionaryBatch);
    dicts.read(m);
  }
  const batches = batchBlocks.map((block) => {
    const m = message(block);
    expectHeader(m, Header.RecordBatch);
    return readBatch(m, ipc, dicts);
  });
  return { schema: ipc.schema, batches };
}

/**
 * Reads an Arrow IPC file or stream (told apart by the ARROW1 magic) into the shape of `readIntegrationJson`: the schema and one raw struct array of the schema's fields per record batch, each dictionary-encoded column with the dictionary current at its batch (file format: every dictionary of the footer, deltas applied in order). Bodies compressed with LZ4_FRAME or ZSTD are decompressed (docs/ipc.md).
 *
 * Ownership: the buffers are views of `bytes` (copies for compressed bodies): keep it unchanged while the result is used; nothing is allocated in wasm memory.
 * @param bytes - the file or stream.
 * @returns the schema and the batches.
 * @throws `ArrowCDeviceError` naming the message and buffer: EINVAL for malformed input, ENOSYS for what is valid but not supported here (big-endian data, pre-1.0 unions with nulls, metadata before V4).
 */
export function readIpc(bytes: Uint8Array): IntegrationFile {
  if (hasMagic(bytes, 0)) return readFile(bytes);
  if (bytes.byteLength >= 4) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const first = dv.getUint32(0, true);
    // A stream begins with a continuation marker or (before 0.15) a metadata length.
    if (first !== CONTINUATION && (first === 0 || first > bytes.byteLength - 4)) {
      fail(`not an Arrow IPC file or stream: expected the magic ARROW1 or a message (0xFFFFFFFF and a length), found bytes ${describeBytes(bytes, 0)}`);
    }
  }
  return readStream(bytes, 0);
}
