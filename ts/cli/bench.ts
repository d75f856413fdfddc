// `arrow-c-device bench`: its option table and output. The benchmark itself
// is ts/bench/; its progress (set and iteration) goes to stderr.

import { writeFileSync } from 'node:fs';
import { reportLines, runBench } from '../bench/index.js';
import type { Report } from '../bench/report.js';
import { CheckFailed } from './errors.js';
import { UsageError } from './input.js';
import { HELP, JSON_OUTPUT, parseCommand, PROGRESS, type CommandSpec } from './options.js';
import { Progress, type Io } from './progress.js';

export const BENCH: CommandSpec = {
  name: 'bench',
  summary: 'benchmark export and import against apache-arrow IPC, arrow-js-ffi and the memory-copy floors',
  description: [
    'Measures export and import (copy and view) against apache-arrow IPC, arrow-js-ffi and the memory-copy and ' +
      'object-building floors, on seeded data (mixed, narrow, wide, many small batches, nested types, a stream of ' +
      '100-row batches) in one run, and imports { from } another wasm module (a second instance of the core, with its own ' +
      'memory); prints medians and ratios, the verdict of each target, and the size of the built wasm core and glue.',
    'arrow-js-ffi is an optional peer dependency: when it cannot be imported, its rows and targets are skipped with a ' +
      'note. Run it with node --expose-gc for a garbage collection between sets (npm run bench does).',
  ],
  options: [
    { name: 'quick', help: 'smaller byte-heavy sets and fewer samples (under a minute)' },
    { name: 'scale', value: 'N', expected: 'a number in (0, 1]', default: '1', help: 'multiply the row, column and batch counts by N (0 < N <= 1)' },
    { name: 'out', value: 'FILE', help: 'write the report to FILE as JSON, as --json FILE does' },
    {
      ...JSON_OUTPUT, value: 'FILE', optional: true,
      help: 'with FILE: write the report (every figure, ratio and target verdict) to FILE as JSON, and print the tables. ' +
        'Alone: print the report as one JSON object on stdout ({"ok":true,...} in place of the tables). ' +
        'On failure, either way, also {"ok":false,"exitCode":N,"error":{...}} on stdout',
    },
    ...PROGRESS, HELP,
  ],
  examples: ['arrow-c-device bench --quick', 'arrow-c-device bench --quick --json out.json', 'node --expose-gc node_modules/.bin/arrow-c-device bench --json bench.json',
    'arrow-c-device bench --quick --scale 0.01 --json'],
  exitCodes: [[0, 'measured (a target missed is not a failure)'], [1, 'a reader read other values than the data, or wasm memory leaked'], [2, 'bad usage, or a FILE that cannot be written']],
};

function scaleOf(value: string | boolean | undefined): number {
  if (value === undefined) return 1;
  const n = Number(value);
  if (value === '' || !Number.isFinite(n) || n <= 0 || n > 1) throw new UsageError(`--scale: expected a number in (0, 1], found ${String(value)}`);
  return n;
}

/** Runs `bench`; returns the exit code (0 measured; a failed check throws CheckFailed, exit 1). */
export async function benchCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseCommand(BENCH, argv);
  // --json FILE and --out FILE write the same report (both, when both are given).
  const files = [...new Set([values.json, values.out].filter((v): v is string => typeof v === 'string'))];
  const options = { quick: values.quick === true, scale: scaleOf(values.scale) };
  const progress = Progress.of(io, 'bench', values);
  let report: Report;
  try {
    report = await runBench(options, { progress: (t) => progress.update(t) });
  } catch (e) {
    progress.end();
    if (e instanceof UsageError) throw e;
    throw new CheckFailed(`bench: ${(e as Error).message}`, { cause: e });
  }
  progress.end(`${Object.keys(report.sets).length} sets measured`);
  for (const file of files) {
    try {
      writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    } catch (e) {
      throw new UsageError(`cannot write ${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  if (values.json === true) io.out(JSON.stringify({ ok: true, ...report }));
  else {
    for (const l of reportLines(report)) io.out(l);
    for (const file of files) io.out(`\nwrote ${file}`);
  }
  return 0;
}
