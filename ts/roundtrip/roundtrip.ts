// Round trips through the C Device Data Interface: every batch exported into
// wasm memory (onto a device), imported back (copied to the host), compared
// value by value, and everything released, with the bytes counted. Two paths:
// apache-arrow tables, and raw arrays (integration JSON, and IPC read by this
// library's own reader: any type of the spec, and files apache-arrow misreads).

import type * as arrow from 'apache-arrow';
import type { CoreRef } from '../abi/core.js';
import { deviceStats } from '../device/accounting.js';
import { exportDeviceBatch, exportDeviceRaw, importDeviceBatch, importDeviceRaw } from '../device/exchange.js';
import type { ExportedArray, Imported } from '../exchange/handles.js';
import type { RawImport, ValidationLevel } from '../exchange/options.js';
import { compareBatches, schemaDifferences, type Mismatch } from '../arrow-js/compare.js';
import { parseDevice, type Device, type DeviceSpec } from '../device/device.js';
import { readIpc } from '../io/ipc/read.js';
import { readIntegrationJson, type IntegrationFile } from '../io/json/read.js';
import { rawValues, show } from '../model/raw-values.js';
import type { RawArray } from '../model/raw.js';
import { fieldsEqual, metadataEqual, recordBatchField, typeToString, typesEqual, type Field } from '../model/types.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';

/** Which reader made the batches: apache-arrow, this library's IPC reader, or its JSON reader. */
export type ReaderName = 'apache-arrow' | 'own' | 'json';

/** Options of `roundtripRaw`. */
export interface RoundtripOptions {
  /** How the imports read (default 'copy'). */
  mode?: 'copy' | 'view';
  /** The device every batch is exported onto (and copied back from). */
  device?: DeviceSpec | Device;
  /** How much the C validator checks on import. */
  validate?: ValidationLevel;
  /** Called after each batch with the batches done and their number (the CLI's progress). */
  onBatch?: (done: number, total: number) => void;
}

export const ROUNDTRIP_OPTION_KEYS = optionKeys<RoundtripOptions>()(['mode', 'device', 'validate', 'onBatch']);

/** What a round trip found (the CLI's `roundtrip --json`). */
export interface RoundtripSummary {
  /** Whether every batch came back equal and nothing leaked. */
  ok: boolean;
  /** The file's name. */
  file: string;
  /** Which reader made the batches. */
  reader: ReaderName;
  /** The import mode. */
  mode: 'copy' | 'view';
  /** The device the batches went through ('cpu', 'cuda:1', ...). */
  device: string;
  /** Sync events recorded (by the exports) and waited on (by the imports). */
  events: { recorded: number; waited: number };
  /** How many batches. */
  batches: number;
  /** How many rows over all batches. */
  rows: number;
  /** How many columns. */
  columns: number;
  /** Live bytes of the core left after the run. */
  bytesLeaked: number;
  /** Bytes of device memory (every device's) still allocated at the end. */
  deviceBytesLeaked: number;
  /** Cells that differ. */
  mismatches: Mismatch[];
  /** What failed, one message each. */
  errors: string[];
}

/** Mismatches reported per batch at most. */
const LIMIT = 10;

/**
 * Runs `each` for every batch with the byte, device and event counts taken
 * around it, collecting errors instead of throwing; `each` releases all it made.
 */
