// The fuzz loop: runs [from, from + runs) of one seed on one reused core
// (a new one after a broken instance), counts outcomes per class, route and
// level, and keeps the first reproducers of each failure class.

import { FAILURES, Fuzzer, plan, type Outcome, type RunResult } from './fuzzer.js';

export interface FuzzOptions {
  seed: number;
  runs: number;
  /** The first run index (to split a long run across test blocks). */
  from?: number;
  /** Only these run indices (replay). */
  only?: readonly number[];
  /** Per-run time bound in ms (default 5000). */
  timeoutMs?: number;
  /** Collect garbage after every run (needs node --expose-gc): finalizers then act within their run. */
  collect?: boolean;
  /** Reproducers kept per failure class (default 5). */
  keep?: number;
  onProgress?: (done: number, summary: FuzzSummary) => void;
  /** Called before each run (the command line's watchdog). */
  onStart?: (run: number) => void;
  /** Called with every result (replay prints them). */
  onResult?: (r: RunResult) => void;
}

export interface FuzzSummary {
  seed: number;
  runs: number;
  counts: Record<Outcome, number>;
  byRoute: Record<string, Partial<Record<Outcome, number>>>;
  byLevel: Record<string, Partial<Record<Outcome, number>>>;
  failures: number;
  reproducers: Partial<Record<Outcome, RunResult[]>>;
  reloads: number;
  ms: number;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzSummary> {
  const { seed } = options;
  const keep = options.keep ?? 5;
  const t0 = performance.now();
  const counts = Object.fromEntries(['ok-error', 'ok-success', ...FAILURES].map((k) => [k, 0])) as Record<Outcome, number>;
  const summary: FuzzSummary = { seed, runs: 0, counts, byRoute: {}, byLevel: {}, failures: 0, reproducers: {}, reloads: 0, ms: 0 };
  let fuzzer = await Fuzzer.create(seed, options.timeoutMs, options.collect);
  const indices = options.only ?? Array.from({ length: options.runs }, (_, i) => (options.from ?? 0) + i);
  for (const run of indices) {
    options.onStart?.(run);
    let r: RunResult;
    try {
      r = await fuzzer.runOne(run);
    } catch (e) {
      // Setting up or restoring the run failed: only a corrupted instance does that.
      const { route, level, mode } = plan(run);
      r = { run, route, level, mode, sample: '?', mutations: [], outcome: 'broken', message: `the fuzzer's own step threw ${(e as Error)?.name}: ${(e as Error)?.message}`, reload: true };
    }
    summary.runs++;
    counts[r.outcome]++;
    const route = (summary.byRoute[r.route] ??= {});
    route[r.outcome] = (route[r.outcome] ?? 0) + 1;
    const level = (summary.byLevel[r.level] ??= {});
    level[r.outcome] = (level[r.outcome] ?? 0) + 1;
    if (r.outcome !== 'ok-error' && r.outcome !== 'ok-success') {
      summary.failures++;
      const list = (summary.reproducers[r.outcome] ??= []);
      if (list.length < keep) list.push(r);
    }
    options.onResult?.(r);
    if (r.reload) {
      summary.reloads++;
      try { fuzzer.dispose(); } catch { /* a broken instance is dropped anyway */ }
      fuzzer = await Fuzzer.create(seed, options.timeoutMs, options.collect);
    }
    if (options.onProgress !== undefined && summary.runs % 1000 === 0) options.onProgress(summary.runs, summary);
  }
  try {
    fuzzer.dispose();
  } catch {
    // A broken instance may fail to free; it is dropped anyway.
  }
  summary.ms = performance.now() - t0;
  return summary;
}

/** One line per reproducer: how to replay it and what it did. */
export function describe(r: RunResult, seed: number): string {
  return `${seed}:${r.run} ${r.route} ${r.level} ${r.mode} [${r.sample}] ${r.mutations.join(' & ')} -> ${r.outcome}: ${r.message}`;
}

/** The summary as text: counts per class, per route and per level, then the reproducers. */
export function report(s: FuzzSummary): string {
  const lines: string[] = [];
  const fmt = (c: Partial<Record<Outcome, number>>) => Object.entries(c).filter(([, n]) => n! > 0).map(([k, n]) => `${k} ${n}`).join(', ');
  lines.push(`fuzz: seed ${s.seed}, ${s.runs} runs in ${(s.ms / 1000).toFixed(1)} s: ${fmt(s.counts)}; ${s.failures} failures${s.reloads ? `, ${s.reloads} reloads` : ''}`);
  for (const [route, c] of Object.entries(s.byRoute)) lines.push(`  route ${route.padEnd(12)} ${fmt(c)}`);
  for (const [level, c] of Object.entries(s.byLevel)) lines.push(`  level ${level.padEnd(12)} ${fmt(c)}`);
  for (const [outcome, list] of Object.entries(s.reproducers)) {
    lines.push(`  first ${outcome} (replay with --replay SEED:RUN):`);
    for (const r of list!) lines.push(`    ${describe(r, s.seed)}`);
  }
  return lines.join('\n');
}
