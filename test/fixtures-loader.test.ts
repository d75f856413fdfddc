// The portable fixture loader (csrc/fixtures/, C99), built natively under
// ASan/UBSan with its tests (test/c/fixture.sh, test/c/test_fixture.c):
// images made by the test's own writer, corrupt images refused, streams
// played, every release counted, 0 leaks; the async producer driving a
// consumer's handler (test/c/test_fixture_async.c); then every LP64 image of
// the corpus (`arrow-c-device fixtures`) loaded, every root released; and the
// same compiled by emcc (4-byte pointers) with the corpus's wasm32 images.
import { afterAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');
const SUMMARY = /^c-fixture: (\d+) passed, (\d+) failed$/gm;
const ASYNC = /^c-fixture-async: (\d+) passed, (\d+) failed$/gm;

const corpus = mkdtempSync(join(tmpdir(), 'acd-loader-corpus-'));
afterAll(() => rmSync(corpus, { recursive: true, force: true }));

test('test/c/fixture.sh: the loader and its tests, C99, ASan/UBSan, no leak, the whole corpus in both layouts', () => {
  const cli = spawnSync('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', corpus, '--layout', 'both'], { encoding: 'utf8', timeout: 120_000 });
  expect({ status: cli.status, err: cli.stderr }).toMatchObject({ status: 0 });
  const images = readdirSync(join(corpus, 'lp64')).filter((n) => n.endsWith('.acdfix'));
  expect(images.length).toBeGreaterThanOrEqual(90);
  expect(readdirSync(join(corpus, 'wasm32')).filter((n) => n.endsWith('.acdfix'))).toHaveLength(images.length);
  const r = spawnSync('bash', [join(__dirname, 'c', 'fixture.sh'), '--wasm32', join(corpus, 'wasm32'), join(corpus, 'lp64')],
    { encoding: 'utf8', timeout: 300_000 });
  expect({ status: r.status, out: `${r.stdout}\n${r.stderr}` }).toMatchObject({ status: 0 });
  // Native (LP64) then emcc (wasm32): each loads and releases every image of its layout.
  expect(r.stdout.split('\n').filter((l) => l === `c-fixture: loaded and released ${images.length} image files`)).toHaveLength(2);
  const summaries = [...r.stdout.matchAll(SUMMARY)];
  expect(summaries).toHaveLength(2);
  for (const [, passed, failed] of summaries) expect([Number(passed) >= 50 + images.length, Number(failed)]).toEqual([true, 0]);
  const asyncs = [...r.stdout.matchAll(ASYNC)];
  expect(asyncs).toHaveLength(2);
  for (const [, passed, failed] of asyncs) expect([Number(passed) >= 50, Number(failed)]).toEqual([true, 0]);
}, 300_000);
