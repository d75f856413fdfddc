// The arrow-c-device command line (Node). Exit codes: 0 all held, 1 a value
// mismatch, a leak or a failed conversion, 2 bad usage or an unreadable file.

import * as arrow from 'apache-arrow';
import { bench } from '../bench/index.js';
import { roundtripDemo } from './demo.js';
import { fixturesCommand, FIXTURES_USAGE } from './fixtures.js';
import { inspectCommand, INSPECT_USAGE } from './inspect.js';
import { playgroundCommand, PLAYGROUND_USAGE } from './playground.js';
// Only from the library's public entry: the CLI bundle uses dist/index.mjs, never a second copy of it.
import {
  ArrowCDeviceError, load, parseDevice, roundtripRaw, roundtripStream, roundtripStreamRaw, roundtripTable, runIntegration,
  type ArrowCDevice, type Device, type IntegrationSummary, type RoundtripSummary, type ValidationLevel, type Via,
} from '../index.js';
import { readBytes } from './files.js';
import { readChecked, readersDisagree, UsageError } from './input.js';

const USAGE = `usage:
  arrow-c-device demo
      export a built-in sample table into wasm memory, show the C structs it
      became, and import it back
  arrow-c-device roundtrip FILE [--via array|stream|async] [--mode copy|view]
                           [--device TYPE[:ID]] [--validate none|minimal|default|full]
                           [--reader auto|apache-arrow|own] [--json]
      read an Arrow IPC file or stream, or integration JSON (.json, .json.gz);
      every file is first read by this library's reader, which bounds every
      length by the input, and checked at the --validate level (default
      full): what is not Arrow data (an empty file, no schema message, a bad
      offset) exits 2. Then
      send every batch through the C Device Data Interface (export into wasm
      memory, import back), compare value by value and check that nothing
      leaked. --device exports every batch onto that simulated device (cuda,
      cuda_host, opencl, vulkan, metal, vpi, rocm, rocm_host, ext_dev,
      cuda_managed, oneapi, webgpu, hexagon; ID defaults to 0) and copies it
      back after waiting on its sync event. --reader: IPC is read with
      apache-arrow, or with this library's own reader (any type of the spec);
      auto (the default) uses apache-arrow and, when that fails, the own reader.
      --via stream sends the batches as an ArrowDeviceArrayStream (TS producer,
      C consumer, C producer, TS reader), --via async through the async device
      stream (TS producer, C handler, C producer, TS handler); array (the
      default) sends each batch as its own ArrowDeviceArray. A file read by
      the own reader travels as raw arrays, any type included
  arrow-c-device integration FILE.json[.gz] [--json]
      run Arrow's C Data integration protocol on the file: the schema and every
      batch exported from the JSON, imported back, validated fully and
      compared to the JSON, with the allocated bytes back to the start
${FIXTURES_USAGE}
${INSPECT_USAGE}
${PLAYGROUND_USAGE}
  arrow-c-device bench [--quick] [--json FILE]
      benchmarks against Arrow IPC, arrow-js-ffi and the memory-copy floors
  arrow-c-device COMMAND --help
      that command's usage
  arrow-c-device --version
  arrow-c-device --help`;

type Reader = 'auto' | 'apache-arrow' | 'own';

interface Args {
  file: string;
  mode: 'copy' | 'view';
  device: Device;
  via: 'array' | Via;
  validate: ValidationLevel | undefined;
  reader: Reader;
  json: boolean;
}

