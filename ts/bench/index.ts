// `arrow-c-device bench`: this library against apache-arrow IPC, arrow-js-ffi
// and the memory-copy floor, on the same seeded data in one run; medians and
// ratios in one table, the targets of issue 14, and the size of the build.
// arrow-js-ffi is an optional peer dependency: without it, its rows and
// targets are skipped with a note. The command line is ts/cli/bench.ts.

import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { load, type ArrowCDevice } from '../index.js';
import { FULL_SIZES, QUICK_SIZES, makeSets, scaleSizes, type BenchSet, type SetName } from './data.js';
import { FIGURES, PENDING } from './figures.js';
import { foreignOf, measureSet, type Ffi, type Foreign } from './measure.js';
import { importOptional } from './optional.js';
import { derive, perBatchOverhead, resultTable, setsTable, sizeTable, targetTable, targets, type Report, type SetReport, type Skipped } from './report.js';
import { bundleTable, measureBundles } from './bundles.js';
import { measureSizes } from './sizes.js';
import { gcExposed, settle, type Iterations } from './timing.js';

const SEED = 0x5eed;

/** What `arrow-c-device bench` was asked for (ts/cli/bench.ts parses the command line). */
export interface BenchOptions {
  /** Smaller byte-heavy sets and fewer samples. */
  quick: boolean;
  /** Multiplies the row, column and batch counts (0 < scale <= 1). */
  scale: number;
}

export interface BenchHooks {
  /** Where the run is (set and iteration), for the CLI's progress on stderr. */
  progress?: (text: string) => void;
}

/**
 * Measures the set `name` of `sets` and returns its report, taking the set
 * out of `sets`: nothing of it outlives the call (the report holds numbers),
 * so that no set is measured while one measured before is still alive (the
 * 10,000-batch stream set's objects made every major collection of the sets
 * after it mark them: the copies' samples were bimodal, 40 or 140–300 ms for
 * narrow's 80 MB).
 */
function measureOne(acd: ArrowCDevice, ffi: Ffi | null, foreign: Foreign, sets: Map<SetName, BenchSet>, name: SetName, it: Iterations,
  progress: (done: number, total: number, shape: string) => void): SetReport {
  const set = sets.get(name)!;
  sets.delete(name);
  const { figures, ffiCannotRead } = measureSet(acd, ffi, set, it, { foreign, onIteration: (done, total) => progress(done, total, set.shape) });
  const r: SetReport = {
    shape: set.shape, rows: set.rows, columns: set.columns, batches: set.batches.length, bytes: set.bytes, unit: set.unit,
    figures: Object.fromEntries(figures), derived: {},
    ...(ffiCannotRead === null ? {} : { ffiCannotRead }),
  };
  r.derived = derive(r);
  return r;
}

/** Runs every set and returns the report; throws when a reader misread a set or wasm memory leaked. */
export async function runBench(o: BenchOptions, hooks: BenchHooks = {}): Promise<Report> {
  const loadBefore = loadavg()[0];
  const started = performance.now();
  const skipped: Skipped[] = [];
  const ffi = await optionalFfi(skipped);
  const acd = await load();
  // A second core, loaded separately: the other module of the { from } imports.
  const foreign = foreignOf(acd, await load());
  const sizes = measureSizes();
  const bundles = measureBundles(dirname(dirname(sizes.files.bundle)));
  const it: Iterations = o.quick ? { warmup: 2, samples: 11, minSampleMs: 2, maxReps: 100 } : { warmup: 3, samples: 21, minSampleMs: 5, maxReps: 100 };
  // Built at once, in SET_NAMES' order (their buffers allocated one after the other, as a program that
  // builds its data at once has them), each dropped once measured.
  const sets = new Map(makeSets(scaleSizes(o.quick ? QUICK_SIZES : FULL_SIZES, o.scale), SEED).map((s) => [s.name, s]));
  const reports: Partial<Record<SetName, SetReport>> = {};
  // The many-batches set first: its thousands of calls per iteration bring every
  // code path (ours and the alternatives') to optimized code before the big sets.
  const order: SetName[] = ['batches', 'stream', 'wide', 'mixed', 'narrow', 'nested'];
  for (const [index, name] of order.entries()) {
    // The garbage of the set before (and of its measurement) collected, its finalizers run.
    await settle();
    reports[name] = measureOne(acd, ffi, foreign, sets, name, it, (done, total, shape) => {
      hooks.progress?.(`set ${index + 1}/${order.length} (${name}: ${shape}), iteration ${done}/${total}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    });
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
    skipped,
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
      `load average ${m.loadAverageBefore} before, ${m.loadAverageAfter} after${busy ? ' (a busy machine: expect noisy figures)' : ''}; ` +
      `${r.seconds} s`,
    ...r.skipped.map(skipNote),
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

/** The note printed for a package left out: what is skipped and how to get it. */
export function skipNote(s: Skipped): string {
  return `note: ${s.package} could not be imported (${s.reason}): its rows and targets are skipped ` +
    `(${s.figures.join(', ')}). It is an optional peer dependency; npm install ${s.package} to compare with it.`;
}

/** arrow-js-ffi, or null (and a Skipped entry) when it cannot be imported. */
async function optionalFfi(skipped: Skipped[]): Promise<Ffi | null> {
  try {
    const ffi = (await importOptional('arrow-js-ffi')) as Partial<Ffi>;
    if (typeof ffi.parseTable !== 'function') throw new Error('it has no parseTable function');
    return ffi as Ffi;
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
    skipped.push({ package: 'arrow-js-ffi', reason, figures: FIGURES.filter((f) => f.key.startsWith('ffi.')).map((f) => f.key) });
    return null;
  }
}
