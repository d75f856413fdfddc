// Runtime smoke tests of the BUILT dist/: Deno, Bun and headless Chromium each
// load dist/index.mjs and round-trip one table (int32 with nulls, utf8,
// list<float64>, dictionary<utf8>) in copy and view mode, through the scripts
// in test/runtimes/. These fail (never skip) when dist/ or a runtime is
// missing: `npm test` builds dist/ and installs chromium (scripts/test-setup.sh)
// before jest runs.
import { describe, expect, test } from '@jest/globals';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');
const DIST = join(ROOT, 'dist', 'index.mjs');
const CHROMIUM = '/usr/bin/chromium';
const TEST_TIMEOUT = 100_000;

function run(command: string, args: string[], env: Record<string, string> = {}, timeout = 60_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL',
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
}

function describeRun(what: string, r: SpawnSyncReturns<string>): string {
  return [
    `${what}: exit status ${r.status}${r.signal ? `, killed by ${r.signal}` : ''}${r.error ? `, error ${r.error.message}` : ''}`,
    `--- stdout ---\n${r.stdout ?? ''}`,
    `--- stderr ---\n${r.stderr ?? ''}`,
  ].join('\n');
}

/** Fails with the whole output unless the script exited 0 and printed its ok line. */
function expectOk(what: string, r: SpawnSyncReturns<string>, okLine: RegExp): void {
  const passed = !r.error && r.status === 0 && okLine.test(r.stdout ?? '');
  if (!passed) throw new Error(`${what} smoke test failed (expected exit 0 and a line matching ${okLine})\n${describeRun(what, r)}`);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(okLine);
  expect(r.stdout).toMatch(/into another core and back ok/);
}

function requireDist(): void {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run ./build.sh (npm test builds it) before the runtime smoke tests`);
}

describe('the built dist/ in other runtimes', () => {
  test('deno', () => {
    requireDist();
    const deno = join(ROOT, 'node_modules', '.bin', 'deno');
    if (!existsSync(deno)) throw new Error(`${deno} is missing: run npm install (deno is a devDependency)`);
    // Deno's cache goes to a temporary folder; no config, lock file or remote
    // module is looked for, so nothing is fetched and nothing lands in the repo.
    const denoDir = mkdtempSync(join(tmpdir(), 'acd-deno-'));
    try {
      const r = run(deno, [
        'run', '--no-config', '--no-lock', '--no-remote', '--no-npm', '--cached-only',
        '--import-map=test/runtimes/import_map.json', '--allow-read', 'test/runtimes/deno.mjs',
      ], { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: '1' });
      expectOk('deno', r, /^deno [^:\n]*: ok /m);
    } finally {
      rmSync(denoDir, { recursive: true, force: true });
    }
  }, TEST_TIMEOUT);

  test('bun', () => {
    requireDist();
    const bun = join(ROOT, 'node_modules', '.bin', 'bun');
    if (!existsSync(bun)) throw new Error(`${bun} is missing: run npm install (bun is a devDependency)`);
    const r = run(bun, ['--no-install', 'test/runtimes/bun.mjs'], { BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' });
    expectOk('bun', r, /^bun [^:\n]*: ok /m);
  }, TEST_TIMEOUT);

  test('chromium', () => {
    requireDist();
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/test-setup.sh (apt-get install chromium); npm test does this before jest`);
    // The script times itself out after 60 s and closes the browser and server.
    const r = run(process.execPath, ['test/runtimes/browser.mjs'], { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' }, 90_000);
    expectOk('chromium', r, /^chromium[^:\n]*: ok /m);
  }, TEST_TIMEOUT);
});
