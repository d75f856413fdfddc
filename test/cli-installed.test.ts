// Issue 15, the CLI as a user installs it: `npm pack` of this package (built
// by bash build.sh), installed into a fresh project with apache-arrow and
// without the optional peer arrow-js-ffi, then run through npx: --version,
// roundtrip --help, a round trip, and a bench whose arrow-js-ffi rows are
// skipped with a note (before, it failed with "install the dev dependencies").
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOLD } from './helpers.js';

const ROOT = join(__dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'acd-installed-'));
const project = join(dir, 'project');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
function sh(command: string, args: string[], cwd: string, timeout = 180_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
}
const ok = (r: SpawnSyncReturns<string>, what: string): string => {
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status} ${r.signal ?? ''}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const npx = (...args: string[]) => sh('npx', ['--no-install', 'arrow-c-device', ...args], project);

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli.mjs'))) throw new Error('dist/cli.mjs is missing: run bash build.sh first');
  ok(sh('npm', ['pack', '--pack-destination', dir, '--silent'], ROOT), 'npm pack');
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${dir}`);
  // The apache-arrow this repository tests with (so that npm finds it in its cache).
  const arrowVersion = (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'apache-arrow', 'package.json'), 'utf8')) as { version: string }).version;
  rmSync(project, { recursive: true, force: true });
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'acd-installed-check', private: true }));
  ok(sh('npm', ['install', join(dir, tarball), `apache-arrow@${arrowVersion}`, '--no-audit', '--no-fund', '--prefer-offline'], project), 'npm install');
}, 300_000);

describe('the installed package, without arrow-js-ffi', () => {
  test('arrow-js-ffi is an optional peer: not installed with the package', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules', 'arrow-c-device', 'package.json'), 'utf8'));
    expect(pkg.peerDependencies['arrow-js-ffi']).toBeDefined();
    expect(pkg.peerDependenciesMeta).toEqual({ 'arrow-js-ffi': { optional: true } });
    expect(existsSync(join(project, 'node_modules', 'arrow-js-ffi'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', 'apache-arrow'))).toBe(true);
  });

  test('npx arrow-c-device --version and roundtrip --help', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(ok(npx('--version'), '--version')).toBe(`arrow-c-device ${version}\n`);
    const help = ok(npx('roundtrip', '--help'), 'roundtrip --help');
    expect(help).toMatch(/^usage:\n  arrow-c-device roundtrip FILE \[--via array\|stream\|async\]/);
    expect(help).toMatch(/\noptions:\n  --via array\|stream\|async/);
    expect(help).toMatch(/\nexamples:\n  \$ arrow-c-device roundtrip data.arrow\n/);
  }, 60_000);

  test('npx arrow-c-device roundtrip of a gold file', () => {
    const out = ok(npx('roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.stream'), '--json'), 'roundtrip');
    expect(JSON.parse(out)).toMatchObject({ ok: true, bytesLeaked: 0, mismatches: [], errors: [] });
  }, 60_000);

  test('npx arrow-c-device bench --quick --scale 0.01: completes, arrow-js-ffi\'s rows skipped with a note', () => {
    const r = npx('bench', '--quick', '--scale', '0.01');
    const out = ok(r, 'bench');
    expect(out).toMatch(/\nnote: arrow-js-ffi could not be imported \(Cannot find (package|module) 'arrow-js-ffi'.*\): its rows and targets are skipped \(ffi\.view, ffi\.copy\)\. It is an optional peer dependency; npm install arrow-js-ffi to compare with it\.\n/);
    expect(out).toContain('| mixed | arrow-js-ffi: parseTable, view | — | | | skipped: arrow-js-ffi could not be imported (see the note) |');
    expect(out).toMatch(/\| mixed \| this library: import, view \| [\d.]+ [µm]s \|/);
    // The size of the installed bundle, found through node_modules/.bin's link.
    expect(out).toMatch(/\| dist\/index\.mjs and its chunks as shipped \(wasm embedded as base64\) \| [\d.]+ KiB \| [\d.]+ KiB \|/);
  }, 120_000);
});
