// `arrow-c-device roundtrip FILE` and `arrow-c-device integration FILE.json`:
// their option tables, the round trip of a file by the chosen reader and
// interface, and their text and JSON output.

import * as arrow from 'apache-arrow';
// Only from the library's public entries: the CLI bundle uses dist/*.mjs, never a second copy of them.
import {
  load, parseDevice,
  type ArrowCDevice, type Device, type RawArray, type ValidationLevel,
} from '../index.js';
import { runIntegration, type IntegrationSummary } from '../integration.js';
import { registerCompression } from '../ipc.js';
import { roundtripRaw, roundtripStream, roundtripStreamRaw, roundtripTable, type RoundtripSummary, type Via } from '../roundtrip.js';
import { readBytes } from './files.js';
import { readChecked, readersDisagree, UsageError } from './input.js';
import { HELP, JSON_OUTPUT, parseCommand, PROGRESS, type CommandSpec, type Values } from './options.js';
import { batchReporter, mb, Progress, type Io } from './progress.js';

const EXIT_CODES: [number, string][] = [
  [0, 'every batch came back equal and nothing leaked'],
  [1, 'a value mismatch, a leak or a failed conversion'],
  [2, 'bad usage, a file that cannot be read, or input that is not Arrow data'],
];

export const ROUNDTRIP: CommandSpec = {
  name: 'roundtrip',
  args: 'FILE',
  positionals: { max: 1, required: 'FILE' },
  summary: 'send every batch of an Arrow IPC file (Feather v2 too) or stream, LZ4/ZSTD-compressed or not, or integration JSON, through the C Device Data Interface and back, and compare',
  description: [
    'Reads an Arrow IPC file (Feather v2 too) or stream, with LZ4- or ZSTD-compressed bodies or none, or integration JSON (.json, .json.gz), sends every batch through the C Device Data ' +
      'Interface (exported into wasm memory, imported back), compares it value by value and checks that nothing leaked.',
    'The input is untrusted: every file is first read by this library\'s own reader, which bounds every length by the ' +
      'input, and every batch is checked at the --validate level; what is not Arrow data (an empty file, no schema ' +
      'message, a bad offset) exits 2. Only then does apache-arrow read IPC (--reader).',
  ],
  options: [
    { name: 'via', value: 'VIA', choices: ['array', 'stream', 'async'], default: 'array',
      help: 'array: each batch as its own ArrowDeviceArray; stream: all of them as one ArrowDeviceArrayStream (TS producer, ' +
        'C consumer, C producer, TS reader); async: through the async device stream (the same four hops). A file read by ' +
        'this library\'s own reader travels as raw arrays, any type included' },
    { name: 'mode', value: 'MODE', choices: ['copy', 'view'], default: 'copy', help: 'import by copying out of wasm memory, or as views over it' },
    { name: 'device', value: 'TYPE[:ID]', expected: 'TYPE or TYPE:ID', default: 'cpu',
      help: 'export every batch onto this simulated device (cuda, cuda_host, opencl, vulkan, metal, vpi, rocm, rocm_host, ' +
        'ext_dev, cuda_managed, oneapi, webgpu, hexagon; ID defaults to 0) and copy it back after waiting on its sync event' },
    { name: 'validate', value: 'LEVEL', choices: ['none', 'minimal', 'default', 'full'], default: 'full',
      help: 'how much the C validator checks: the file before the round trip, and every import' },
    { name: 'reader', value: 'READER', choices: ['auto', 'apache-arrow', 'own'], default: 'auto',
      help: 'who reads IPC for the round trip: apache-arrow, this library\'s own reader (any type of the spec), or auto: ' +
        'apache-arrow, and the own reader where apache-arrow fails or misreads (a note says so)' },
    JSON_OUTPUT, ...PROGRESS, HELP,
  ],
  examples: [
    'arrow-c-device roundtrip data.arrow',
    'arrow-c-device roundtrip data.arrows --via stream --device cuda:1',
    'arrow-c-device roundtrip generated_nested.json.gz --mode view --json',
    'arrow-c-device roundtrip big.feather --progress',
  ],
  exitCodes: EXIT_CODES,
};

export const INTEGRATION: CommandSpec = {
  name: 'integration',
  args: 'FILE.json[.gz]',
  positionals: { max: 1, required: 'FILE' },
  summary: 'run Arrow\'s C Data integration protocol on an integration JSON file',
  description: [
    'Runs Arrow\'s C Data integration protocol on the file, the way Arrow\'s harness does with this library as producer ' +
      'and consumer: the schema and every batch exported from the JSON, imported back, validated fully and compared to ' +
      'the JSON, with the allocated bytes back to the start.',
  ],
  options: [JSON_OUTPUT, ...PROGRESS, HELP],
  examples: ['arrow-c-device integration generated_union.json.gz', 'arrow-c-device integration data.json --json'],
  exitCodes: [
    [0, 'the protocol held for the schema and every batch, and nothing leaked'],
    [1, 'an export, import or comparison failed, or bytes leaked'],
    [2, 'bad usage, a file that cannot be read, or a file that is not integration JSON'],
  ],
};

