// Peers' own exports, dumped and read back (issue 12, items 3 and 6;
// docs/conformance.md, "Peers' exports, dumped"): the native core library
// with its dumper (scripts/native/build.sh), the peers installed by the
// project's scripts (a peer that cannot be installed fails this file), the
// LP64 corpus; pyarrow, nanoarrow and arro3 (scripts/cross/peer_dump.py) and
// arrow-go (scripts/cross/go/, dump mode) export every valid case's expected
// values through their own exporters, and the dumper writes each export as an
// image. Each image is parsed here (ts/fixtures/parse.ts), its trees read
// from the LP64 body, written again as wasm32 structs into the core's memory
// and imported at full validation, then compared with the case (schema with
// metadata, values, a failing stream's errno and message). Every case must
// come back equal, or as docs/conformance.md records it. The images are also
// loaded by the portable C loader (test/c/fixture.sh: every root released,
// ASan), the dumper's own C tests run on the corpus (test/c/dump.sh: each
// image dumped again byte for byte; natively on the LP64 images, compiled by
// emcc on the wasm32 ones), and pyarrow's images are the same bytes on a
// second run.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Core } from '../ts/abi/core.js';
import { wasm32 } from '../ts/abi/generated/layout.js';
import { importRaw, importSchema } from '../ts/exchange/import.js';
import type { FixtureCase } from '../ts/fixtures/case.js';
import { corpusCases } from '../ts/fixtures/cases.js';
import { expectedBatches } from '../ts/fixtures/corpus.js';
import { ImageBuilder, ROOT as KIND } from '../ts/fixtures/image.js';
import { imageSpace, parseFixtureImage, readScript } from '../ts/fixtures/parse.js';
import { ERRNO, writeBatchRoots } from '../ts/fixtures/write.js';
import { readRaw, type RawArray } from '../ts/model/raw.js';
import { compareRaw } from '../ts/model/raw-values.js';
import { readField } from '../ts/model/schema.js';
import { fieldsEqual, recordBatchField, typeToString, type Field } from '../ts/model/types.js';
import { placeImage } from './fixtures-check.js';

const ROOT = resolve(__dirname, '..');
const PY = join(ROOT, 'build', 'venv-cross', 'bin', 'python');
const GO = join(ROOT, 'build', 'go-cross', 'peer_arrow_go');
const PEERS = ['pyarrow', 'nanoarrow', 'arro3', 'arrow-go'] as const;
const work = mkdtempSync(join(tmpdir(), 'acd-dump-'));
const corpus = join(work, 'corpus');
const out = join(work, 'dumped');
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface PeerLine {
  peer: string;
  case: string;
  root: 'batch' | 'device' | 'stream';
  outcome: 'dumped' | 'refused' | 'export-error' | 'unsupported';
  message: string | null;
  source: string | null;
}

function run(command: string, args: string[], timeout = 600_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout, maxBuffer: 256 << 20 });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  expect({ what, status: r.status, signal: r.signal, err: r.status === 0 ? '' : `${r.stdout}\n${r.stderr}`.slice(-4000) })
    .toEqual({ what, status: 0, signal: null, err: '' });
  return r.stdout;
}

const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as PeerLine);
const steps: { what: string; r: SpawnSyncReturns<string> }[] = [];
let results: PeerLine[] = [];

beforeAll(() => {
  const step = (what: string, command: string, args: string[]) => {
    const r = run(command, args);
    steps.push({ what, r });
    return r.status === 0 ? r.stdout : null;
  };
  step('native core library', 'bash', ['scripts/native/build.sh']);
  step('python peers', 'bash', ['scripts/cross/setup.sh']);
  step('arrow-go peer', 'bash', ['scripts/cross/go/setup.sh']);
  step('corpus', 'node', ['bin/arrow-c-device.mjs', 'fixtures', '--out', corpus, '--layout', 'both']);
  const py = step('python dumps', PY, ['scripts/cross/peer_dump.py', join(ROOT, 'build', 'native', 'lib'), corpus, out, 'pyarrow', 'nanoarrow', 'arro3']);
  const go = step('arrow-go dumps', GO, ['dump', join(out, 'arrow-go'), corpus]);
  results = [...lines(py ?? ''), ...lines(go ?? '')];
}, 900_000);

const CASES = new Map(corpusCases().map((c) => [c.name, c]));
const VALID = [...CASES.values()].filter((c) => c.invalid === undefined);

// ---- reading an image back --------------------------------------------------------------

