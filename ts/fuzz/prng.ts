// A seeded PRNG for the struct-mutation fuzzer: every run draws from its own
// generator, derived from (seed, run), so any run replays alone.

import { seeded } from '../bench/random.js';

/** The benchmarks' mulberry32 (ts/bench/random.ts), with the draws the fuzzer needs. */
export class Prng {
  /** A uniform 32-bit unsigned integer. */
  readonly u32: () => number;

  constructor(seed: number) {
    this.u32 = seeded(seed);
  }

  /** A run's generator: a splitmix-style hash of the seed and the run index. */
  static forRun(seed: number, run: number): Prng {
    let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(run >>> 0, 0x85ebca77)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
    return new Prng((h ^ (h >>> 16)) >>> 0);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : this.u32() % n;
  }

  chance(p: number): boolean {
    return this.u32() / 0x100000000 < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  /** A uniform 64-bit signed integer. */
  i64(): bigint {
    return BigInt.asIntN(64, (BigInt(this.u32()) << 32n) | BigInt(this.u32()));
  }
}