type Reader = 'auto' | 'apache-arrow' | 'own';

interface Args {
  file: string;
  mode: 'copy' | 'view';
  device: Device;
  via: 'array' | Via;
  validate: ValidationLevel | undefined;
  reader: Reader;
}

function roundtripArgs(values: Values, file: string): Args {
  let device: Device;
  try {
    device = parseDevice((values.device as string | undefined) ?? 'cpu');
  } catch (e) {
    throw new UsageError(`--device: ${(e as Error).message.replace(/^device: /, '')}`, { cause: e });
  }
  return {
    file, device,
    mode: (values.mode as Args['mode'] | undefined) ?? 'copy',
    via: (values.via as Args['via'] | undefined) ?? 'array',
    validate: values.validate as ValidationLevel | undefined,
    reader: (values.reader as Reader | undefined) ?? 'auto',
  };
}

type Summary = RoundtripSummary & { notes?: string[]; via?: Via };

/** The buffer bytes of a raw array, children and dictionary included (for progress). */
function rawBytes(a: RawArray): number {
  let n = 0;
  for (const b of a.buffers) n += b?.byteLength ?? 0;
  for (const c of a.children) n += rawBytes(c);
  return n + (a.dictionary === null ? 0 : rawBytes(a.dictionary));
}

/**
 * The round trip of a file by the chosen reader and interface (see ROUNDTRIP):
 * apache-arrow batches when apache-arrow read the file, raw arrays (every
 * type) when this library did, through arrays and streams alike.
 */
async function roundtripFile(acd: ArrowCDevice, args: Args, progress: Progress): Promise<Summary> {
  progress.step(`reading ${args.file}`);
  const bytes = readBytes(args.file);
  progress.step(`reading ${args.file} (${mb(bytes.length)}) with this library's reader`);
  let check: ((done: number, total: number) => void) | undefined;
  const read = readChecked(acd, args.file, bytes, args.validate ?? 'full', (done, total, file) => {
    check ??= batchReporter(progress, 'checking', () => file.batches.map(rawBytes));
    check(done, total);
  });
  const sizes = () => read.file.batches.map(rawBytes);
  const roundtrip = batchReporter(progress, 'round trip', sizes);
  const options = { mode: args.mode, device: args.device, validate: args.validate, onBatch: roundtrip };
  const through = (table: arrow.Table): Promise<Summary> | Summary => (args.via === 'array'
    ? roundtripTable(acd, table, args.file, args.mode, args.device, args.validate, roundtrip)
    : roundtripStream(acd, table, args.via, args.mode, { file: args.file, device: args.device, onBatch: roundtrip }));
  const viaOwn = async (): Promise<Summary> => (args.via === 'array'
    ? roundtripRaw(acd, read.file, args.file, options, read.reader)
    : roundtripStreamRaw(acd, read.file, args.via, args.mode, { file: args.file, device: args.device, validate: args.validate, reader: read.reader, onBatch: roundtrip }));
  // Integration JSON is always read by this library (apache-arrow's JSON reader is not used).
  if (args.reader === 'own' || read.reader === 'json') return viaOwn();

  progress.step('reading with apache-arrow');
  let table: arrow.Table;
  try {
    // LZ4_FRAME and ZSTD bodies (pyarrow's Feather files are LZ4 by default).
    registerCompression();
    table = arrow.tableFromIPC(bytes);
  } catch (e) {
    if (args.reader === 'apache-arrow') throw new UsageError(`${args.file} is not readable by apache-arrow: ${(e as Error).message}`, { cause: e });
    return { ...(await viaOwn()), notes: [`apache-arrow cannot read this file (${(e as Error).message}); read with this library's own reader`] };
  }
  // apache-arrow reads some files differently (duplicate field names, map
  // entry names, pre-1.0 unions): the round trip would then check its misreading.
  const differs = readersDisagree(table, read.file, batchReporter(progress, 'comparing the readers', () => sizes().filter((_, i) => read.file.batches[i]!.length > 0)));
  if (differs !== null && args.reader === 'auto') {
    return { ...(await viaOwn()), notes: [`apache-arrow misreads this file (${differs}); read with this library's own reader`] };
  }
  const first = await through(table);
  if (differs !== null) return { ...first, ok: false, errors: [...first.errors, `apache-arrow misreads this file: ${differs}`] };
  // A failure through apache-arrow that leaked nothing may be apache-arrow
  // misreading the file (as with pre-1.0 unions): the own reader decides.
  if (first.ok || args.reader === 'apache-arrow' || first.bytesLeaked !== 0 || first.deviceBytesLeaked !== 0) return first;
  const why = first.errors[0] ?? `${first.mismatches.length} mismatches`;
  const second = await viaOwn();
  return second.ok
    ? { ...second, notes: [`through apache-arrow it failed (${why}); apache-arrow misreads this file, so it was read with this library's own reader`] }
    : { ...first, notes: [`this library's own reader fails too: ${second.errors[0] ?? `${second.mismatches.length} mismatches`}`] };
}

