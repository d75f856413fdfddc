// Cross-implementation fixtures: IPC files and streams written by pyarrow
// (Arrow C++) with the types and cases the shared gold files lack, read by
// readIpc and checked against the values pyarrow expects (its manifest.json,
// normalized like rawValues); then every batch through the C structs in copy
// and view mode (writeRaw, full validation by the core, readRaw, compareRaw),
// with roundtripRaw too, and nothing leaked. scripts/cross/setup.sh makes the
// virtualenv with pyarrow the first time (it needs PyPI; later runs reuse it):
// when it cannot, these tests fail, never skip.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ArrowCDevice } from '../ts/api.js';
import { writeSchema } from '../ts/model/schema.js';
import { recordBatchField } from '../ts/model/types.js';
import { concatRaw } from '../ts/model/concat.js';
import { readIpc } from '../ts/io/ipc/read.js';
import type { IntegrationFile } from '../ts/io/json/read.js';
import { readRaw, writeRaw, type RawArray } from '../ts/model/raw.js';
import { compareRaw, rawValues } from '../ts/model/raw-values.js';
import { roundtripRaw } from '../ts/roundtrip/roundtrip.js';
import { typeToString, type Metadata } from '../ts/model/types.js';
import { core, MODES } from './helpers.js';

const ROOT = resolve(__dirname, '..');
const SETUP = join(ROOT, 'scripts', 'cross', 'setup.sh');
const SCRIPT = join(ROOT, 'scripts', 'cross', 'pyarrow_fixtures.py');
const PYTHON = join(ROOT, 'build', 'venv-cross', 'bin', 'python');
const FULL = 3;

/** The fixtures pyarrow_fixtures.py writes, in its order (the manifest is checked against this list). */
const FIXTURES = [
  'primitives', 'temporal', 'decimals', 'views', 'list_views', 'run_end_encoded', 'unions', 'dictionaries',
  'dictionary_deltas', 'dictionary_replacement', 'maps', 'nested_sliced', 'extensions', 'empty_batch', 'no_batches',
  'legacy_v4', 'compressed_zstd', 'compressed_lz4',
];

interface Fixture {
  name: string;
  file: string | null;
  stream: string;
  error: { code: string; message: string } | null;
  schema: {
    metadata: Record<string, string> | null;
    fields: { name: string; type: string; nullable: boolean; metadata: Record<string, string> | null }[];
  };
  batches: { length: number; columns: unknown[][] }[];
}

interface Manifest {
  pyarrow: string;
  fixtures: Fixture[];
}

function run(command: string, args: string[], timeout: number): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout, killSignal: 'SIGKILL' });
}

function describeRun(what: string, r: SpawnSyncReturns<string>): string {
  return `${what}: exit status ${r.status}${r.signal ? `, killed by ${r.signal}` : ''}${r.error ? `, ${r.error.message}` : ''}\n` +
    `--- stdout ---\n${r.stdout ?? ''}\n--- stderr ---\n${r.stderr ?? ''}`;
}

const plain = (m: Metadata | null) => (m === null || m.size === 0 ? null : Object.fromEntries([...m].sort()));
const sorted = (m: Record<string, string> | null) => (m === null ? null : Object.fromEntries(Object.entries(m).sort()));

let out = '';
let manifest: Manifest | undefined;
let acd: ArrowCDevice;

beforeAll(async () => {
  acd = await core();
  // The first run installs pyarrow into build/venv-cross (about 20 s with a warm pip cache).
  const setup = run('bash', [SETUP], 240_000);
  if (setup.status !== 0) throw new Error(`scripts/cross/setup.sh failed: the cross-implementation tests need it\n${describeRun('setup.sh', setup)}`);
  out = mkdtempSync(join(tmpdir(), 'acd-cross-'));
  const written = run(PYTHON, [SCRIPT, out], 120_000);
  if (written.status !== 0) throw new Error(describeRun('pyarrow_fixtures.py', written));
  manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;
}, 300_000);

afterAll(() => {
  if (out !== '') rmSync(out, { recursive: true, force: true });
});

function fixture(name: string): Fixture {
  if (manifest === undefined) throw new Error('no manifest: the fixtures were not written (see the first failure)');
  const f = manifest.fixtures.find((x) => x.name === name);
  if (f === undefined) throw new Error(`the manifest has no fixture ${name}`);
  return f;
}

/** The fixture's IPC inputs: [format, bytes]. */
function inputs(f: Fixture): [string, Uint8Array][] {
  const out_: [string, Uint8Array][] = [];
  if (f.file !== null) out_.push(['file', new Uint8Array(readFileSync(join(out, f.file)))]);
  out_.push(['stream', new Uint8Array(readFileSync(join(out, f.stream)))]);
  return out_;
}

// Every fixture is readable: the compressed ones too (LZ4_FRAME and ZSTD bodies).
const readable = FIXTURES;

test('the manifest lists the fixtures this test knows, written by pyarrow', () => {
  expect(manifest?.fixtures.map((f) => f.name)).toEqual(FIXTURES);
  expect(manifest?.pyarrow).toMatch(/^\d+\.\d+\.\d+/);
  // None is refused any more (the compressed ones were, before LZ4_FRAME and ZSTD were read).
  expect(manifest?.fixtures.filter((f) => f.error !== null).map((f) => f.name)).toEqual([]);
  // Only the dictionary replacement is stream-only: the file format cannot hold it.
  expect(manifest?.fixtures.filter((f) => f.file === null).map((f) => f.name)).toEqual(['dictionary_replacement']);
});