function measured(acd: CoreRef, options: RoundtripOptions, batches: number,
  each: (b: number, device: Device, mismatches: Mismatch[]) => void): Omit<RoundtripSummary, 'file' | 'reader' | 'rows' | 'columns' | 'batches'> {
  const device = parseDevice(options.device ?? 'cpu');
  const start = acd.core.bytesAllocated();
  const before = deviceStats(acd.core);
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  for (let b = 0; b < batches; b++) {
    try {
      each(b, device, mismatches);
    } catch (e) {
      errors.push(`batch ${b}: ${(e as Error).message}`);
    }
    options.onBatch?.(b + 1, batches);
  }
  const after = deviceStats(acd.core);
  const deviceBytes = (t: typeof after) => t.devices.reduce((sum, d) => sum + d.bytesAllocated, 0);
  const bytesLeaked = acd.core.bytesAllocated() - start;
  const deviceBytesLeaked = deviceBytes(after) - deviceBytes(before);
  return {
    ok: mismatches.length === 0 && errors.length === 0 && bytesLeaked === 0 && deviceBytesLeaked === 0,
    mode: options.mode ?? 'copy', device: device.name,
    events: { recorded: after.eventsRecorded - before.eventsRecorded, waited: after.eventsWaited - before.eventsWaited },
    bytesLeaked, deviceBytesLeaked, mismatches, errors,
  };
}

/**
 * Every batch of an apache-arrow table, exported from and imported into
 * apache-arrow objects; `onBatch` is called after each (the CLI's progress).
 *
 * Ownership: every struct it makes is released before it returns (what was not is reported as leaked); nothing to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param table - the batches.
 * @param file - the file name, for the summary.
 * @param mode - how the imports read.
 * @param device - the device the batches go through.
 * @param validate - the validation level.
 * @param onBatch - called after each batch with how many are done and the total.
 */
export function roundtripTable(acd: CoreRef, table: arrow.Table, file: string, mode: 'copy' | 'view' = 'copy',
  device: DeviceSpec | Device = 'cpu', validate?: ValidationLevel, onBatch?: (done: number, total: number) => void): RoundtripSummary {
  const result = measured(acd, { mode, device, validate, onBatch }, table.batches.length, (b, target, mismatches) => {
    const batch = table.batches[b];
    let exported: ExportedArray | undefined;
    let imported: Imported<arrow.RecordBatch> | undefined;
    try {
      exported = exportDeviceBatch(acd.core, batch, { device: target });
      imported = importDeviceBatch(acd.core, exported.schema, exported.array, { mode, device: 'copy', validate });
      mismatches.push(...schemaDifferences(batch, imported.value).map((d) => ({ batch: b, column: '(schema)', row: -1, expected: d, found: '' })),
        ...compareBatches(batch, imported.value, b, LIMIT));
    } finally {
      imported?.release();
      exported?.release();
    }
  });
  return { ...result, file, reader: 'apache-arrow', batches: table.batches.length, rows: table.numRows, columns: table.numCols };
}

/**
 * Every batch of a raw file (integration JSON, or IPC read by this library), through raw export and import.
 *
 * Ownership: every struct it makes is released before it returns (what was not is reported as leaked); nothing to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param file - the file, read by this library.
 * @param name - the file name, for the summary.
 * @param options - mode, device, validation level.
 * @param reader - which reader made the batches.
 */
export function roundtripRaw(acd: CoreRef, file: IntegrationFile, name: string, options: RoundtripOptions = {},
  reader: ReaderName = 'own'): RoundtripSummary {
  checkOptions('roundtripRaw', options, ROUNDTRIP_OPTION_KEYS);
  const field = recordBatchField(file.schema);
  const mode = options.mode ?? 'copy';
  const result = measured(acd, options, file.batches.length, (b, device, mismatches) => {
    const batch = file.batches[b];
    let exported: ExportedArray | undefined;
    let imported: Imported<RawImport> | undefined;
    try {
      exported = exportDeviceRaw(acd.core, field, batch, { device });
      imported = importDeviceRaw(acd.core, exported.schema, exported.array, { mode, validate: options.validate, device: 'copy' });
      // In view mode the buffers are views of the imported array: compare before releasing it.
      mismatches.push(...schemaMismatches(field, imported.value.field, b), ...batchMismatches(batch, imported.value.array, file.schema.fields, b));
    } finally {
      imported?.release();
      exported?.release();
    }
  });
  return {
    ...result, file: name, reader, batches: file.batches.length,
    rows: file.batches.reduce((n, batch) => n + batch.length, 0), columns: file.schema.fields.length,
  };
}

