// The benchmark runs and reports every figure (at a tiny scale: no timing
// target is asserted here, only that each figure is there, finite and positive).
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SetName } from '../ts/bench/data.js';
import { PROGRAMS } from '../ts/bench/bundles.js';
import { bench } from '../ts/bench/index.js';
import { FIGURES, PENDING, measuredOn } from '../ts/bench/figures.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function run(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await bench(argv, (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

const SETS: SetName[] = ['mixed', 'narrow', 'wide', 'batches'];
const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;

describe('bench', () => {
  test('--quick --scale 0.01 --json writes every figure, finite and positive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acd-bench-'));
    scratch.push(dir);
    const file = join(dir, 'out.json');
    const { code, out } = await run('--quick', '--scale', '0.01', '--json', file);
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(file, 'utf8'));

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
    // The stream row: an ArrowArrayStream of the many-batches table, drained in view mode.
    const stream = r.sets.batches.figures['acd.streamView'];
    expect(stream !== undefined && [stream.median, stream.min, stream.max, stream.samples, stream.reps].every(positive)).toBe(true);
    expect(positive(r.sets.batches.derived.streamViewOverRoundtripView)).toBe(true);
    expect(Number.isFinite(r.sets.batches.derived.streamOverheadMicrosPerBatch)).toBe(true);
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

  test('--help prints the usage and exits 0', async () => {
    const { code, out } = await run('--help');
    expect(code).toBe(0);
    expect(out).toMatch(/^usage: arrow-c-device bench/);
  });

  test.each([
    [['--frobnicate'], /unknown option --frobnicate/],
    [['--json'], /--json: expected a value/],
    [['--scale', '0'], /--scale: expected a number in \(0, 1\], found 0/],
    [['--scale', 'lots'], /--scale: expected a number in \(0, 1\], found lots/],
  ])('bad usage %j: a clear message, exit 2', async (argv, message) => {
    const { code, out } = await run(...(argv as string[]));
    expect(code).toBe(2);
    expect(out.split('\n')[0]).toMatch(message);
  });
});