describe.each(readable)('%s', (name) => {
  test('file and stream: the schema and every value pyarrow wrote', () => {
    const f = fixture(name);
    for (const [format, bytes] of inputs(f)) {
      const file = readIpc(bytes);
      expect([format, file.schema.fields.map((x) => ({ name: x.name, type: typeToString(x.type), nullable: x.nullable, metadata: plain(x.metadata) }))])
        .toEqual([format, f.schema.fields.map((x) => ({ ...x, metadata: sorted(x.metadata) }))]);
      expect([format, plain(file.schema.metadata)]).toEqual([format, sorted(f.schema.metadata)]);
      expect([format, file.batches.map((b) => b.length)]).toEqual([format, f.batches.map((b) => b.length)]);
      file.batches.forEach((b, i) => {
        b.children.forEach((c, k) => {
          expect([format, i, f.schema.fields[k]!.name, rawValues(c)]).toEqual([format, i, f.schema.fields[k]!.name, f.batches[i]!.columns[k]]);
        });
      });
    }
  });

  test('the stream and the file read the same', () => {
    const [first, ...rest] = inputs(fixture(name)).map(([, bytes]) => readIpc(bytes));
    for (const other of rest) {
      expect(other.batches.length).toBe(first!.batches.length);
      other.batches.forEach((b, i) => expect(compareRaw(first!.batches[i]!, b, `batches[${i}]`)).toEqual([]));
    }
  });

  test.each(MODES)('every batch through the C structs (%s mode): full validation, equal values, nothing leaked', (mode) => {
    const core_ = acd.core;
    const s = core_.structs;
    for (const [format, bytes] of inputs(fixture(name))) {
      const file = readIpc(bytes);
      const start = acd.bytesAllocated();
      const schema = core_.alloc(s.size('ArrowSchema'));
      const array = core_.alloc(s.size('ArrowArray'));
      try {
        writeSchema(core_, schema, recordBatchField(file.schema));
        file.batches.forEach((batch, i) => {
          writeRaw(core_, array, batch);
          try {
            core_.arrayValidate(schema, array, FULL);
            const back = readRaw(core_, array, batch.type, mode);
            expect([format, i, compareRaw(batch, back, `batches[${i}]`)]).toEqual([format, i, []]);
          } finally {
            core_.arrayRelease(array);
          }
          expect(s.ptr('ArrowArray', array, 'release')).toBe(0);
        });
      } finally {
        core_.schemaRelease(schema);
        core_.free(array);
        core_.free(schema);
      }
      expect([format, acd.bytesAllocated()]).toEqual([format, start]);
    }
  });

  test.each(MODES)('roundtripRaw (%s mode)', (mode) => {
    for (const [format, bytes] of inputs(fixture(name))) {
      const file: IntegrationFile = readIpc(bytes);
      const summary = roundtripRaw(acd, file, `${name}.${format}`, { mode, validate: 'full' });
      expect(summary.errors).toEqual([]);
      expect(summary.mismatches).toEqual([]);
      expect(summary).toMatchObject({ ok: true, bytesLeaked: 0, batches: file.batches.length, columns: file.schema.fields.length });
    }
  });

  test('concatRaw (delta dictionaries) of every column with itself and with a slice', () => {
    for (const [, bytes] of inputs(fixture(name)).slice(0, 1)) {
      for (const batch of readIpc(bytes).batches) {
        batch.children.forEach((a, k) => {
          const values = rawValues(a);
          expect([k, rawValues(concatRaw(a, a))]).toEqual([k, [...values, ...values]]);
          if (a.length < 2) return;
          const tail: RawArray = { ...a, offset: a.offset + 1, length: a.length - 1, nullCount: -1 };
          expect([k, rawValues(concatRaw(tail, a))]).toEqual([k, [...values.slice(1), ...values]]);
        });
      }
    }
  });
});

describe("apache-arrow's own reader: dictionaries kept in chunks (deltas) export as one dictionary per batch", () => {
  test.each(['dictionaries', 'dictionary_deltas', 'dictionary_replacement'])('%s: every batch exported and imported raw, the values pyarrow wrote', (name) => {
    const f = fixture(name);
    for (const [format, bytes] of inputs(f)) {
      const start = acd.bytesAllocated();
      const table = arrow.tableFromIPC(bytes);
      expect([format, table.batches.length]).toEqual([format, f.batches.length]);
      table.batches.forEach((batch, i) => {
        const exported = acd.exportBatch(batch);
        const raw = acd.importRaw(exported.schema, exported.array, { validate: 'full' });
        exported.release();
        raw.value.array.children.forEach((c, k) => {
          expect([format, i, k, rawValues(c)]).toEqual([format, i, k, f.batches[i]!.columns[k]]);
        });
        raw.release();
      });
      expect([format, acd.bytesAllocated()]).toEqual([format, start]);
    }
    // apache-arrow keeps the deltas as chunks: the case this checks.
    if (name === 'dictionary_deltas') {
      const last = arrow.tableFromIPC(inputs(f)[0]![1]).batches.at(-1)!;
      expect(last.data.children[0]!.dictionary!.data.length).toBeGreaterThan(1);
    }
  });
});
