// The C core's own tests (test/c/test_core.c): natively (with ASan/UBSan when
// the compiler has them) and compiled by emcc, where reads are bounded by the
// wasm linear memory.
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('test/c/run.sh --wasm: native and wasm builds of the C tests pass', () => {
  const r = spawnSync('bash', [join(__dirname, 'c', 'run.sh'), '--wasm'], { encoding: 'utf8', timeout: 300_000 });
  const out = `${r.stdout}\n${r.stderr}`;
  expect({ status: r.status, out }).toMatchObject({ status: 0 });
  const lines = r.stdout.split('\n').filter((l) => /^c-core: \d+ passed, \d+ failed/.test(l));
  expect(lines).toHaveLength(2);
  for (const line of lines) {
    const [, passed, failed] = /^c-core: (\d+) passed, (\d+) failed/.exec(line)!;
    expect(Number(failed)).toBe(0);
    expect(Number(passed)).toBeGreaterThan(100);
  }
}, 300_000);
