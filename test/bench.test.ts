// The benchmark runs and reports every figure (at a tiny scale: no timing
// target is asserted here, only that each figure is there, finite and positive).
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUICK_SIZES, makeSets, scaleSizes, type SetName } from '../ts/bench/data.js';
import { PROGRAMS } from '../ts/bench/bundles.js';
import { FIGURES, PENDING, measuredOn } from '../ts/bench/figures.js';
import { measureSet, type Ffi } from '../ts/bench/measure.js';
import { WITHOUT_ENV } from '../ts/bench/optional.js';
import { derive, resultTable, type Report, type SetReport } from '../ts/bench/report.js';
import { load } from '../ts/index.js';
import { main } from '../ts/cli/cli.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** `arrow-c-device bench ARGV` in this process: exit code, stdout and stderr (not a terminal). */
async function run(...argv: string[]): Promise<{ code: number; out: string; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['bench', ...argv], {}, { out: (l) => out.push(l), err: (l) => err.push(l), errWrite: (t) => err.push(t), errIsTTY: false });
  return { code, out: out.join('\n'), err };
}

function outFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'acd-bench-'));
  scratch.push(dir);
  return join(dir, 'out.json');
}

const SETS: SetName[] = ['mixed', 'narrow', 'wide', 'batches', 'nested', 'stream'];
const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;