function choice<T extends string>(option: string, value: string | undefined, allowed: readonly T[]): T {
  if (value === undefined || !(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${option}: expected ${allowed.join(', ').replace(/, ([^,]*)$/, ' or $1')}, found ${value ?? 'nothing'}`);
  }
  return value as T;
}

/** Parses FILE and the options; `allowed` says which options this command takes. */
function parseArgs(command: string, args: string[], allowed: readonly string[]): Args {
  const out: Args = { file: '', mode: 'copy', device: parseDevice('cpu'), via: 'array', validate: undefined, reader: 'auto', json: false };
  let file: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = () => (eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : args[++i]);
    if (name.startsWith('-') && !allowed.includes(name)) throw new UsageError(`unknown option ${name}`);
    if (name === '--json') out.json = true;
    else if (name === '--mode') out.mode = choice('--mode', value(), ['copy', 'view'] as const);
    else if (name === '--via') out.via = choice('--via', value(), ['array', 'stream', 'async'] as const);
    else if (name === '--validate') out.validate = choice('--validate', value(), ['none', 'minimal', 'default', 'full'] as const);
    else if (name === '--reader') out.reader = choice('--reader', value(), ['auto', 'apache-arrow', 'own'] as const);
    else if (name === '--device') {
      const spec = value();
      try {
        out.device = parseDevice(spec ?? '');
      } catch (e) {
        throw new UsageError(`--device: ${(e as Error).message.replace(/^device: /, '')}`);
      }
    } else if (file === undefined) file = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (file === undefined) throw new UsageError(`${command}: missing FILE`);
  return { ...out, file };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

type Summary = RoundtripSummary & { notes?: string[]; via?: Via };

/**
 * The round trip of a file by the chosen reader and interface (see USAGE):
 * apache-arrow batches when apache-arrow read the file, raw arrays (every
 * type) when this library did, through arrays and streams alike.
 */
async function roundtripFile(acd: ArrowCDevice, args: Args): Promise<Summary> {
  const bytes = readBytes(args.file);
  const options = { mode: args.mode, device: args.device, validate: args.validate };
  const through = (table: arrow.Table): Promise<Summary> | Summary => (args.via === 'array'
    ? roundtripTable(acd, table, args.file, args.mode, args.device, args.validate)
    : roundtripStream(acd, table, args.via, args.mode, { file: args.file, device: args.device }));
  const read = readChecked(acd, args.file, bytes, args.validate ?? 'full');
  const viaOwn = async (): Promise<Summary> => (args.via === 'array'
    ? roundtripRaw(acd, read.file, args.file, options, read.reader)
    : roundtripStreamRaw(acd, read.file, args.via, args.mode, { file: args.file, device: args.device, validate: args.validate, reader: read.reader }));
  // Integration JSON is always read by this library (apache-arrow's JSON reader is not used).
  if (args.reader === 'own' || read.reader === 'json') return viaOwn();

  let table: arrow.Table;
  try {
    table = arrow.tableFromIPC(bytes);
  } catch (e) {
    if (args.reader === 'apache-arrow') throw new UsageError(`${args.file} is not readable by apache-arrow: ${(e as Error).message}`);
    return { ...(await viaOwn()), notes: [`apache-arrow cannot read this file (${(e as Error).message}); read with this library's own reader`] };
  }
  // apache-arrow reads some files differently (duplicate field names, map
  // entry names, pre-1.0 unions): the round trip would then check its misreading.
  const differs = readersDisagree(table, read.file);
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

function printRoundtrip(s: RoundtripSummary & { notes?: string[]; via?: Via }): void {
  const through = s.device === 'cpu' ? '' : `, through ${s.device} (${s.events.recorded} sync events recorded, ` +
    `${s.events.waited} waited on, ${s.deviceBytesLeaked} device bytes leaked)`;
  const reader = s.reader === 'apache-arrow' ? '' : `, read by ${s.reader === 'json' ? 'the JSON reader' : 'the own IPC reader'}`;
  const via = s.via === undefined ? '' : `, via ${s.via}`;
  console.log(`${s.ok ? 'ok' : 'FAILED'}: ${s.file} (${s.mode} mode${via}${reader}${through}): ${s.batches} batches, ${s.rows} rows, ` +
    `${s.columns} columns, ${s.bytesLeaked} bytes leaked`);
  for (const n of s.notes ?? []) console.log(`  note: ${n}`);
  for (const e of s.errors) console.log(`  error: ${e}`);
  for (const m of s.mismatches) {
    console.log(`  batch ${m.batch} column '${m.column}' row ${m.row}: expected ${m.expected}, found ${m.found}`);
  }
}

function printIntegration(s: IntegrationSummary): void {
  console.log(`${s.ok ? 'ok' : 'FAILED'}: ${s.file}: schema and ${s.batches} batches through the C Data integration protocol, ` +
    `${s.bytesLeaked} bytes leaked`);
  for (const e of s.errors) console.log(`  error: ${e}`);
}

/** The usage lines of one command (from `  arrow-c-device COMMAND` to the next command), or null. */
export function commandUsage(command: string): string | null {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  arrow-c-device ${command} `) || l === `  arrow-c-device ${command}`);
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && /^  arrow-c-device /.test(l));
  return `usage:\n${lines.slice(start, end < 0 ? undefined : end).join('\n')}`;
}

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

/**
 * Runs one command; returns the exit code. A failure is one line on stderr
 * (and, with --json, one JSON object {ok: false, error, exitCode} on stdout);
 * only a bug in this program is thrown.
 */
export async function main(argv: string[], info: { version?: string } = {}): Promise<number> {
  const [command, ...rest] = argv;
  const json = (command === 'roundtrip' || command === 'integration' || command === 'inspect') && rest.includes('--json');
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === '--version' || command === '-V') {
      if (info.version === undefined) throw new UsageError('--version: the version is not known here (run the installed arrow-c-device command)');
      console.log(`arrow-c-device ${info.version}`);
      return 0;
    }
    // `COMMAND --help`: that command's part of the usage, before anything runs.
    if (rest.includes('--help') || rest.includes('-h')) {
      const usage = commandUsage(command);
      if (usage === null) throw new UsageError(`unknown command '${command}'`);
      console.log(usage);
      return 0;
    }
    if (command === 'demo') {
      if (rest.length > 0) throw new UsageError(`demo: unexpected argument ${rest[0]}`);
      await roundtripDemo(await load(), (line) => console.log(line));
      return 0;
    }
    if (command === 'bench') return bench(rest, (l) => console.log(l));
    if (command === 'fixtures') return fixturesCommand(rest, (l) => console.log(l), (l) => console.error(l));
    if (command === 'inspect') return await inspectCommand(rest, load, (l) => console.log(l));
    if (command === 'playground') return await playgroundCommand(rest, (l) => console.log(l));
    if (command === 'roundtrip') {
      const args = parseArgs(command, rest, ['--via', '--mode', '--device', '--validate', '--reader', '--json']);
      const acd = await load();
      const summary = await roundtripFile(acd, args);
      if (args.json) console.log(JSON.stringify(summary));
      else printRoundtrip(summary);
      return summary.ok ? 0 : 1;
    }
    if (command === 'integration') {
      const args = parseArgs(command, rest, ['--json']);
      const source = text(integrationJson(args.file, readBytes(args.file)));
      const summary = runIntegration(await load(), args.file, () => source);
      if (args.json) console.log(JSON.stringify(summary));
      else printIntegration(summary);
      return summary.ok ? 0 : 1;
    }
    throw new UsageError(`unknown command '${command}'`);
  } catch (e) {
    const exitCode = e instanceof UsageError ? 2 : e instanceof ArrowCDeviceError ? 1 : 0;
    if (exitCode === 0) throw e;
    const line = (e as Error).message.replace(/\s*\n\s*/g, ' ');
    console.error(`arrow-c-device: ${line}`);
    if (json) console.log(JSON.stringify({ ok: false, error: line, exitCode }));
    return exitCode;
  }
}
