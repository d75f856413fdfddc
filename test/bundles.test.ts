// What a user's bundle of each entry pulls in (issue 15, subpath exports):
// the one-line programs of ts/bench/bundles.ts bundled by esbuild from the
// built dist/. Importing only format helpers pulls neither apache-arrow nor
// the wasm core; the main entry, even whole, has none of the IPC reader, the
// JSON reader and writer, the integration protocol, the round trips, the
// inspector, the fixtures, the bench or the CLI; each subpath has what it
// names. And at the source level: what ts/index.ts reaches.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureBundles, PROGRAMS, type BundleSize } from '../ts/bench/bundles.js';

const ROOT = join(__dirname, '..');
let rows: Map<string, BundleSize>;

beforeAll(() => {
  const b = measureBundles(ROOT);
  if (b.rows === null) throw new Error(b.note);
  rows = new Map(b.rows.map((r) => [r.program, r]));
}, 60_000);

const row = (program: string) => {
  const r = rows.get(program);
  if (r === undefined) throw new Error(`no row for ${program}`);
  return r;
};
/** The files of dist/ that the main entry reaches (its chunks). */
function reached(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(ROOT, 'dist', file), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*["']\.\/([^"']+)["']/g)) visit(file.includes('/') ? `${file.slice(0, file.lastIndexOf('/'))}/${m[1]}` : m[1]!);
  };
  visit(entry);
  return seen;
}

describe("a user's bundle", () => {
  test('every program bundles, with its size', () => {
    expect([...rows.keys()]).toEqual(PROGRAMS);
    for (const r of rows.values()) expect(r.gzip > 0 && r.gzip < r.raw).toBe(true);
  });

  test('formatOf alone: no apache-arrow, no wasm core, a few KiB', () => {
    for (const p of ["import { formatOf } from 'arrow-c-device'", "import { ArrowCDeviceError, parseFormat, types } from 'arrow-c-device'"]) {
      const r = row(p);
      expect({ p, apacheArrow: r.apacheArrow, wasm: r.wasm }).toEqual({ p, apacheArrow: false, wasm: false });
      expect(r.raw).toBeLessThan(32 * 1024);
    }
  });

  test('load() has the wasm core; the whole main entry has nothing of the subpaths', () => {
    expect(row("import { load } from 'arrow-c-device'").wasm).toBe(true);
    const main = reached('index.mjs');
    for (const p of ["import { load } from 'arrow-c-device'", "import * as acd from 'arrow-c-device'"]) {
      const outside = row(p).dist.filter((f) => !main.has(f));
      expect({ p, outside }).toEqual({ p, outside: [] });
    }
    for (const entry of ['ipc.mjs', 'json.mjs', 'integration.mjs', 'roundtrip.mjs', 'inspect.mjs', 'fixtures.mjs', 'cli.mjs']) {
      expect({ entry, inMain: main.has(entry) }).toEqual({ entry, inMain: false });
    }
  });

  test('each subpath bundles its own entry', () => {
    for (const [p, file] of [['ipc', 'ipc.mjs'], ['json', 'json.mjs'], ['integration', 'integration.mjs'], ['roundtrip', 'roundtrip.mjs'], ['inspect', 'inspect.mjs']]) {
      const r = [...rows.values()].find((x) => x.program.endsWith(`'arrow-c-device/${p}'`))!;
      expect({ p, has: r.dist.some((f) => f === file || reached(file).has(f)) }).toEqual({ p, has: true });
    }
  });
});

test('ts/index.ts reaches none of io/, roundtrip/, inspect/, fixtures/, cli/, bench/, fuzz/, playground/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acd-entry-'));
  try {
    const meta = join(dir, 'meta.json');
    const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'esbuild'), ['ts/index.ts', '--bundle', '--format=esm', '--platform=neutral',
      '--external:apache-arrow', `--outfile=${join(dir, 'out.js')}`, `--metafile=${meta}`, '--log-level=error'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const inputs = Object.keys((JSON.parse(readFileSync(meta, 'utf8')) as { inputs: Record<string, unknown> }).inputs);
    expect(inputs).toContain('ts/api.ts');
    expect(inputs.filter((f) => /^ts\/(io|roundtrip|inspect|fixtures|cli|bench|fuzz|playground)\//.test(f))).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
