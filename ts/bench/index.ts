// `arrow-c-device bench`: this library against apache-arrow IPC, arrow-js-ffi
// and the memory-copy floor, on the same seeded data in one run; medians and
// ratios in one table, the targets of issue 6, and the size of the build.

import { writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { load } from '../index.js';
import { FULL_SIZES, QUICK_SIZES, makeSets, scaleSizes, type SetName } from './data.js';
import { PENDING } from './figures.js';
import { measureSet, type Ffi } from './measure.js';
import { derive, perBatchOverhead, resultTable, setsTable, sizeTable, targetTable, targets, type Report, type SetReport } from './report.js';
import { bundleTable, measureBundles } from './bundles.js';
import { measureSizes } from './sizes.js';
import { collectGarbage, gcExposed, type Iterations } from './timing.js';

const USAGE = `usage: arrow-c-device bench [--quick] [--json FILE] [--scale N]
  Measures export and import (copy and view) against apache-arrow IPC,
  arrow-js-ffi and the memory-copy and object-building floors, on seeded data
  (mixed, narrow, wide, many small batches) in one run; prints medians and
  ratios, the targets, the size of the built wasm core and glue, and what a
  user's bundle of each entry of the package weighs (with esbuild, when installed).
  --quick      smaller byte-heavy sets and fewer samples (well under a minute)
  --json FILE  also write every figure to FILE as JSON
  --scale N    multiply the row, column and batch counts by N (0 < N <= 1)
  --help       this text
Run it with node --expose-gc for a garbage collection between sets.`;

const SEED = 0x5eed;

class UsageError extends Error {}

interface Options {
  quick: boolean;
  json: string | null;
  scale: number;
  help: boolean;
}

export function parseBenchArgs(argv: string[]): Options {
  const o: Options = { quick: false, json: null, scale: 1, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag}: expected a value`);
      return v;
    };
    if (flag === '--help' || flag === '-h') o.help = true;
    else if (flag === '--quick' && inline === undefined) o.quick = true;
    else if (flag === '--json') o.json = value();
    else if (flag === '--scale') {
      const v = value();
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0 || n > 1) throw new UsageError(`--scale: expected a number in (0, 1], found ${v}`);
      o.scale = n;
    } else throw new UsageError(`unknown option ${a}`);
  }
  return o;
}

/** Runs the benchmark; returns the exit code (0 done, 1 a failed check, 2 bad usage). */
export async function bench(argv: string[], print: (line: string) => void): Promise<number> {
  let o: Options;
  try {
    o = parseBenchArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    print(`arrow-c-device bench: ${e.message}`);
    print(USAGE);
    return 2;
  }
  if (o.help) {
    print(USAGE);
    return 0;
  }
  try {
    const report = await run(o, print);
    print('');
    for (const l of reportLines(report)) print(l);
    if (o.json !== null) {
      writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
      print(`\nwrote ${o.json}`);
    }
    return 0;
  } catch (e) {
    print(`arrow-c-device bench: ${(e as Error).message}`);
    return 1;
  }
}

async function run(o: Options, print: (line: string) => void): Promise<Report> {
  const loadBefore = loadavg()[0];
  const started = performance.now();
  const ffi = await loadFfi();
  const acd = await load();
  const sizes = measureSizes();
  const bundles = measureBundles(dirname(dirname(sizes.files.bundle)));
  const it: Iterations = o.quick ? { warmup: 2, samples: 11, minSampleMs: 2, maxReps: 100 } : { warmup: 3, samples: 21, minSampleMs: 5, maxReps: 100 };
  const sets = makeSets(scaleSizes(o.quick ? QUICK_SIZES : FULL_SIZES, o.scale), SEED);
  const reports: Partial<Record<SetName, SetReport>> = {};
  // The many-batches set first: its thousands of calls per iteration bring every
  // code path (ours and the alternatives') to optimized code before the big sets.
  for (const name of ['batches', 'wide', 'mixed', 'narrow'] as SetName[]) {
    const set = sets.find((s) => s.name === name)!;
    const t0 = performance.now();
    collectGarbage();
    const figures = measureSet(acd, ffi, set, it);
    print(`measured ${name}: ${set.shape}, ${it.warmup} warm-up + ${it.samples} samples, in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const r: SetReport = {
      shape: set.shape, rows: set.rows, columns: set.columns, batches: set.batches.length, bytes: set.bytes, unit: set.unit,
      figures: Object.fromEntries(figures), derived: {},
    };
    r.derived = derive(r);
    reports[name] = r;
  }
  if (reports.batches && reports.mixed) Object.assign(reports.batches.derived, perBatchOverhead(reports.batches, reports.mixed));
  const cpu = cpus();
  return {
    tool: 'arrow-c-device bench',
    date: new Date().toISOString(),
    options: { quick: o.quick, scale: o.scale, warmup: it.warmup, samples: it.samples, gcBetweenSets: gcExposed(), seed: SEED },
    seconds: Math.round((performance.now() - started) / 100) / 10,
    machine: {
      cpu: cpu[0]?.model ?? 'unknown', cores: cpu.length, memoryGiB: Math.round(totalmem() / 2 ** 30),
      os: `${platform()} ${release()} ${arch()}`, node: process.versions.node, v8: process.versions.v8,
      // Other processes competing for the cores make every figure noisier.
      loadAverageBefore: round2(loadBefore), loadAverageAfter: round2(loadavg()[0]),
    },
    sizes,
    bundles,
    sets: reports,
    targets: targets(reports),
    pending: PENDING,
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function reportLines(r: Report): string[] {
  const m = r.machine;
  const busy = Number(m.loadAverageBefore) > Number(m.cores) / 2 || Number(m.loadAverageAfter) > Number(m.cores) / 2;
  return [
    `${r.tool}: ${r.date}, ${m.cpu} (${m.cores} cores, ${m.memoryGiB} GiB), Node ${m.node}, ` +
      `${r.options.quick ? 'quick' : 'full'} run, scale ${r.options.scale}, ${r.options.warmup} warm-up + ${r.options.samples} samples, ` +
      `gc between sets: ${r.options.gcBetweenSets ? 'yes' : 'no (run node with --expose-gc)'}, ` +
      `load average ${m.loadAverageBefore} before, ${m.loadAverageAfter} after${busy ? ' (a busy machine: expect noisy figures)' : ''}`,
    '',
    ...setsTable(r),
    '',
    ...resultTable(r),
    '',
    ...targetTable(r),
    '',
    ...sizeTable(r.sizes),
    '',
    ...bundleTable(r.bundles),
  ];
}

async function loadFfi(): Promise<Ffi> {
  try {
    return (await import('arrow-js-ffi')) as unknown as Ffi;
  } catch (e) {
    throw new Error(`arrow-js-ffi is needed for the comparison and could not be loaded (${(e as Error).message}); ` +
      'install the dev dependencies: npm install');
  }
}
