// The struct-mutation fuzzer's command line (npm run fuzz -- ...):
//   --runs N        runs (default 20000)       --seed S     seed (default 1)
//   --from I        first run index            --replay S:R one run, described
//   --timeout MS    per-run time bound (default 5000)
//   --keep N        reproducers printed per failure class (default 5)
//   --gc            collect garbage after every run (slower), so that a
//                   finalizer's late release is reported with its own run
//   --watchdog S    a run still going after S seconds (a loop no time
//                   check can interrupt) stops the fuzzer: exit 1 (default 60)
// Prints progress every 1000 runs and the summary; exits 1 on any failure.

import { describe, report, runFuzz } from './run.js';

export async function main(argv: readonly string[], onStart?: (run: number) => void): Promise<number> {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const replay = arg('--replay');
  const timeoutMs = Number(arg('--timeout') ?? 5000);
  let seed = Number(arg('--seed') ?? 1);
  let only: number[] | undefined;
  if (replay !== undefined) {
    const m = /^(\d+):(\d+)$/.exec(replay);
    if (m === null) {
      console.error(`--replay: expected SEED:RUN, found '${replay}'`);
      return 2;
    }
    seed = Number(m[1]);
    only = [Number(m[2])];
  }
  const runs = Number(arg('--runs') ?? 20000);
  const from = Number(arg('--from') ?? 0);
  const keep = Number(arg('--keep') ?? 5);
  if (![seed, runs, from, timeoutMs, keep].every(Number.isSafeInteger)) {
    console.error('--seed, --runs, --from, --timeout and --keep take integers');
    return 2;
  }
  // Errors escaping the library's microtasks would otherwise end the process: count them.
  let escaped = 0;
  const onEscape = (e: unknown) => {
    escaped++;
    console.error(`fuzz: FAIL an error escaped to the event loop: ${(e as Error)?.name}: ${(e as Error)?.message}`);
  };
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
  const t0 = Date.now();
  const summary = await runFuzz({
    seed, runs, from, only, timeoutMs, onStart, keep, collect: argv.includes('--gc') || only !== undefined,
    onResult: only === undefined ? undefined : (r) => console.log(describe(r, seed)),
    onProgress: (done, s) => console.error(`fuzz: ${done}/${runs} runs, ${s.failures} failures, ${((Date.now() - t0) / 1000).toFixed(0)} s`),
  });
  console.log(report(summary));
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
  if (escaped > 0) console.log(`fuzz: ${escaped} errors escaped to the event loop`);
  return summary.failures > 0 || escaped > 0 ? 1 : 0;
}