const describeField = (f: Field) => `${f.name}: ${typeToString(f.type)}${f.nullable ? '' : ' not null'}`;

/** The differences between the exported and the imported schema, as mismatches of column '(schema)'. */
export function schemaMismatches(expected: Field, found: Field, batch: number): Mismatch[] {
  const out: Mismatch[] = [];
  const mismatch = (what: string, e: string, f: string) => out.push({ batch, column: '(schema)', row: -1, expected: `${what}${e}`, found: f });
  if (!metadataEqual(expected.metadata, found.metadata)) mismatch('schema metadata ', show([...(expected.metadata ?? [])]), show([...(found.metadata ?? [])]));
  const a = expected.type.kind === 'struct' ? expected.type.children : [];
  const b = found.type.kind === 'struct' ? found.type.children : [];
  if (a.length !== b.length) mismatch('', `${a.length} columns`, `${b.length} columns`);
  a.forEach((f, i) => {
    const g = b[i];
    if (g !== undefined && !fieldsEqual(f, g)) mismatch(`column ${i} `, describeField(f), `${describeField(g)} (or their metadata differ)`);
  });
  return out;
}

/** Column-by-column differences of two batches (struct raw arrays of the same schema). */
export function batchMismatches(expected: RawArray, found: RawArray, fields: readonly Field[], batch: number): Mismatch[] {
  const out: Mismatch[] = [];
  if (expected.length !== found.length) {
    return [{ batch, column: '*', row: -1, expected: `${expected.length} rows`, found: `${found.length} rows` }];
  }
  fields.forEach((f, k) => {
    const a = expected.children[k];
    const b = found.children[k];
    if (out.length >= LIMIT) return;
    if (a === undefined || b === undefined) {
      out.push({ batch, column: f.name, row: -1, expected: 'a column', found: 'none' });
      return;
    }
    if (!typesEqual(a.type, b.type) || a.length !== b.length) {
      out.push({ batch, column: f.name, row: -1, expected: `${typeToString(a.type)} of length ${a.length}`, found: `${typeToString(b.type)} of length ${b.length}` });
      return;
    }
    if (a.nullCount >= 0 && b.nullCount >= 0 && a.nullCount !== b.nullCount) {
      out.push({ batch, column: f.name, row: -1, expected: `null count ${a.nullCount}`, found: `null count ${b.nullCount}` });
    }
    const x = rawValues(a, `column '${f.name}'`);
    const y = rawValues(b, `column '${f.name}'`);
    for (let i = 0; i < x.length && out.length < LIMIT; i++) {
      const e = show(x[i]);
      const g = show(y[i]);
      if (e !== g) out.push({ batch, column: f.name, row: i, expected: e, found: g });
    }
  });
  return out;
}

/**
 * Whether bytes hold integration JSON (by name, or by a first character of `{`).
 *
 * Ownership: pure; nothing to release.
 * @param name - the file name.
 * @param bytes - its first bytes, at least.
 */
export function isJson(name: string, bytes: Uint8Array): boolean {
  if (/\.json(\.gz)?$/i.test(name)) return true;
  const first = bytes.find((c) => c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09);
  return first === 0x7b;
}

/**
 * The integration JSON in text, or this library's reading of IPC bytes.
 *
 * Ownership: the batches' buffers may be views of `bytes`: keep it unchanged while they are used.
 * @param name - the file name.
 * @param bytes - the file's bytes.
 * @param text - reads the file as text (for JSON).
 */
export function readOwn(name: string, bytes: Uint8Array, text: () => string): { file: IntegrationFile; reader: ReaderName } {
  return isJson(name, bytes) ? { file: readIntegrationJson(text()), reader: 'json' } : { file: readIpc(bytes), reader: 'own' };
}
