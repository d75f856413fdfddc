// The portable fixture loader (csrc/fixtures/, C99), built natively under
// ASan/UBSan with its tests (test/c/fixture.sh, test/c/test_fixture.c):
// images made by the test's own writer, corrupt images refused, streams
// played, every release counted, 0 leaks; the async producer driving a
// consumer's handler (test/c/test_fixture_async.c).
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const SUMMARY = /^c-fixture: (\d+) passed, (\d+) failed$/m;
const ASYNC = /^c-fixture-async: (\d+) passed, (\d+) failed$/m;

test('test/c/fixture.sh: the loader and its tests, C99, ASan/UBSan, no leak', () => {
  const r = spawnSync('bash', [join(__dirname, 'c', 'fixture.sh')], { encoding: 'utf8', timeout: 300_000 });
  expect({ status: r.status, out: `${r.stdout}\n${r.stderr}` }).toMatchObject({ status: 0 });
  const [, passed, failed] = SUMMARY.exec(r.stdout)!;
  expect(Number(failed)).toBe(0);
  expect(Number(passed)).toBeGreaterThanOrEqual(50);
  const [, asyncPassed, asyncFailed] = ASYNC.exec(r.stdout)!;
  expect(Number(asyncFailed)).toBe(0);
  expect(Number(asyncPassed)).toBeGreaterThanOrEqual(50);
}, 300_000);
