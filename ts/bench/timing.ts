// Timing: iterations of a body that times its own steps, warm-up iterations
// discarded, medians reported. Setup and clean-up inside a body stay untimed.

import { performance } from 'node:perf_hooks';

export interface Timing {
  /** Median of the samples, in milliseconds. */
  median: number;
  min: number;
  max: number;
  samples: number;
}

export interface Iterations {
  warmup: number;
  samples: number;
}

/** Times steps of one iteration under a name; each name gets one sample per iteration. */
export interface Timer {
  run<T>(name: string, fn: () => T): T;
  /** Records a duration measured otherwise (e.g. the sum of several steps). */
  add(name: string, ms: number): void;
}

/**
 * Runs body warmup + samples times and returns the median of every step it
 * timed. A full garbage collection runs before each iteration when the
 * runtime exposes gc (node --expose-gc), so that one iteration's garbage is
 * not collected during the next one's timed steps.
 */
export function iterate(it: Iterations, body: (timer: Timer) => void): Map<string, Timing> {
  const samples = new Map<string, number[]>();
  let recording = false;
  const add = (name: string, ms: number) => {
    if (!recording) return;
    const list = samples.get(name) ?? [];
    list.push(ms);
    samples.set(name, list);
  };
  const timer: Timer = {
    run<T>(name: string, fn: () => T): T {
      const t0 = performance.now();
      const result = fn();
      add(name, performance.now() - t0);
      return result;
    },
    add,
  };
  for (let i = 0; i < it.warmup + it.samples; i++) {
    recording = i >= it.warmup;
    collectGarbage();
    body(timer);
  }
  return new Map([...samples].map(([name, list]) => [name, summarize(list)]));
}

export function summarize(list: number[]): Timing {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], samples: sorted.length };
}

export function gcExposed(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
}
