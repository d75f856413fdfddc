// Timing: iterations of a body that times its own steps; warm-up iterations
// are discarded and calibrate how often each step is repeated within one
// sample (so that a step of a few µs is not measured at the timer's
// resolution, cold, after a garbage collection); medians are reported.

import { performance } from 'node:perf_hooks';

export interface Timing {
  /** Median of the samples, in milliseconds per repetition. */
  median: number;
  min: number;
  max: number;
  samples: number;
  /** Every sample, in the order measured (ms per repetition): the spread behind the median. */
  times: number[];
  /** Repetitions of the step in each sample. */
  reps: number;
}

export interface Iterations {
  /** Iterations discarded; the fastest of them calibrates the repetitions. */
  warmup: number;
  samples: number;
  /** A step is repeated until one sample takes about this long... */
  minSampleMs: number;
  /** ...but at most this many times. */
  maxReps: number;
  /**
   * Steps compared with each other that get the same repetitions (the fewest
   * any of them was given): a sample of more repetitions allocates more, is
   * more often the one a forced collection lands in, and its median is higher.
   */
  sameReps?: string[][];
  /**
   * Steps repeated at least twice (within maxReps), after sameReps, when the
   * step `when` was calibrated to more than one repetition on its own: each
   * of their samples then follows an untimed run (repeat(), or the caller's
   * own warm run). Without it, a group whose slowest member is near the
   * calibration's threshold went from two repetitions to one from run to
   * run, and a fast step of it (`when`) from warm samples to cold ones.
   */
  atLeastTwice?: { when: string; names: string[] };
}

/** Times the steps of one iteration; each name gets one sample per iteration. */
export interface Timer {
  /** How many times the step should run in this sample: 1 while warming up, then calibrated. */
  reps(name: string): number;
  /** Times fn, which ran the step `reps` times; records the time per repetition. */
  run<T>(name: string, fn: () => T, reps?: number): T;
  /**
   * Runs fn reps(name) times in one timed window; returns its last result.
   * A step repeated more than once first runs once untimed, so that its first
   * repetition does not pay alone for code and caches left cold by other steps.
   */
  repeat<T>(name: string, fn: () => T): T;
  /** Records a duration measured otherwise (e.g. the sum of several steps). */
  add(name: string, ms: number): void;
  /** The time per repetition last recorded under name (warm-up iterations included). */
  latest(name: string): number;
}

/**
 * Runs body warmup + samples times (passing the iteration's index) and
 * returns the median of every step it timed. No garbage collection is forced
 * between steps: a forced full collection shrinks the young generation and
 * deoptimizes code (V8 "weak objects"), so the step after it would be
 * measured in a state a running program is rarely in.
 */
export function iterate(it: Iterations, body: (timer: Timer, iteration: number) => void): Map<string, Timing> {
  const samples = new Map<string, number[]>();
  const latest = new Map<string, number>();
  const fastest = new Map<string, number>();
  const reps = new Map<string, number>();
  const used = new Map<string, number>();
  let recording = false;
  const add = (name: string, ms: number) => {
    latest.set(name, ms);
    fastest.set(name, Math.min(ms, fastest.get(name) ?? Infinity));
    if (!recording) return;
    const list = samples.get(name) ?? [];
    list.push(ms);
    samples.set(name, list);
  };
  const timer: Timer = {
    reps: (name) => reps.get(name) ?? 1,
    run<T>(name: string, fn: () => T, n = 1): T {
      // The clock read once, untimed, first: after untimed work that swept the caches (the exports
      // before a reader's step copy up to 240 MB), the clock's first read costs 2.4-4.2 us more, all of
      // it after the time it returns; read as t0, it would count in the step (a few us a sample).
      performance.now();
      const t0 = performance.now();
      const result = fn();
      add(name, (performance.now() - t0) / n);
      used.set(name, n);
      return result;
    },
    repeat<T>(name: string, fn: () => T): T {
      const n = timer.reps(name);
      if (n > 1) fn();
      return timer.run(name, () => {
        let result = fn();
        for (let i = 1; i < n; i++) result = fn();
        return result;
      }, n);
    },
    add,
    latest(name: string): number {
      const ms = latest.get(name);
      if (ms === undefined) throw new Error(`timer: nothing timed under ${name} yet`);
      return ms;
    },
  };
  for (let i = 0; i < it.warmup + it.samples; i++) {
    if (i === it.warmup) {
      for (const [name, ms] of fastest) reps.set(name, Math.max(1, Math.min(it.maxReps, Math.ceil(it.minSampleMs / Math.max(ms, 1e-6)))));
      const twice = it.atLeastTwice !== undefined && (reps.get(it.atLeastTwice.when) ?? 1) > 1 ? it.atLeastTwice.names : [];
      for (const names of it.sameReps ?? []) {
        const present = names.filter((n) => reps.has(n));
        const fewest = Math.min(...present.map((n) => reps.get(n)!));
        for (const n of present) reps.set(n, fewest);
      }
      for (const n of twice) if (reps.has(n)) reps.set(n, Math.max(reps.get(n)!, Math.min(2, it.maxReps)));
    }
    recording = i >= it.warmup;
    body(timer, i);
  }
  return new Map([...samples].map(([name, list]) => [name, { ...summarize(list), reps: used.get(name) ?? 1 }]));
}

export function summarize(list: number[]): Omit<Timing, 'reps'> {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], samples: sorted.length, times: list };
}

export function gcExposed(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

/** A full garbage collection, when the runtime exposes gc (node --expose-gc): settle()'s. */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
}

/**
 * Between two sets: a collection, a turn of the event loop, another
 * collection. The sets' steps run without yielding, so the finalization
 * callbacks of the handles they released and dropped (ts/abi/handles.ts: a
 * cell and a holder per handle, 300,000 of them after the stream set) can
 * only run here; until they have, the next set would be measured with those
 * cells alive, and every major collection in it would mark them.
 */
export async function settle(): Promise<void> {
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 0));
  collectGarbage();
}
