// The portable fixture loader (csrc/fixtures/, C99), built natively under
// ASan/UBSan with its tests (test/c/fixture.sh, test/c/test_fixture.c):
// images made by the test's own writer, corrupt images refused, streams
// played, every release counted, 0 leaks; the async producer driving a
// consumer's handler (test/c/test_fixture_async.c); then every LP64 image of
// the corpus (`arrow-c-device fixtures`) loaded, every root released.
import { afterAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');
const SUMMARY = /^c-fixture: (\d+) passed, (\d+) failed$/m;
const ASYNC = /^c-fixture-async: (\d+) passed, (\d+) failed$/m;

const corpus = mkdtempSync(join(tmpdir(), 'acd-loader-corpus-'));
afterAll(() => rmSync(corpus, { recursive: true, force: true }));

test('test/c/fixture.sh: the loader and its tests, C99, ASan/UBSan, no leak, the whole LP64 corpus', () => {
  const cli = spawnSync('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', corpus, '--layout', 'lp64'], { encoding: 'utf8', timeout: 120_000 });
  expect({ status: cli.status, err: cli.stderr }).toMatchObject({ status: 0 });
  const images = readdirSync(join(corpus, 'lp64')).filter((n) => n.endsWith('.acdfix'));
  expect(images.length).toBeGreaterThanOrEqual(90);
  const r = spawnSync('bash', [join(__dirname, 'c', 'fixture.sh'), join(corpus, 'lp64')], { encoding: 'utf8', timeout: 300_000 });
  expect({ status: r.status, out: `${r.stdout}\n${r.stderr}` }).toMatchObject({ status: 0 });
  expect(r.stdout).toContain(`c-fixture: loaded and released ${images.length} image files`);
  const [, passed, failed] = SUMMARY.exec(r.stdout)!;
  expect(Number(failed)).toBe(0);
  expect(Number(passed)).toBeGreaterThanOrEqual(50 + images.length);
  const [, asyncPassed, asyncFailed] = ASYNC.exec(r.stdout)!;
  expect(Number(asyncFailed)).toBe(0);
  expect(Number(asyncPassed)).toBeGreaterThanOrEqual(50);
}, 300_000);
