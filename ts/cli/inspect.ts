// `arrow-c-device inspect FILE | --sample NAME [--layout wasm32|lp64] [--batch N] [--json]`:
// the struct tree of one batch (ts/inspect/), as text or JSON.

// Only from the library's public entry, as ts/cli/cli.ts.
import { types, type ArrowCDevice } from '../index.js';
import { batchTree, sample, samples, treeText, type InspectLayout } from '../inspect.js';
import { readBytes } from './files.js';
import { readChecked, UsageError } from './input.js';
import { HELP, JSON_OUTPUT, parseCommand, type CommandSpec } from './options.js';

export const INSPECT: CommandSpec = {
  name: 'inspect',
  args: 'FILE | --sample NAME',
  positionals: { max: 1 },
  summary: 'show the C structs of one batch, field by field, with their bytes',
  description: [
    'Shows the C structs of one batch, field by field: each struct\'s fields with their offsets and values, flags and ' +
      'device types by name, the strings pointers point at, and each buffer\'s role, address, size and first bytes. ' +
      'FILE is an Arrow IPC file or stream or integration JSON, read and checked as roundtrip does.',
  ],
  options: [
    { name: 'sample', value: 'NAME', help: 'a built-in sample in place of FILE: \'demo\', or any batch case of the fixture corpus ' +
      '(int32, utf8-view, list-view, run-end-encoded, dictionary-of-structs, sliced-struct, ...); --sample list names them all' },
    { name: 'layout', value: 'LAYOUT', choices: ['wasm32', 'lp64'], default: 'wasm32',
      help: 'wasm32: as the core exports it into wasm memory; lp64: as a fixture image for 64-bit platforms holds it (addresses are offsets in the image)' },
    { name: 'batch', value: 'N', expected: 'a batch number (0, 1, ...)', default: '0', help: 'which batch of FILE' },
    { ...JSON_OUTPUT, help: 'print the tree as one JSON object {"ok":true,"source","layout","addresses","tree"} on stdout (--sample list: one object per sample), or on failure {"ok":false,"exitCode":N,"error":{...}}' },
    HELP,
  ],
  examples: [
    'arrow-c-device inspect --sample demo',
    'arrow-c-device inspect --sample utf8-view --layout lp64',
    'arrow-c-device inspect data.arrow --batch 1 --json',
  ],
  exitCodes: [[0, 'shown'], [2, 'bad usage, an unknown sample, a batch past the end, or a file that is not Arrow data']],
};

interface InspectArgs {
  file: string | null;
  sample: string | null;
  layout: InspectLayout;
  batch: number;
  json: boolean;
}

function inspectArgs(argv: readonly string[]): InspectArgs {
  const { values, positionals } = parseCommand(INSPECT, argv);
  const file = positionals[0] ?? null;
  const sample = (values.sample as string | undefined) ?? null;
  if ((file === null) === (sample === null)) throw new UsageError('inspect: expected FILE or --sample NAME (one of them)');
  let batch = 0;
  if (values.batch !== undefined) {
    if (sample !== null) throw new UsageError('inspect: --batch is for a FILE; a sample has one batch');
    if (!/^\d+$/.test(values.batch as string)) throw new UsageError(`--batch: expected a batch number (0, 1, ...), found ${values.batch}`);
    batch = Number(values.batch);
  }
  return { file, sample, batch, layout: (values.layout as InspectLayout | undefined) ?? 'wasm32', json: values.json === true };
}

/** Runs `inspect`; returns the exit code (2: bad usage, an unknown sample, a file that is not Arrow data). */
export async function inspectCommand(argv: readonly string[], load: () => Promise<ArrowCDevice>, print: (line: string) => void): Promise<number> {
  const a = inspectArgs(argv);
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
      throw new UsageError((e as Error).message, { cause: e });
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
  if (a.json) print(JSON.stringify({ ok: true, source, layout: a.layout, addresses, tree }));
  else [source, ...treeText(tree, addresses)].forEach((l) => print(l));
  return 0;
}
