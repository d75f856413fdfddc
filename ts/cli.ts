// The arrow-c-device command line (Node). Exit codes: 0 all held, 1 a value
// mismatch, a leak or a failed conversion, 2 bad usage or an unreadable file.

import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, compareBatches, load, schemaDifferences, type ArrowCDevice, type ExportedArray, type Imported, type Mismatch } from './index.js';
import { roundtripDemo } from './demo.js';

const USAGE = `usage:
  arrow-c-device demo
      export a built-in sample table into wasm memory, show the C structs it
      became, and import it back
  arrow-c-device roundtrip FILE [--mode copy|view] [--json]
      read an Arrow IPC file or stream, send every batch through the C Device
      Data Interface (export into wasm memory, import back), compare value by
      value and check that nothing leaked
  arrow-c-device --help`;

class UsageError extends Error {}

interface RoundtripSummary {
  ok: boolean;
  file: string;
  mode: 'copy' | 'view';
  batches: number;
  rows: number;
  columns: number;
  bytesLeaked: number;
  mismatches: Mismatch[];
  errors: string[];
}

function parseArgs(args: string[]): { file: string; mode: 'copy' | 'view'; json: boolean } {
  let file: string | undefined;
  let mode: 'copy' | 'view' = 'copy';
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--json') json = true;
    else if (a === '--mode') {
      const m = args[++i];
      if (m !== 'copy' && m !== 'view') throw new UsageError(`--mode: expected copy or view, found ${m ?? 'nothing'}`);
      mode = m;
    } else if (a.startsWith('--mode=')) {
      const m = a.slice(7);
      if (m !== 'copy' && m !== 'view') throw new UsageError(`--mode: expected copy or view, found ${m}`);
      mode = m;
    } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (file === undefined) file = a;
    else throw new UsageError(`unexpected argument ${a}`);
  }
  if (file === undefined) throw new UsageError('roundtrip: missing FILE');
  return { file, mode, json };
}

function readTable(file: string): arrow.Table {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return arrow.tableFromIPC(bytes);
  } catch (e) {
    throw new UsageError(`${file} is not a readable Arrow IPC file or stream: ${(e as Error).message}`);
  }
}

/** Exports, imports and compares every batch of a table. */
export function roundtripTable(acd: ArrowCDevice, table: arrow.Table, file: string, mode: 'copy' | 'view'): RoundtripSummary {
  const start = acd.bytesAllocated();
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  table.batches.forEach((batch, b) => {
    let exported: ExportedArray | undefined;
    let imported: Imported<arrow.RecordBatch> | undefined;
    try {
      exported = acd.exportDeviceBatch(batch);
      imported = acd.importDeviceBatch(exported.schema, exported.array, { mode });
      mismatches.push(...compareSchemas(batch, imported.value, b), ...compareBatches(batch, imported.value, b));
    } catch (e) {
      errors.push(`batch ${b}: ${(e as Error).message}`);
    } finally {
      imported?.release();
      exported?.release();
    }
  });
  const bytesLeaked = acd.bytesAllocated() - start;
  return {
    ok: mismatches.length === 0 && errors.length === 0 && bytesLeaked === 0,
    file, mode, batches: table.batches.length, rows: table.numRows, columns: table.numCols,
    bytesLeaked, mismatches, errors,
  };
}

function compareSchemas(a: arrow.RecordBatch, b: arrow.RecordBatch, batch: number): Mismatch[] {
  return schemaDifferences(a, b).map((d) => ({ batch, column: '(schema)', row: -1, expected: d, found: '' }));
}

function printSummary(s: RoundtripSummary): void {
  console.log(`${s.ok ? 'ok' : 'FAILED'}: ${s.file} (${s.mode} mode): ${s.batches} batches, ${s.rows} rows, ` +
    `${s.columns} columns, ${s.bytesLeaked} bytes leaked`);
  for (const e of s.errors) console.log(`  error: ${e}`);
  for (const m of s.mismatches) {
    console.log(`  batch ${m.batch} column '${m.column}' row ${m.row}: expected ${m.expected}, found ${m.found}`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === 'demo') {
      await roundtripDemo(await load(), (line) => console.log(line));
      return 0;
    }
    if (command === 'roundtrip') {
      const { file, mode, json } = parseArgs(rest);
      const table = readTable(file);
      const summary = roundtripTable(await load(), table, file, mode);
      if (json) console.log(JSON.stringify(summary));
      else printSummary(summary);
      return summary.ok ? 0 : 1;
    }
    throw new UsageError(`unknown command '${command}'`);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`arrow-c-device: ${e.message}`);
      return 2;
    }
    if (e instanceof ArrowCDeviceError) {
      console.error(`arrow-c-device: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
