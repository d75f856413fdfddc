// The benchmark runs and reports every figure (at a tiny scale: no timing
// target is asserted here, only that each figure is there, finite and positive).
import { afterAll, describe, expect, jest, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUICK_SIZES, makeSet, makeSets, scaleSizes, type SetName } from '../ts/bench/data.js';
import { PROGRAMS } from '../ts/bench/bundles.js';
import { FIGURES, PENDING, TARGET_SETS, measuredOn } from '../ts/bench/figures.js';
import { foreignOf, measureSet, type Ffi } from '../ts/bench/measure.js';
import { structReader } from '../ts/bench/floors.js';
import { WITHOUT_ENV } from '../ts/bench/optional.js';
import { iterate } from '../ts/bench/timing.js';
import { TARGETS, derive, resultTable, type Report, type SetReport } from '../ts/bench/report.js';
import { load, type ArrowCDevice } from '../ts/index.js';
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
  test('--quick --scale 0.01 --json FILE writes every figure, finite and positive, and every target\'s verdict; the tables go to stdout', async () => {
    const file = outFile();
    const { code, out, err } = await run('--quick', '--scale', '0.01', '--json', file);
    expect(code).toBe(0);
    expect(out).toMatch(/^arrow-c-device bench: /);
    expect(out.endsWith(`\nwrote ${file}`)).toBe(true);
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
        // Every sample is in the report: the median is theirs.
        const sorted = [...t.times].sort((a: number, b: number) => a - b);
        expect({ set, figure: f.key, n: t.times.length, min: sorted[0], max: sorted.at(-1) }).toEqual({ set, figure: f.key, n: t.samples, min: t.min, max: t.max });
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

    // Issue 14's targets on its four sets, each once, with the measured value of its derived
    // figure and the verdict of comparing it with the limit (none is asserted to be met).
    const wanted = TARGETS.flatMap((spec) => Object.entries(spec.limits).map(([set, limit]) => ({ spec, set, limit })));
    expect(r.targets.map((t: { id: string; set: string }) => `${t.id} ${t.set}`)).toEqual(wanted.map((w) => `${w.spec.id} ${w.set}`));
    r.targets.forEach((t: { value: number; met: boolean }, i: number) => {
      const { spec, set, limit } = wanted[i]!;
      const value = r.sets[set].derived[spec.key];
      expect(t).toEqual({ id: spec.id, set, what: spec.what, value, unit: spec.unit, op: spec.op, limit, met: spec.op === '<=' ? value <= limit : value >= limit, issue: spec.issue });
      expect(Number.isFinite(t.value)).toBe(true);
      const what = spec.issue === 14 ? spec.what : `${spec.what} (issue ${spec.issue}'s; not an issue-14 target)`;
      expect(out).toContain(`| ${what} | ${set} | `);
    });
    for (const set of TARGET_SETS) {
      for (const id of ['ffi-view-over-import-view', 'import-view-over-floor-data', 'ffi-copy-over-import-copy', 'export-share-of-memcpy', 'ipc-over-export',
        'foreign-view-over-import-view', 'foreign-copy-over-memcpy-out']) {
        expect(r.targets.filter((t: { id: string; set: string }) => t.id === id && t.set === set)).toHaveLength(1);
      }
    }
    expect(r.targets.filter((t: { set: string }) => t.set === 'wide').map((t: { id: string }) => t.id))
      .toEqual(expect.arrayContaining(['import-view-per-node', 'export-per-node']));
    // The imports { from } a second core: on the four sets of the targets, against this core's own import and the floor out of its memory.
    for (const set of TARGET_SETS) {
      const d = r.sets[set].derived;
      expect({ set, ok: [d.foreignViewOverImportView, d.foreignCopyOverImportCopy, d.foreignCopyOverForeignMemcpyOut].every(positive) }).toEqual({ set, ok: true });
      expect(d.foreignCopyOverForeignMemcpyOut).toBeCloseTo(r.sets[set].figures['foreign.importCopy'].median / r.sets[set].figures['floor.foreignMemcpyOut'].median, 10);
    }
    for (const set of ['nested', 'stream']) expect(Object.keys(r.sets[set].figures).filter((k) => k.startsWith('foreign.'))).toEqual([]);
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
    expect(r.targets.length).toBe(TARGETS.filter((t) => !t.id.includes('ffi')).reduce((n, t) => n + Object.keys(t.limits).length, 0));
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

  test('steps compared with each other (sameReps) are repeated alike: the fewest times any of them was calibrated to', () => {
    const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end); };
    const it = { warmup: 3, samples: 3, minSampleMs: 2, maxReps: 100, sameReps: [['fast', 'slow']] };
    const figures = iterate(it, (t) => {
      t.repeat('fast', () => busy(0.01));
      t.repeat('slow', () => busy(1));
      t.repeat('alone', () => busy(0.01));
    });
    const reps = (name: string) => figures.get(name)!.reps;
    expect(reps('slow')).toBeLessThanOrEqual(2);
    expect(reps('fast')).toBe(reps('slow'));
    expect(reps('alone')).toBeGreaterThan(10);
  });

  test('a step\'s time does not include the clock\'s cold first read: the clock is read once before t0', () => {
    // A clock whose first read after work that swept the caches costs 5 ms, spent after the time it returns
    // (as performance.now() after a copy of tens of MB, by 3-4 us); the step itself takes 1 ms.
    let clock = 0;
    let cold = true;
    const spy = jest.spyOn(performance, 'now').mockImplementation(() => {
      const time = clock;
      if (cold) clock += 5;
      cold = false;
      return time;
    });
    try {
      const figures = iterate({ warmup: 1, samples: 3, minSampleMs: 0, maxReps: 1 }, (t) => {
        cold = true; // untimed work before the step (a reader's exports) swept the caches
        t.run('step', () => { clock += 1; cold = true; });
      });
      expect(figures.get('step')!.times).toEqual([1, 1, 1]);
    } finally {
      spy.mockRestore();
    }
  });

  test('a group of steps repeated at least twice (atLeastTwice) when its fast step would be alone: not below two, within maxReps; not when that step is slow', () => {
    const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end); };
    const body = (fast: number) => (t: Parameters<Parameters<typeof iterate>[1]>[0]) => {
      t.repeat('fast', () => busy(fast));
      t.repeat('slow', () => busy(3));
      t.repeat('other', () => busy(3));
    };
    const group = { sameReps: [['fast', 'slow']], atLeastTwice: { when: 'fast', names: ['fast', 'slow'] } };
    const figures = iterate({ warmup: 2, samples: 2, minSampleMs: 1, maxReps: 100, ...group }, body(0.01));
    expect([figures.get('fast')!.reps, figures.get('slow')!.reps, figures.get('other')!.reps]).toEqual([2, 2, 1]);
    expect(iterate({ warmup: 2, samples: 2, minSampleMs: 1, maxReps: 1, ...group }, body(0.01)).get('slow')!.reps).toBe(1);
    const slow = iterate({ warmup: 2, samples: 2, minSampleMs: 1, maxReps: 100, ...group }, body(2));
    expect([slow.get('fast')!.reps, slow.get('slow')!.reps]).toEqual([1, 1]);
  });

  test('the struct-reading floor reads every struct of the trees: a change to any word, pointer array entry or string it reaches changes its sum', async () => {
    const acd = await load();
    const read = structReader(acd);
    const batch = makeSets(scaleSizes(QUICK_SIZES, 0.01)).find((s) => s.name === 'nested')!.batches[0]!;
    const dictionaries = makeSets(scaleSizes(QUICK_SIZES, 0.01)).find((s) => s.name === 'mixed')!.batches[0]!;
    for (const b of [batch, dictionaries]) {
      using e = acd.exportBatch(b);
      const s = acd.core.structs;
      const words = new Int32Array(acd.memory.buffer as ArrayBuffer);
      const bytes = new Uint8Array(acd.memory.buffer as ArrayBuffer);
      // Every struct of both trees, with the last word of each and (schemas) the first byte of its name.
      const schemas: number[] = [];
      const arrays: number[] = [];
      const walk = (ptr: number, kind: 'ArrowSchema' | 'ArrowArray', out: number[]) => {
        out.push(ptr);
        const children = s.ptr(kind, ptr, 'children');
        for (let c = 0; c < s.i64(kind, ptr, 'n_children'); c++) walk(s.ptrAt(children + 4 * c), kind, out);
        const dictionary = s.ptr(kind, ptr, 'dictionary');
        if (dictionary !== 0) walk(dictionary, kind, out);
      };
      walk(e.schema, 'ArrowSchema', schemas);
      walk(e.array, 'ArrowArray', arrays);
      expect(arrays.length).toBeGreaterThan(4);
      const changes = (at: number, sum: () => number, view: Int32Array | Uint8Array) => {
        const before = sum();
        view[at]! += 1;
        const after = sum();
        view[at]! -= 1;
        return after - before;
      };
      for (const p of schemas) {
        expect(changes((p + s.size('ArrowSchema')) / 4 - 1, () => read.schema(e.schema), words)).toBe(1);
        const name = s.ptr('ArrowSchema', p, 'name');
        if (bytes[name] !== 0) expect(changes(name, () => read.schema(e.schema), bytes)).toBe(1);
      }
      for (const p of arrays) {
        expect(changes((p + s.size('ArrowArray')) / 4 - 1, () => read.array(e.array), words)).toBe(1);
        const buffers = s.ptr('ArrowArray', p, 'buffers');
        const n = s.i64('ArrowArray', p, 'n_buffers');
        if (n > 0) expect(changes(buffers / 4 + n - 1, () => read.array(e.array), words)).toBe(1);
      }
    }
  });

  test('--help prints the usage and exits 0', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    expect(out).toMatch(/^usage:\n  arrow-c-device bench \[--quick\]/);
    expect(out).toContain('[--json [FILE]]');
    expect(out).toMatch(/\n  --json \[FILE\] +with FILE: write the report/);
  });

  test('--json alone: the report as one JSON object on stdout, no tables; --out FILE writes the same report', async () => {
    const file = outFile();
    const { code, out } = await run('--quick', '--scale', '0.01', '--json', '--out', file);
    expect(code).toBe(0);
    const printed = JSON.parse(out);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(printed.ok).toBe(true);
    expect(Object.keys(printed).filter((k) => k !== 'ok')).toEqual(Object.keys(written));
    expect(printed.targets.map((t: { id: string; set: string }) => `${t.id} ${t.set}`)).toEqual(written.targets.map((t: { id: string; set: string }) => `${t.id} ${t.set}`));
  }, 60_000);

  test('the imports { from } a second core: measured on the sets of the targets only, their output checked, and a leak in that core is an error', async () => {
    const acd = await load();
    const other = await load();
    const sets = makeSets(scaleSizes(QUICK_SIZES, 0.01));
    const it = { warmup: 1, samples: 1, minSampleMs: 0, maxReps: 1 };
    const foreign = foreignOf(acd, other);
    for (const set of sets) {
      const { figures } = measureSet(acd, null, set, it, { foreign });
      const keys = [...figures.keys()].filter((k) => k.startsWith('foreign.') || k === 'floor.foreignMemcpyOut').sort();
      expect({ set: set.name, keys }).toEqual({ set: set.name, keys: TARGET_SETS.includes(set.name) ? ['floor.foreignMemcpyOut', 'foreign.importCopy', 'foreign.importView'] : [] });
    }
    expect([acd.bytesAllocated(), other.bytesAllocated(), foreign.from.bytesAllocated()]).toEqual([0, 0, 0]);
    // The second core keeps 16 bytes of each export: measureSet says so after the set.
    const leaky = {
      memory: other.memory, core: other.core, bytesAllocated: () => other.bytesAllocated(),
      exportBatch: (b: Parameters<ArrowCDevice['exportBatch']>[0]) => { other.core.alloc(16); return other.exportBatch(b); },
    } as unknown as ArrowCDevice;
    const narrow = sets.find((s) => s.name === 'narrow')!;
    expect(() => measureSet(acd, null, narrow, it, { foreign: { core: leaky, from: foreign.from } }))
      .toThrow(/^narrow: \d+ bytes of the second core's memory still allocated after the set$/);
    expect(acd.bytesAllocated()).toBe(0);
  }, 60_000);

  test.each([
    [['--frobnicate'], 'bench: unknown option --frobnicate; its options are --quick, --scale, --out, --json, --progress, --no-progress or --help (arrow-c-device bench --help)'],
    [['--out'], '--out: expected a value (FILE), found nothing'],
    [['--json='], '--json: expected a value (FILE), found nothing (or give --json alone)'],
    [['--json', 'a.json', 'b.json'], 'bench: unexpected argument b.json'],
    [['--json', '--', 'a.json'], 'bench: unexpected argument a.json'],
    [['--scale', '0'], '--scale: expected a number in (0, 1], found 0'],
    [['--scale', 'lots'], '--scale: expected a number in (0, 1], found lots'],
  ])('bad usage %j: one line on stderr, exit 2', async (argv, message) => {
    const { code, out, err } = await run(...(argv as string[]));
    expect({ code, err }).toEqual({ code: 2, err: [`arrow-c-device: ${message}`] });
    // stdout: nothing, or with --json the error as JSON.
    if (argv.some((a) => a === '--json' || a.startsWith('--json='))) expect(JSON.parse(out)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError', message } });
    else expect(out).toBe('');
  });

  test('a set built alone is the one makeSets builds (each from a generator of its own); another seed, other values', () => {
    const sizes = scaleSizes(QUICK_SIZES, 0.01);
    const all = makeSets(sizes);
    const values = (b: { batches: { toArray(): { toJSON(): unknown }[] }[] }) => JSON.stringify(b.batches.map((x) => x.toArray().map((r) => r.toJSON())),
      (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    expect(all.map((s) => s.name)).toEqual(SETS);
    for (const name of SETS) {
      const alone = makeSet(name, sizes);
      const together = all.find((s) => s.name === name)!;
      expect([alone.rows, alone.columns, alone.bytes, alone.batches.length]).toEqual([together.rows, together.columns, together.bytes, together.batches.length]);
      expect(values(alone)).toBe(values(together));
      expect(values(makeSet(name, sizes, 0x5eee))).not.toBe(values(together));
    }
  });

  test('--json: bad usage is one JSON object on stdout too', async () => {
    const { code, out, err } = await run('--json', '--scale', '2');
    expect(code).toBe(2);
    expect(err).toEqual(['arrow-c-device: --scale: expected a number in (0, 1], found 2']);
    expect(JSON.parse(out)).toEqual({ ok: false, exitCode: 2, error: { name: 'UsageError', code: 'ERR_USAGE', errno: null, message: '--scale: expected a number in (0, 1], found 2' } });
  });
});