/** An LP64 tree written again as wasm32 structs into the core, imported at full validation. */
function importFull(core: Core, field: Field, raw: RawArray, releases: { schema: number; array: number }): { field: Field; array: RawArray } {
  const b = new ImageBuilder('wasm32');
  writeBatchRoots(b, field, raw, null);
  const image = parseFixtureImage(b.finish());
  const placed = placeImage(core, image, (behaviour) => (behaviour === 1 ? releases.schema : releases.array));
  try {
    const { base } = placed;
    const schema = importSchema(core, base + image.roots[0]!.offset);
    try {
      const imported = importRaw(core, schema, base + image.roots[1]!.offset, { validate: 'full' });
      const value = imported.value;
      imported.release();
      return value;
    } finally {
      schema.release();
    }
  } finally {
    placed.free();
  }
}

/** null when the image holds exactly the case's expected schema, batches and failure; else the first difference. */
function readBack(core: Core, bytes: Uint8Array, c: FixtureCase, releases: { schema: number; array: number }): string | null {
  const image = parseFixtureImage(bytes, c.name);
  const space = imageSpace(image, c.name);
  const s = space.structs;
  let schemaAt: number;
  let batchesAt: number[];
  let failure: { at: number; errno: number; message: string | null } | null = null;
  const kinds = image.roots.map((r) => r.kind).join(',');
  if (c.stream !== null) {
    if (kinds !== `${KIND.stream}`) return `roots of kinds ${kinds}, expected one ArrowArrayStream`;
    const script = readScript(image, image.roots[0]!.script);
    schemaAt = script.schema;
    batchesAt = script.batches;
    if (script.failAt >= 0) failure = { at: script.failAt, errno: script.errno, message: script.message };
  } else if (kinds === `${KIND.schema},${KIND.array}`) {
    schemaAt = image.roots[0]!.offset;
    batchesAt = [image.roots[1]!.offset];
  } else if (kinds === `${KIND.schema},${KIND.deviceArray}` && c.device !== undefined) {
    // The dumper dumps device arrays on the CPU only (it reads host memory): a case on a simulated device comes back on the CPU.
    const at = image.roots[1]!.offset;
    if (s.i32('ArrowDeviceArray', at, 'device_type') !== 1 || s.ptr('ArrowDeviceArray', at, 'sync_event') !== 0) return 'a device array not on the CPU';
    schemaAt = image.roots[0]!.offset;
    batchesAt = [at + s.offsetOf('ArrowDeviceArray', 'array')];
  } else {
    return `roots of kinds ${kinds}`;
  }
  const field = readField(s, schemaAt);
  const want = recordBatchField(c.schema);
  const expected = expectedBatches(c);
  if (batchesAt.length !== expected.length) return `${batchesAt.length} batches, expected ${expected.length}`;
  for (let i = 0; i < batchesAt.length; i++) {
    const imported = importFull(core, field, readRaw(space, batchesAt[i]!, field.type, 'copy', `batches[${i}]`), releases);
    if (!fieldsEqual(want, imported.field)) return `schema ${typeToString(imported.field.type)}, expected ${typeToString(want.type)} (with metadata)`;
    const d = compareRaw(expected[i]!, imported.array, `batches[${i}]`, 1);
    if (d.length > 0) return d[0]!;
  }
  const f = c.stream?.failure ?? null;
  if ((f === null) !== (failure === null)) return f === null ? `fails at ${failure!.at}` : 'does not fail';
  if (f !== null && failure !== null) {
    if (failure.errno !== ERRNO[f.errno].lp64) return `fails with errno ${failure.errno}, expected ${ERRNO[f.errno].lp64} (${f.errno}); message ${JSON.stringify(failure.message)}`;
    if (!(failure.message ?? '').includes(f.message)) return `fails with the message ${JSON.stringify(failure.message)}`;
  }
  return null;
}

// ---- what docs/conformance.md records ------------------------------------------------------

interface Recorded {
  readonly pattern: RegExp;
  readonly peer: string;
  readonly outcome: string;
}

/** The rows of the table of "Peers' exports, dumped": case (a name, or a glob with *), peer, outcome. */
function recorded(): Recorded[] {
  const doc = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');
  const start = doc.indexOf("\n## Peers' exports, dumped");
  expect(start).toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 5);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return section.split('\n').filter((l) => /^\| `/.test(l)).map((l) => {
    const [name, peer, outcome] = l.split('|').slice(1).map((x) => x.trim());
    const glob = name!.replace(/`/g, '');
    return { pattern: new RegExp(`^${glob.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\-]/g, '\\$&')).join('.*')}$`), peer: peer!, outcome: outcome! };
  });
}

