// Issue 12, item 3 (in part): the C core builds as a native library (static
// and shared, scripts/native/build.sh) that native implementers link to use
// its validator and its simulated devices: a C program linked both ways, and
// pyarrow's own exports (Arrow C++) validated by the shared library through
// ctypes at every level, released through pyarrow's release callbacks.
import { beforeAll, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const OUT = mkdtempSync(join(tmpdir(), 'acd-native-'));
const run = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  run('bash', [join(ROOT, 'scripts', 'native', 'build.sh'), OUT]);
}, 300_000);

test.each(['static', 'shared'] as const)('a C program linked %sally uses the validator and a simulated device', (how) => {
  const exe = join(OUT, `use_native_${how}`);
  const lib = how === 'static' ? [join(OUT, 'lib', 'libarrow_c_device.a')] : [`-L${join(OUT, 'lib')}`, '-larrow_c_device', `-Wl,-rpath,${join(OUT, 'lib')}`];
  run('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', `-I${join(OUT, 'include')}`, join(ROOT, 'test', 'native', 'use_native.c'), ...lib, '-o', exe]);
  const out = run(exe, []);
  expect(out).toContain('native: validator says: root.n_buffers: expected 2 for int32, found 3');
  expect(out).toMatch(/native: a host read of device memory: root\.buffers\[1\]: expected 5 values \(20 bytes\), found 0x[0-9a-f]+, which is memory of device cuda:1, not host memory/);
  expect(out).toMatch(/native: 13 passed, 0 failed/);
}, 120_000);

test("pyarrow's exports of 20 column types, whole and sliced, validate at every level; a corrupted length is refused; every struct released by pyarrow's callbacks", () => {
  run('bash', [join(ROOT, 'scripts', 'cross', 'setup.sh')]);
  const out = JSON.parse(run(join(ROOT, 'build', 'venv-cross', 'bin', 'python'), [join(ROOT, 'scripts', 'cross', 'native_validate.py'), join(OUT, 'lib')])) as
    { cases: { name: string; level: string; code: number; message: string; released: boolean }[] };
  expect(out.cases).toHaveLength(7);
  for (const c of out.cases) expect(c.released).toBe(true);
  expect(out.cases.filter((c) => c.code !== 0).map((c) => [c.name, c.message])).toEqual([
    ['batch with length + 1000', "root.children[0].length: expected >= 1040 (the parent's offset + length), found 40"],
  ]);
}, 300_000);
