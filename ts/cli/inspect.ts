// `arrow-c-device inspect FILE | --sample NAME [--layout wasm32|lp64] [--batch N] [--json]`:
// the struct tree of one batch (ts/inspect/), as text or JSON.

// Only from the library's public entry, as ts/cli/cli.ts.
import { types, type ArrowCDevice } from '../index.js';
import { batchTree, sample, samples, treeText, type InspectLayout } from '../inspect.js';
import { readBytes } from './files.js';
import { readChecked, UsageError } from './input.js';

export const INSPECT_USAGE = `  arrow-c-device inspect FILE | --sample NAME [--layout wasm32|lp64] [--batch N] [--json]
      show the C structs of one batch, field by field: each struct's fields
      with their offsets and values, flags and device types by name, the
      strings pointers point at, and each buffer's role, address, size and
      first bytes. FILE is an Arrow IPC file or stream or integration JSON
      (--batch: which batch, default 0); --sample: a built-in sample ('demo',
      or any batch case of the fixture corpus: int32, utf8-view, list-view,
      run-end-encoded, dictionary-of-structs, sliced-struct, ...; --sample
      list names them all). --layout wasm32 (default): as the core exports
      it into wasm memory; lp64: as a fixture image for 64-bit platforms
      holds it (addresses are offsets in the image)`;

interface InspectArgs {
  file: string | null;
  sample: string | null;
  layout: InspectLayout;
  batch: number;
  json: boolean;
}

function parse(args: string[]): InspectArgs {
  const out: InspectArgs = { file: null, sample: null, layout: 'wasm32', batch: 0, json: false };
  let batchGiven = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const value = () => {
      const v = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (v === undefined) throw new UsageError(`${name}: expected a value`);
      return v;
    };
    if (name === '--json') out.json = true;
    else if (name === '--sample') out.sample = value();
    else if (name === '--layout') {
      const v = value();
      if (v !== 'wasm32' && v !== 'lp64') throw new UsageError(`--layout: expected wasm32 or lp64, found ${v}`);
      out.layout = v;
    } else if (name === '--batch') {
      const v = value();
      if (!/^\d+$/.test(v)) throw new UsageError(`--batch: expected a batch number (0, 1, ...), found ${v}`);
      out.batch = Number(v);
      batchGiven = true;
    } else if (name.startsWith('-')) throw new UsageError(`unknown option ${name}`);
    else if (out.file === null) out.file = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if ((out.file === null) === (out.sample === null)) throw new UsageError('inspect: expected FILE or --sample NAME (one of them)');
  if (out.sample !== null && batchGiven) throw new UsageError('inspect: --batch is for a FILE; a sample has one batch');
  return out;
}

/** Runs `inspect`; returns the exit code (2: bad usage, an unknown sample, a file that is not Arrow data). */
export async function inspectCommand(args: string[], load: () => Promise<ArrowCDevice>, print: (line: string) => void): Promise<number> {
  const a = parse(args);
  if (a.sample === 'list') {
    for (const s of samples()) print(a.json ? JSON.stringify({ name: s.name, description: s.description }) : `${s.name.padEnd(36)} ${s.description}`);
    return 0;
  }
  const acd = await load();
  let source: string;
  let schema;
  let batch;
  if (a.sample !== null) {
    let s;
    try {
      s = sample(a.sample);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    ({ schema, batch } = s);
    source = `sample '${s.name}': ${s.description}`;
  } else {
    const { file } = readChecked(acd, a.file!, readBytes(a.file!));
    if (a.batch >= file.batches.length) {
      throw new UsageError(`--batch ${a.batch}: ${a.file} has ${file.batches.length} batch${file.batches.length === 1 ? '' : 'es'}`);
    }
    schema = file.schema;
    batch = file.batches[a.batch]!;
    source = `${a.file}, batch ${a.batch} of ${file.batches.length}`;
  }
  const { tree, addresses } = batchTree(acd, types.recordBatchField(schema), batch, a.layout);
  if (a.json) print(JSON.stringify({ source, layout: a.layout, addresses, tree }));
  else [source, ...treeText(tree, addresses)].forEach((l) => print(l));
  return 0;
}