function printRoundtrip(s: Summary, print: (line: string) => void): void {
  const through = s.device === 'cpu' ? '' : `, through ${s.device} (${s.events.recorded} sync events recorded, ` +
    `${s.events.waited} waited on, ${s.deviceBytesLeaked} device bytes leaked)`;
  const reader = s.reader === 'apache-arrow' ? '' : `, read by ${s.reader === 'json' ? 'the JSON reader' : 'the own IPC reader'}`;
  const via = s.via === undefined ? '' : `, via ${s.via}`;
  print(`${s.ok ? 'ok' : 'FAILED'}: ${s.file} (${s.mode} mode${via}${reader}${through}): ${s.batches} batches, ${s.rows} rows, ` +
    `${s.columns} columns, ${s.bytesLeaked} bytes leaked`);
  for (const n of s.notes ?? []) print(`  note: ${n}`);
  for (const e of s.errors) print(`  error: ${e}`);
  for (const m of s.mismatches) print(`  batch ${m.batch} column '${m.column}' row ${m.row}: expected ${m.expected}, found ${m.found}`);
}

/** Runs `roundtrip`; returns the exit code (0 all held, 1 a failure). */
export async function roundtripCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(ROUNDTRIP, argv);
  const args = roundtripArgs(values, positionals[0]!);
  const progress = Progress.of(io, 'roundtrip', values);
  let summary: Summary;
  try {
    summary = await roundtripFile(await load(), args, progress);
  } catch (e) {
    progress.end();
    throw e;
  }
  progress.end(`${summary.batches} batches, ${summary.ok ? 'ok' : 'FAILED'}`);
  if (values.json === true) io.out(JSON.stringify(summary));
  else printRoundtrip(summary, (l) => io.out(l));
  return summary.ok ? 0 : 1;
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/**
 * The bytes of an integration JSON file, or a usage error that says what
 * they look like instead (never the bytes themselves: an IPC file's are binary).
 */
function integrationJson(file: string, bytes: Uint8Array): Uint8Array {
  const first = bytes.findIndex((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  if (first >= 0 && bytes[first] === 0x7b) return bytes; // '{'
  const head = [...bytes.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const ipc = text(bytes.subarray(0, 6)) === 'ARROW1' || (bytes[0] === 0xff && bytes[1] === 0xff && bytes[2] === 0xff && bytes[3] === 0xff);
  throw new UsageError(`${file} is not integration JSON (a JSON object): ${bytes.length === 0 ? 'it is empty' : `it starts with the bytes ${head}`}` +
    `${ipc ? '; it looks like Arrow IPC, which `arrow-c-device roundtrip` reads' : ''}`);
}

/** Runs `integration`; returns the exit code (0 the protocol held, 1 it did not). */
export async function integrationCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(INTEGRATION, argv);
  const file = positionals[0]!;
  const progress = Progress.of(io, 'integration', values);
  let summary: IntegrationSummary;
  try {
    progress.step(`reading ${file}`);
    const source = text(integrationJson(file, readBytes(file)));
    const acd = await load();
    progress.step('schema');
    summary = runIntegration(acd, file, () => source, (done, total) => progress.update(`batch ${done}/${total}`));
  } catch (e) {
    progress.end();
    throw e;
  }
  progress.end(`${summary.batches} batches, ${summary.ok ? 'ok' : 'FAILED'}`);
  if (values.json === true) io.out(JSON.stringify(summary));
  else {
    io.out(`${summary.ok ? 'ok' : 'FAILED'}: ${summary.file}: schema and ${summary.batches} batches through the C Data integration protocol, ` +
      `${summary.bytesLeaked} bytes leaked`);
    for (const e of summary.errors) io.out(`  error: ${e}`);
  }
  return summary.ok ? 0 : 1;
}
