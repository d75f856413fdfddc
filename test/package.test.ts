// What the npm package ships (issue 15, packaging): the Apache-2.0 license
// beside package.json's "license"; a tarball under 500 KB without source
// maps; every entry (the main one and each subpath of "exports") as ESM, as
// CommonJS (the same module, through require(esm)) and with types for each,
// clean under @arethetypeswrong/cli; sideEffects: false.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

test('LICENSE holds the Apache License 2.0 that package.json names, and the package ships it', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string; files: string[] };
  expect(pkg.license).toBe('Apache-2.0');
  const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  expect(text).toContain('Apache License\n                           Version 2.0, January 2004');
  expect(text).toContain('END OF TERMS AND CONDITIONS');
  expect(pkg.files).toContain('LICENSE');
});

type Conditions = { import: { types: string; default: string }; require: { types: string; default: string } };
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, Conditions | string>; files: string[]; sideEffects: boolean; engines: { node: string };
};
const ENTRIES = ['.', './ipc', './json', './integration', './roundtrip', './inspect', './fixtures'];

describe('the packed tarball', () => {
  let dir: string;
  let tarball: string;
  let listed: { path: string; size: number }[];
  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'index.mjs'))) throw new Error('dist/ is missing: run ./build.sh (npm test does) first');
    dir = mkdtempSync(join(tmpdir(), 'acd-pack-'));
    const r = spawnSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
    const info = (JSON.parse(r.stdout) as { filename: string; files: { path: string; size: number }[] }[])[0]!;
    tarball = join(dir, info.filename);
    listed = info.files;
  }, 60_000);
  afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

  test('is under 512 KiB and holds no source map', () => {
    const size = readFileSync(tarball).length;
    expect(size).toBeLessThan(512 * 1024);
    expect(listed.filter((f) => f.path.endsWith('.map'))).toEqual([]);
  });

  test('holds every file "exports" names, the linked mode files and the CLI', () => {
    const paths = new Set(listed.map((f) => f.path));
    for (const key of ENTRIES) {
      const c = pkg.exports[key] as Conditions;
      for (const f of [c.import.types, c.import.default, c.require.types, c.require.default]) {
        expect({ key, f, shipped: paths.has(f.replace(/^\.\//, '')) }).toEqual({ key, f, shipped: true });
      }
    }
    for (const f of ['dist/lib/libarrow_c_device.a', 'dist/include/arrow_c_device.h', 'dist/cli.mjs', 'bin/arrow-c-device.mjs',
      'dist/playground/index.html', 'dist/playground/playground.mjs', 'csrc/fixtures/acd_fixture.c', 'LICENSE']) {
      expect({ f, shipped: paths.has(f) }).toEqual({ f, shipped: true });
    }
  });

  test('@arethetypeswrong/cli finds no problem in it', () => {
    const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'attw'), [tarball, '--format', 'json'], { cwd: ROOT, encoding: 'utf8' });
    const report = JSON.parse(r.stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
    expect(report.analysis.problems).toEqual([]);
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual([...ENTRIES, './package.json'].sort());
    expect(r.status).toBe(0);
  }, 60_000);
});

test('"exports": each entry has import and require, each with its own types', () => {
  expect(Object.keys(pkg.exports).sort()).toEqual([...ENTRIES, './package.json'].sort());
  for (const key of ENTRIES) {
    const name = key === '.' ? 'index' : key.slice(2);
    expect(pkg.exports[key]).toEqual({
      import: { types: `./dist/${name}.d.ts`, default: `./dist/${name}.mjs` },
      require: { types: `./dist/${name}.d.cts`, default: `./dist/${name}.cjs` },
    });
  }
  expect(pkg.sideEffects).toBe(false);
  // require(esm), which the CommonJS entries are, is unflagged from Node 20.19.
  expect(pkg.engines.node).toBe('>=20.19');
  expect(readdirSync(join(ROOT, 'dist')).filter((f) => f.endsWith('.map'))).toEqual([]);
});

test('import and require of each entry give the same module, with the same names', () => {
  // Run by Node from the package folder: 'arrow-c-device' is the package itself, through its "exports".
  const script = `
    const { createRequire } = require('node:module');
    const entries = ${JSON.stringify(ENTRIES)};
    (async () => {
      const out = {};
      for (const e of entries) {
        const spec = e === '.' ? 'arrow-c-device' : 'arrow-c-device/' + e.slice(2);
        const cjs = require(spec);
        const esm = await import(spec);
        const names = Object.keys(esm).sort();
        out[e] = { names: names.length, same: names.every((n) => cjs[n] === esm[n]) && Object.keys(cjs).length === names.length };
      }
      const acd = await require('arrow-c-device').load();
      out.load = acd.bytesAllocated();
      console.log(JSON.stringify(out));
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as Record<string, { names: number; same: boolean } | number>;
  for (const e of ENTRIES) {
    const o = out[e] as { names: number; same: boolean };
    expect({ e, some: o.names > 0, same: o.same }).toEqual({ e, some: true, same: true });
  }
  expect(out.load).toBe(0);
}, 60_000);
