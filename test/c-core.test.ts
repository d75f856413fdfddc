// The C core's own tests (test/c/test_*.c, run by test/c/run.sh): natively
// (with ASan/UBSan when the compiler has them) and compiled by emcc, where
// reads are bounded by the wasm linear memory. Each program prints one summary
// line per build ("c-core: N passed, 0 failed", "c-stream: ...", ...).
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const SUMMARY = /^(c-[a-z]+): (\d+) passed, (\d+) failed/;

// The programs known to exist, each run twice (native and wasm); others may be added.
const KNOWN = ['c-core', 'c-stream', 'c-device'];

test('test/c/run.sh --wasm: native and wasm builds of the C tests pass', () => {
  const r = spawnSync('bash', [join(__dirname, 'c', 'run.sh'), '--wasm'], { encoding: 'utf8', timeout: 300_000 });
  const out = `${r.stdout}\n${r.stderr}`;
  expect({ status: r.status, out }).toMatchObject({ status: 0 });
  const lines = r.stdout.split('\n').filter((l) => SUMMARY.test(l));
  expect(lines.length).toBeGreaterThanOrEqual(KNOWN.length * 2);
  for (const name of KNOWN) expect(lines.filter((l) => l.startsWith(`${name}:`))).toHaveLength(2);
  for (const line of lines) {
    const [, name, passed, failed] = SUMMARY.exec(line)!;
    expect({ name, failed: Number(failed) }).toEqual({ name, failed: 0 });
    expect(Number(passed)).toBeGreaterThan(KNOWN.includes(name) ? 100 : 0);
  }
  // The spec's int32 device array example (csrc/examples/), native and wasm: a
  // read before waiting on the sync event fails, a read after it gets the values.
  const example = r.stdout.split('\n').filter((l) => l.startsWith('c-example: '));
  expect(example.filter((l) => /a read before waiting on the sync event fails: reading cuda:1 memory at 0x[0-9a-f]+ before waiting on its sync event: 20 bytes are not there yet$/.test(l))).toHaveLength(2);
  expect(example.filter((l) => l === 'c-example: cuda:1: read 5 int32 values after waiting: 1 2 3 4 5; 0 bytes left allocated')).toHaveLength(2);
}, 300_000);