describe('peers\' exports, dumped by the core\'s dumper and read back', () => {
  test('the native core library, every peer and the corpus are set up by the project\'s scripts (none may be missing)', () => {
    for (const { what, r } of steps) ok(r, what);
    expect(steps).toHaveLength(6);
  });

  test('every peer exported every valid case once', () => {
    for (const peer of PEERS) {
      const mine = results.filter((r) => r.peer === peer);
      expect([peer, mine.map((r) => r.case).sort()]).toEqual([peer, VALID.map((c) => c.name).sort()]);
    }
  });

  test('every image reads back equal to its case, at full validation, or as docs/conformance.md records', async () => {
    const core = await Core.load();
    const at = (name: 'ArrowSchema' | 'ArrowArray') => wasm32.structs[name].fields.release!.offset;
    const releases = {
      schema: core.addFunction((p: number) => core.view.setUint32(p + at('ArrowSchema'), 0, true), 'vi'),
      array: core.addFunction((p: number) => core.view.setUint32(p + at('ArrowArray'), 0, true), 'vi'),
    };
    const table = recorded();
    const found: string[] = [];
    const counts: Record<string, Record<string, number>> = {};
    try {
      for (const r of results) {
        const c = CASES.get(r.case)!;
        let outcome: string = r.outcome;
        let why = r.message ?? '';
        if (r.outcome === 'dumped') {
          const path = join(out, r.peer, `${r.case}.acdfix`);
          try {
            const d = readBack(core, new Uint8Array(readFileSync(path)), c, releases);
            outcome = d === null ? 'equal' : 'differs';
            why = d ?? '';
          } catch (e) {
            outcome = 'unreadable';
            why = (e as Error).message;
          }
        }
        (counts[r.peer] ??= {})[outcome] = (counts[r.peer]![outcome] ?? 0) + 1;
        const row = table.find((t) => t.peer === r.peer && t.pattern.test(r.case));
        const want = row?.outcome ?? 'equal';
        if (outcome !== want) found.push(`${r.case} | ${r.peer} | ${outcome} (recorded: ${want}) | ${why.slice(0, 300)}`);
      }
    } finally {
      core.removeFunction(releases.schema);
      core.removeFunction(releases.array);
    }
    // Every row of the table is used, and nothing else differs.
    const unused = table.filter((t) => !results.some((r) => r.peer === t.peer && t.pattern.test(r.case)));
    expect({ found, unused }).toEqual({ found: [], unused: [] });
    for (const peer of PEERS) expect(counts[peer]!.equal).toBeGreaterThan(90);
    process.stdout.write(`fixtures-dump: ${JSON.stringify(counts)}\n`);
  }, 300_000);

  test('every dumped image is a valid image: the portable C loader loads it and releases every root (ASan, no leak)', () => {
    const dirs = PEERS.map((p) => join(out, p));
    const images = dirs.flatMap((d) => (existsSync(d) ? readdirSync(d).filter((n) => n.endsWith('.acdfix')) : []));
    expect(images.length).toBe(results.filter((r) => r.outcome === 'dumped').length);
    const stdout = ok(run('bash', [join('test', 'c', 'fixture.sh'), ...dirs], 300_000), 'test/c/fixture.sh');
    expect(stdout).toContain(`c-fixture: loaded and released ${images.length} image files`);
    expect(stdout).toMatch(/^c-fixture: \d+ passed, 0 failed$/m);
  }, 300_000);

  test.each([['lp64', []], ['wasm32', ['--wasm']]])('the dumper\'s C tests on the %s corpus: every valid image dumped again (byte for byte, but slices and empty arrays rewritten to what a reader reads), every invalid one refused', (layout, flags) => {
    const stdout = ok(run('bash', [join('test', 'c', 'dump.sh'), ...flags, join(corpus, layout)], 300_000), 'test/c/dump.sh');
    const m = /^c-dump: corpus (\d+) images: (\d+) dumped again byte for byte, (\d+) rewritten to the bytes read, (\d+) failing streams without their failing batch, (\d+) invalid refused, (\d+) on a simulated device refused, (\d+) not dumped/m.exec(stdout);
    expect(m).not.toBeNull();
    const [images, same, trimmed, failing, refused, onDevice, skipped] = m!.slice(1).map(Number);
    expect(images).toBe(CASES.size);
    expect(refused).toBe(CASES.size - VALID.length);
    expect(onDevice).toBe([...CASES.keys()].filter((n) => n.startsWith('on-')).length);
    expect(same! + trimmed! + failing! + refused! + onDevice! + skipped!).toBe(images);
    expect(same).toBeGreaterThan(150);
    expect(stdout).toMatch(/^c-dump: \d+ passed, 0 failed$/m);
  }, 300_000);

  test('the same export gives the same image: pyarrow dumped again, byte for byte', () => {
    const again = join(work, 'again');
    const py = ok(run(PY, ['scripts/cross/peer_dump.py', join(ROOT, 'build', 'native', 'lib'), corpus, again, 'pyarrow']), 'second pyarrow dump');
    const dumped = lines(py).filter((r) => r.outcome === 'dumped');
    expect(dumped.length).toBeGreaterThan(150);
    const differ = dumped.filter((r) => !readFileSync(join(again, 'pyarrow', `${r.case}.acdfix`)).equals(readFileSync(join(out, 'pyarrow', `${r.case}.acdfix`))));
    expect(differ.map((r) => r.case)).toEqual([]);
  }, 300_000);
});
