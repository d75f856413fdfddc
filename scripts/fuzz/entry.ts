// The bundle's entry point. The main thread runs the fuzzer in a worker and
// watches it: the worker publishes the index of the run it is in, and a run
// that is still going after --watchdog seconds (default 60: a loop that no
// time check in the run can interrupt) is reported as a hang with its
// reproducer, the worker is terminated and the exit code is 1.
// --replay and --no-watchdog run in this thread.
import { isMainThread, workerData, Worker } from 'node:worker_threads';
import { main } from '../../ts/fuzz/main.js';

const finish = (code: number) => process.exit(code);
const fail = (e: unknown) => { console.error(e); process.exit(2); };

if (!isMainThread) {
  const beat = workerData.beat as Int32Array;
  main(workerData.argv as string[], (run) => { Atomics.store(beat, 0, run); Atomics.store(beat, 1, 1); }).then(finish, fail);
} else {
  const argv = process.argv.slice(2);
  const value = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1]! : fallback);
  if (argv.includes('--replay') || argv.includes('--no-watchdog')) {
    main(argv).then(finish, fail);
  } else {
    const limitMs = Number(value('--watchdog', '60')) * 1000;
    const seed = value('--seed', '1');
    const beat = new Int32Array(new SharedArrayBuffer(8));
    const worker = new Worker(new URL(import.meta.url), { workerData: { argv, beat } });
    let last = -1;
    let since = Date.now();
    let hung = false;
    const timer = setInterval(() => {
      const run = Atomics.load(beat, 0);
      if (run !== last || Atomics.load(beat, 1) === 0) {
        last = run;
        since = Date.now();
      } else if (Date.now() - since > limitMs) {
        hung = true;
        console.log(`fuzz: FAIL hang: run ${seed}:${run} did not finish within ${limitMs / 1000} s (watchdog); replay it with --replay ${seed}:${run}`);
        clearInterval(timer);
        void worker.terminate();
      }
    }, 1000);
    worker.on('error', fail);
    worker.on('exit', (code) => {
      clearInterval(timer);
      finish(hung ? 1 : code);
    });
  }
}
