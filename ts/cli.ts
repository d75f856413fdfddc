// The arrow-c-device command line (Node). Exit codes: 0 all held, 1 a value
// mismatch, a leak or a failed conversion, 2 bad usage or an unreadable file.

import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, compareBatches, load, parseDevice, schemaDifferences, type ArrowCDevice, type Device, type DeviceSpec, type ExportedArray, type Imported, type Mismatch } from './index.js';
import { roundtripDemo } from './demo.js';
import { bench } from './bench/index.js';

const USAGE = `usage:
  arrow-c-device demo
      export a built-in sample table into wasm memory, show the C structs it
      became, and import it back
  arrow-c-device roundtrip FILE [--mode copy|view] [--device TYPE[:ID]] [--json]
      read an Arrow IPC file or stream, send every batch through the C Device
      Data Interface (export into wasm memory, import back), compare value by
      value and check that nothing leaked. With --device, every batch is
      exported onto that simulated device (cuda, cuda_host, opencl, vulkan,
      metal, vpi, rocm, rocm_host, ext_dev, cuda_managed, oneapi, webgpu,
      hexagon; ID defaults to 0), then copied back to the host after waiting
      on its sync event
  arrow-c-device --help`;

class UsageError extends Error {}

interface RoundtripSummary {
  ok: boolean;
  file: string;
  mode: 'copy' | 'view';
  /** The device the batches went through ('cpu', 'cuda:1', ...). */
  device: string;
  /** Sync events recorded (by the exports) and waited on (by the imports). */
  events: { recorded: number; waited: number };
  batches: number;
  rows: number;
  columns: number;
  bytesLeaked: number;
  /** Bytes of device memory (every device's) still allocated at the end. */
  deviceBytesLeaked: number;
  mismatches: Mismatch[];
  errors: string[];
}

function parseArgs(args: string[]): { file: string; mode: 'copy' | 'view'; device: Device; json: boolean } {
  let file: string | undefined;
  let mode: 'copy' | 'view' = 'copy';
  let device = parseDevice('cpu');
  let json = false;
  const deviceOf = (spec: string | undefined) => {
    try {
      return parseDevice(spec ?? '');
    } catch (e) {
      throw new UsageError(`--device: ${(e as Error).message.replace(/^device: /, '')}`);
    }
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--json') json = true;
    else if (a === '--device') device = deviceOf(args[++i]);
    else if (a.startsWith('--device=')) device = deviceOf(a.slice(9));
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
  return { file, mode, device, json };
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

/**
 * Exports, imports and compares every batch of a table, through `device`:
 * exported onto it, imported back with the copy-to-host policy.
 */
export function roundtripTable(acd: ArrowCDevice, table: arrow.Table, file: string, mode: 'copy' | 'view',
  device: DeviceSpec | Device = 'cpu'): RoundtripSummary {
  const target = parseDevice(device);
  const start = acd.bytesAllocated();
  const before = acd.deviceStats();
  const mismatches: Mismatch[] = [];
  const errors: string[] = [];
  table.batches.forEach((batch, b) => {
    let exported: ExportedArray | undefined;
    let imported: Imported<arrow.RecordBatch> | undefined;
    try {
      exported = acd.exportDeviceBatch(batch, { device: target });
      imported = acd.importDeviceBatch(exported.schema, exported.array, { mode, device: 'copy' });
      mismatches.push(...compareSchemas(batch, imported.value, b), ...compareBatches(batch, imported.value, b));
    } catch (e) {
      errors.push(`batch ${b}: ${(e as Error).message}`);
    } finally {
      imported?.release();
      exported?.release();
    }
  });
  const bytesLeaked = acd.bytesAllocated() - start;
  const after = acd.deviceStats();
  const deviceBytes = (t: typeof after) => t.devices.reduce((sum, d) => sum + d.bytesAllocated, 0);
  const deviceBytesLeaked = deviceBytes(after) - deviceBytes(before);
  return {
    ok: mismatches.length === 0 && errors.length === 0 && bytesLeaked === 0 && deviceBytesLeaked === 0,
    file, mode, device: target.name,
    events: { recorded: after.eventsRecorded - before.eventsRecorded, waited: after.eventsWaited - before.eventsWaited },
    batches: table.batches.length, rows: table.numRows, columns: table.numCols,
    bytesLeaked, deviceBytesLeaked, mismatches, errors,
  };
}

function compareSchemas(a: arrow.RecordBatch, b: arrow.RecordBatch, batch: number): Mismatch[] {
  return schemaDifferences(a, b).map((d) => ({ batch, column: '(schema)', row: -1, expected: d, found: '' }));
}

function printSummary(s: RoundtripSummary): void {
  const through = s.device === 'cpu' ? '' : `, through ${s.device} (${s.events.recorded} sync events recorded, ` +
    `${s.events.waited} waited on, ${s.deviceBytesLeaked} device bytes leaked)`;
  console.log(`${s.ok ? 'ok' : 'FAILED'}: ${s.file} (${s.mode} mode${through}): ${s.batches} batches, ${s.rows} rows, ` +
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
    if (command === 'bench') return bench(rest, (l) => console.log(l));
    if (command === 'roundtrip') {
      const { file, mode, device, json } = parseArgs(rest);
      const table = readTable(file);
      const summary = roundtripTable(await load(), table, file, mode, device);
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
