// The negative fixtures (issue 12, item 4; ts/fixtures/cases-invalid.ts):
// well-formed images, loaded into the core as a loader would (wasm32 image
// relocated into its memory), that the C validator refuses at the level the
// manifest records, with the reason it records, and accepts at the level
// below; the same natively, on the LP64 images loaded by the portable loader
// (test/c/validate_fixtures.c), where every valid case passes at full; their
// manifest entries; and what the images hold for a loader (a released child:
// release 0 and no callback entry).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Core } from '../ts/abi/core.js';
import { LEVELS, type FixtureCase } from '../ts/fixtures/case.js';
import { corpusCases, fixtureCases, invalidFixtureCases } from '../ts/fixtures/cases.js';
import { caseImage, fixtureFiles, INVALID_EXPECTED } from '../ts/fixtures/corpus.js';
import { BEHAVIOUR } from '../ts/fixtures/image.js';
import { imageSpace, parseFixtureImage } from '../ts/fixtures/parse.js';
import { placeImage } from './fixtures-check.js';

const INVALID = invalidFixtureCases();
const each = INVALID.map((c) => [c.name, c] as [string, FixtureCase]);

describe('the invalid cases', () => {
  test('are named invalid-..., cover what issue 12 lists, and every level of the validator', () => {
    expect(INVALID.length).toBeGreaterThanOrEqual(20);
    const names = INVALID.map((c) => c.name);
    for (const n of ['utf8-offsets-decreasing', 'utf8-offset-past-data', 'list-offset-past-child', 'utf8-bad-bytes', 'utf8-view-bad-bytes',
      'utf8-view-prefix', 'binary-view-buffer-index', 'sparse-union-type-id', 'dense-union-type-id', 'dense-union-offset',
      'run-ends-not-increasing', 'run-ends-short', 'dictionary-index', 'released-child', 'n-buffers', 'n-children', 'struct-child-short',
      'null-buffer', 'null-count', 'decimal-precision', 'date64-not-whole-day', 'format', 'buffer-short']) expect(names).toContain(`invalid-${n}`);
    expect(new Set(INVALID.map((c) => c.invalid!.level))).toEqual(new Set(['minimal', 'default', 'full']));
    expect(fixtureCases().filter((c) => c.invalid !== undefined)).toEqual([]);
    expect(corpusCases().map((c) => c.name)).toEqual([...fixtureCases(), ...INVALID].map((c) => c.name).sort());
    for (const c of INVALID) {
      expect(c.stream).toBeNull();
      expect(c.invalid!.reason.length).toBeGreaterThan(15);
    }
  });

  test('every rule they break is quoted word for word (Schema.fbs as apache-arrow\'s generated fb/*.d.ts carry it)', () => {
    const clean = (s: string) => s.replace(/:c:member:`([^`]*)`/g, '$1').replace(/:ref:`([^<`]*?)\s*(<[^>]*>)?`/g, '$1').replace(/`+/g, '')
      .replace(/\s+/g, ' ');
    const fbs = readdirSync(join(__dirname, '..', 'node_modules', 'apache-arrow', 'fb'))
      .filter((f: string) => f.endsWith('.d.ts'))
      .map((f: string) => readFileSync(join(__dirname, '..', 'node_modules', 'apache-arrow', 'fb', f), 'utf8').replace(/^\s*\*\s?/gm, ' '))
      .join(' ').replace(/\s+/g, ' ');
    for (const c of INVALID) {
      const file = /^([\w.]+), /.exec(c.rule)![1]!;
      const text = file === 'Schema.fbs' ? fbs : clean(readFileSync(join(__dirname, '..', '..', 'shared', 'spec', file), 'utf8'));
      const quotes = [...c.rule.matchAll(/"([^"]+)"/g)].flatMap((m) => m[1]!.split(' ... '));
      expect(quotes.length).toBeGreaterThan(0);
      for (const q of quotes) expect([c.name, q, text.includes(q)]).toEqual([c.name, q, true]);
    }
  });

  test('their manifest entries: invalid, the level that refuses them, the reason, no expected files', () => {
    const files = [...fixtureFiles({ layouts: ['lp64'], only: (n) => n.startsWith('invalid-') || n === 'int8' })];
    expect(files.filter((f) => f.path.startsWith('expected/')).map((f) => f.path)).toEqual(['expected/int8.json', 'expected/int8.arrows']);
    const manifest = JSON.parse(new TextDecoder().decode(files[files.length - 1]!.bytes));
    const entries = manifest.cases.filter((e: { name: string }) => e.name !== 'int8');
    expect(entries.map((e: { name: string }) => e.name)).toEqual(INVALID.map((c) => c.name));
    entries.forEach((e: Record<string, unknown>, i: number) => {
      const c = INVALID[i]!;
      expect(e).toMatchObject({
        invalid: true, refused_at: c.invalid!.level, reason: c.invalid!.reason, rule: c.rule, expected: null, expected_missing: INVALID_EXPECTED,
        images: { lp64: `lp64/${c.name}.acdfix` }, roots: [{ index: 0, kind: 'ArrowSchema' }, { index: 1, kind: 'ArrowArray', schema: 0 }],
      });
    });
    const int8 = manifest.cases.find((e: { name: string }) => e.name === 'int8');
    expect(int8.invalid).toBeUndefined();
    expect(int8.refused_at).toBeUndefined();
  });
});

describe.each(['wasm32', 'lp64'] as const)('%s invalid images', (layout) => {
  test.each(each)('%s: a well-formed image whose every struct with a release is in the callback table', (_name, c) => {
    const image = parseFixtureImage(caseImage(c, layout), c.name);
    expect(image.roots.map((r) => r.kind)).toEqual([1, 2]);
    const s = imageSpace(image, c.name).structs;
    const releases = new Map(image.callbacks.map((cb) => [cb.offset, cb.behaviour]));
    // Walk the array tree: a released node's release is 0 and has no callback entry; every other has one.
    const released: number[] = [];
    const walk = (at: number) => {
      const place = at + s.offsetOf('ArrowArray', 'release');
      if (releases.get(place) !== BEHAVIOUR.arrayRelease) released.push(at);
      expect(s.view.getUint8(place)).toBe(0);
      const children = s.ptr('ArrowArray', at, 'children');
      for (let i = 0; i < s.i64('ArrowArray', at, 'n_children'); i++) walk(s.ptrAt(children + i * s.layout.pointerSize));
      const d = s.ptr('ArrowArray', at, 'dictionary');
      if (d !== 0) walk(d);
    };
    walk(image.roots[1]!.offset);
    expect(released).toHaveLength(c.tamper?.released?.size ?? 0);
  });
});

describe('wasm32 invalid images loaded into the core: refused at their level with their reason, accepted below', () => {
  let core: Core;
  let release: number;
  beforeAll(async () => {
    core = await Core.load();
    release = core.addFunction(() => {}, 'vi');
  });
  afterAll(() => core.removeFunction(release));

  test.each(each)('%s', (_name, c) => {
    const image = parseFixtureImage(caseImage(c, 'wasm32'), c.name);
    const placed = placeImage(core, image, () => release);
    try {
      const { base } = placed;
      const refusedAt = LEVELS.indexOf(c.invalid!.level);
      const outcomes = LEVELS.map((level, i) => {
        try {
          core.arrayValidate(base + image.roots[0]!.offset, base + image.roots[1]!.offset, i);
          return { level, refused: false, message: '' };
        } catch (e) {
          return { level, refused: true, message: (e as Error).message };
        }
      });
      expect(outcomes.map((o) => ({ level: o.level, refused: o.refused }))).toEqual(LEVELS.map((level, i) => ({ level, refused: i >= refusedAt })));
      for (const o of outcomes.slice(refusedAt)) expect(o.message).toContain(c.invalid!.reason);
    } finally {
      placed.free();
    }
  });
});

describe('natively: the C core\'s validator on the LP64 images, loaded by the portable loader', () => {
  const ROOT = resolve(__dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'acd-invalid-native-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('refuses every invalid case at its level with its reason (but a short buffer), accepts every valid batch case at full, releases all', () => {
    for (const f of fixtureFiles({ layouts: ['lp64'] })) {
      if (f.path.startsWith('expected/')) continue;
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.bytes);
    }
    // The core as test/c/run.sh builds it (csrc/ but the examples and the loader), with the loader and the driver.
    const core = readdirSync(join(ROOT, 'csrc'), { recursive: true, encoding: 'utf8' })
      .filter((p) => p.endsWith('.c') && !p.startsWith('examples') && !p.startsWith('fixtures')).sort().map((p) => join(ROOT, 'csrc', p));
    const sources = [...core, join(ROOT, 'csrc', 'fixtures', 'acd_fixture.c'), join(ROOT, 'test', 'c', 'validate_fixtures.c')];
    const flags = ['-std=c11', '-Wall', '-Wextra', '-Wpedantic', '-Werror', '-O1', '-g', `-I${join(ROOT, 'csrc')}`];
    const sanitize = ['-fsanitize=address,undefined', '-fno-sanitize-recover=undefined', '-fno-omit-frame-pointer'];
    const bin = join(dir, 'validate_fixtures');
    let cc = spawnSync(process.env.CC ?? 'cc', [...flags, ...sanitize, ...sources, '-o', bin], { encoding: 'utf8', timeout: 300_000 });
    if (cc.status !== 0) cc = spawnSync(process.env.CC ?? 'cc', [...flags, ...sources, '-o', bin], { encoding: 'utf8', timeout: 300_000 });
    expect({ status: cc.status, err: cc.stderr }).toMatchObject({ status: 0 });
    const images = readdirSync(join(dir, 'lp64')).sort().map((n) => join(dir, 'lp64', n));
    const run = spawnSync(bin, images, { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20, env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
    expect({ status: run.status, err: run.stderr }).toEqual({ status: 0, err: '' });
    const lines = run.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { image: string; levels: { code: number; message: string }[] | null });
    expect(lines).toHaveLength(images.length);
    const byCase = new Map(corpusCases().map((c) => [c.name, c]));
    let checked = 0;
    for (const { image, levels } of lines) {
      const c = byCase.get(image.replace(/^.*\/|\.acdfix$/g, ''))!;
      if (levels === null) {
        expect([c.name, c.stream === null]).toEqual([c.name, false]);
        continue;
      }
      checked++;
      // Natively every address but NULL is readable: a buffer too short is not seen (docs/conformance.md).
      const at = c.invalid === undefined || c.name === 'invalid-buffer-short' ? LEVELS.length : LEVELS.indexOf(c.invalid.level);
      expect([c.name, levels.map((l) => l.code !== 0)]).toEqual([c.name, LEVELS.map((_, i) => i >= at)]);
      for (const l of levels.slice(at)) expect([c.name, l.message]).toEqual([c.name, expect.stringContaining(c.invalid!.reason)]);
    }
    expect(checked).toBeGreaterThan(150);
  }, 600_000);
});