describe('bench', () => {
  test('--quick --scale 0.01 --out FILE writes every figure, finite and positive', async () => {
    const file = outFile();
    const { code, out, err } = await run('--quick', '--scale', '0.01', '--out', file);
    expect(code).toBe(0);
    // No progress: stderr is not a terminal and --progress was not given.
    expect(err).toEqual([]);
    const r = JSON.parse(readFileSync(file, 'utf8'));
    expect(r.skipped).toEqual([]);
    expect(out).not.toContain('note:');

    expect(Object.keys(r.sets).sort()).toEqual([...SETS].sort());
    for (const set of SETS) {
      const s = r.sets[set];
      for (const f of FIGURES) {
        if (!measuredOn(f, set)) {
          expect({ set, figure: f.key, absent: s.figures[f.key] === undefined }).toEqual({ set, figure: f.key, absent: true });
          continue;
        }
        const t = s.figures[f.key];
        expect({ set, figure: f.key, ok: t !== undefined && [t.median, t.min, t.max, t.samples, t.reps].every(positive) })
          .toEqual({ set, figure: f.key, ok: true });
      }
      for (const [key, value] of Object.entries(s.derived)) {
        expect({ set, key, ok: positive(value) || (key.includes('Overhead') && Number.isFinite(value)) }).toEqual({ set, key, ok: true });
      }
      expect(positive(s.bytes) && positive(s.rows) && positive(s.batches)).toBe(true);
    }
    // Per-unit figures of the wide and many-batches sets, the per-batch overheads.
    expect(positive(r.sets.wide.derived.importViewMicrosPerUnit)).toBe(true);
    expect(Number.isFinite(r.sets.batches.derived.importViewOverheadMicrosPerBatch)).toBe(true);
    // The stream row: an ArrowArrayStream of each many-batches table, drained in view mode.
    for (const set of ['batches', 'stream']) {
      const stream = r.sets[set].figures['acd.streamView'];
      expect({ set, ok: stream !== undefined && [stream.median, stream.min, stream.max, stream.samples, stream.reps].every(positive) }).toEqual({ set, ok: true });
      expect(positive(r.sets[set].derived.streamViewOverRoundtripView)).toBe(true);
      expect(Number.isFinite(r.sets[set].derived.streamOverheadMicrosPerBatch)).toBe(true);
    }
    // The nested set: one batch of list<struct<utf8, int64>>, map<utf8, int32> and a dense union
    // (100,000 rows × 0.01); the stream set: 1,000 batches × 0.01 of 100 rows, figures per batch.
    expect(r.sets.nested).toMatchObject({ rows: 1000, columns: 3, batches: 1, unit: null });
    expect(r.sets.nested.shape).toBe('1,000 rows × 3 nested columns (list<struct<utf8, int64>>, map<utf8, int32>, dense union)');
    expect(r.sets.stream).toMatchObject({ rows: 1000, columns: 8, batches: 10, unit: { name: 'batch', count: 10 } });
    expect(positive(r.sets.stream.derived.importViewMicrosPerUnit)).toBe(true);
    // arrow-js-ffi reads every set, the nested types included (its output checked like every reader's).
    for (const set of SETS) expect({ set, cannotRead: r.sets[set].ffiCannotRead }).toEqual({ set, cannotRead: undefined });
    const overhead = r.targets.find((t: { id: string }) => t.id === 'stream-overhead');
    expect(overhead).toMatchObject({ set: 'batches', unit: 'µs', op: '<=', limit: 10 });
    expect(overhead.value).toBe(r.sets.batches.derived.streamOverheadMicrosPerBatch);

    // Every target has a finite measured value and a verdict; none is asserted.
    expect(r.targets.length).toBeGreaterThanOrEqual(20);
    for (const t of r.targets) {
      expect({ id: t.id, set: t.set, ok: Number.isFinite(t.value) && typeof t.met === 'boolean' }).toEqual({ id: t.id, set: t.set, ok: true });
    }
    expect(r.pending).toEqual(PENDING);

    // The size of the built core and glue, raw and gzipped.
    for (const part of ['wasm', 'glue', 'js', 'bundle']) {
      expect({ part, ok: positive(r.sizes[part]?.raw) && positive(r.sizes[part]?.gzip) }).toEqual({ part, ok: true });
    }
    expect(r.sizes.wasm.gzip).toBeLessThan(r.sizes.wasm.raw);
    // A user's bundle of each entry (ts/bench/bundles.ts; test/bundles.test.ts checks what each pulls in).
    expect(r.bundles.rows.map((b: { program: string }) => b.program)).toEqual(PROGRAMS);
    for (const b of r.bundles.rows) expect({ p: b.program, ok: positive(b.raw) && positive(b.gzip) }).toEqual({ p: b.program, ok: true });
    expect(out).toContain("| `import { load } from 'arrow-c-device'` |");

    expect(r.machine.cores).toBeGreaterThan(0);
    expect(r.options).toMatchObject({ quick: true, scale: 0.01 });
    // The printed table has a row per figure and set it is measured on, and none pending.
    for (const f of FIGURES) {
      for (const set of SETS) {
        if (measuredOn(f, set)) expect(out).toContain(`| ${set} | ${f.label} |`);
        else expect(out).not.toContain(`| ${set} | ${f.label} |`);
      }
    }
    expect(PENDING).toEqual([]);
  }, 60_000);

  test(`without arrow-js-ffi (${WITHOUT_ENV}=arrow-js-ffi, as when the optional peer is not installed): its rows and targets are skipped with a note`, async () => {
    process.env[WITHOUT_ENV] = 'arrow-js-ffi';
    let result;
    const file = outFile();
    try {
      result = await run('--quick', '--scale', '0.01', '--out', file, '--progress');
    } finally {
      delete process.env[WITHOUT_ENV];
    }
    const { code, out, err } = result;
    expect(code).toBe(0);
    expect(out.split('\n')[1]).toBe(`note: arrow-js-ffi could not be imported (left out by ${WITHOUT_ENV}=arrow-js-ffi): its rows and targets are skipped ` +
      '(ffi.view, ffi.copy). It is an optional peer dependency; npm install arrow-js-ffi to compare with it.');
    const r = JSON.parse(readFileSync(file, 'utf8'));
    expect(r.skipped).toEqual([{ package: 'arrow-js-ffi', reason: `left out by ${WITHOUT_ENV}=arrow-js-ffi`, figures: ['ffi.view', 'ffi.copy'] }]);
    for (const set of SETS) {
      for (const f of FIGURES.filter((x) => measuredOn(x, set))) {
        const skipped = f.key.startsWith('ffi.');
        expect({ set, figure: f.key, measured: r.sets[set].figures[f.key] !== undefined }).toEqual({ set, figure: f.key, measured: !skipped });
        expect(out).toContain(skipped ? `| ${set} | ${f.label} | — | | | skipped: arrow-js-ffi could not be imported (see the note) |` : `| ${set} | ${f.label} | `);
      }
      expect(Object.keys(r.sets[set].derived).filter((k) => k.startsWith('ffi'))).toEqual([]);
    }
    // The other targets are all there; arrow-js-ffi's are not.
    expect(r.targets.map((t: { id: string }) => t.id).filter((id: string) => id.includes('ffi'))).toEqual([]);
    expect(r.targets.length).toBeGreaterThanOrEqual(13);
    // --progress: the sets and iterations on stderr, then the last line.
    expect(err[0]).toMatch(/^bench: set 1\/6 \(batches: .*\), iteration 1\/13, \d+ s$/);
    expect(err[err.length - 1]).toMatch(/^bench: 6 sets measured in [\d.]+ s$/);
  }, 60_000);

  test('a set arrow-js-ffi cannot read (it throws, or reads other values): its rows say so with the reason; the others are measured', async () => {
    const acd = await load();
    const sets = makeSets(scaleSizes(QUICK_SIZES, 0.01));
    const nested = sets.find((s) => s.name === 'nested')!;
    const mixed = sets.find((s) => s.name === 'mixed')!;
    const it = { warmup: 1, samples: 1, minSampleMs: 0, maxReps: 1 };
    const throws: Ffi = { parseTable: () => { throw new Error('Unsupported format: +ud:0,1,2\nat parseField'); } };
    const misreads: Ffi = { parseTable: () => mixed.table };
    for (const [ffi, reason] of [
      [throws, 'Unsupported format: +ud:0,1,2'],
      [misreads, 'nested: arrow-js-ffi (view) read 1 batches of 4000 rows, expected 1 of 1000'],
    ] as const) {
      const { figures, ffiCannotRead } = measureSet(acd, ffi, nested, it);
      expect(ffiCannotRead).toBe(reason);
      const keys = [...figures.keys()];
      expect(keys.filter((k) => k.startsWith('ffi.'))).toEqual([]);
      expect(keys).toEqual(expect.arrayContaining(['acd.export', 'acd.importView', 'acd.importCopy', 'ipc.total', 'floor.build']));
      const s: SetReport = {
        shape: nested.shape, rows: nested.rows, columns: nested.columns, batches: 1, bytes: nested.bytes, unit: null,
        figures: Object.fromEntries(figures), ffiCannotRead, derived: {},
      };
      s.derived = derive(s);
      expect(Object.keys(s.derived).filter((k) => k.startsWith('ffi'))).toEqual([]);
      const table = resultTable({ sets: { nested: s }, skipped: [], pending: [] } as unknown as Report);
      for (const f of FIGURES.filter((x) => x.key.startsWith('ffi.'))) {
        expect(table).toContain(`| nested | ${f.label} | — | | | skipped: arrow-js-ffi cannot read this set (${reason}) |`);
      }
    }
  }, 60_000);

  test('--help prints the usage and exits 0', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    expect(out).toMatch(/^usage:\n  arrow-c-device bench \[--quick\]/);
  });

  test.each([
    [['--frobnicate'], 'bench: unknown option --frobnicate; its options are --quick, --scale, --out, --json, --progress, --no-progress or --help (arrow-c-device bench --help)'],
    [['--out'], '--out: expected a value (FILE), found nothing'],
    [['--json', 'out.json'], 'bench: unexpected argument out.json (--json prints the report on stdout; --out FILE writes it to FILE)'],
    [['--scale', '0'], '--scale: expected a number in (0, 1], found 0'],
    [['--scale', 'lots'], '--scale: expected a number in (0, 1], found lots'],
  ])('bad usage %j: one line on stderr, exit 2', async (argv, message) => {
    const { code, out, err } = await run(...(argv as string[]));
    expect({ code, err }).toEqual({ code: 2, err: [`arrow-c-device: ${message}`] });
    // stdout: nothing, or with --json the error as JSON.
    if (argv.includes('--json')) expect(JSON.parse(out)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError', message } });
    else expect(out).toBe('');
  });

  test('--json: bad usage is one JSON object on stdout too', async () => {
    const { code, out, err } = await run('--json', '--scale', '2');
    expect(code).toBe(2);
    expect(err).toEqual(['arrow-c-device: --scale: expected a number in (0, 1], found 2']);
    expect(JSON.parse(out)).toEqual({ ok: false, exitCode: 2, error: { name: 'UsageError', code: 'ERR_USAGE', errno: null, message: '--scale: expected a number in (0, 1], found 2' } });
  });
});
