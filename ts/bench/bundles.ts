// What a user's bundle weighs for each entry of the package: a one-line
// program per entry (`import { load } from 'arrow-c-device'`, ...) bundled
// by esbuild from the built dist/ as an application would be (minified, for
// the browser, apache-arrow bundled where the program reaches it), raw and
// gzipped, with what it pulled in: apache-arrow, the wasm core, and which of
// dist/'s files. esbuild is a dev dependency: without it the sizes are
// skipped with a note. It is run as a program (its binary), not through its
// JS API, which refuses to run under jest's module realms.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface BundleSize {
  /** The user's program, one line. */
  program: string;
  raw: number;
  gzip: number;
  /** Whether any of apache-arrow's code is in the bundle. */
  apacheArrow: boolean;
  /** Whether the wasm core (embedded as base64) is in the bundle. */
  wasm: boolean;
  /** The files of dist/ with code in the bundle, relative to dist/. */
  dist: string[];
}

export interface Bundles {
  /** One row per program, or null when esbuild is not installed. */
  rows: BundleSize[] | null;
  note?: string;
}

/** The programs: the main entry's cheapest and commonest imports, all of it, and each subpath. */
export const PROGRAMS: readonly string[] = [
  "import { formatOf } from 'arrow-c-device'",
  "import { ArrowCDeviceError, parseFormat, types } from 'arrow-c-device'",
  "import { load } from 'arrow-c-device'",
  "import * as acd from 'arrow-c-device'",
  "import { readIpc } from 'arrow-c-device/ipc'",
  "import { readIntegrationJson, writeIntegrationJson } from 'arrow-c-device/json'",
  "import { runIntegration } from 'arrow-c-device/integration'",
  "import { roundtripTable } from 'arrow-c-device/roundtrip'",
  "import { structTree, treeText } from 'arrow-c-device/inspect'",
  "import { corpusCases } from 'arrow-c-device/fixtures'",
];

const WASM_MAGIC = 'AGFzbQ'; // "\0asm" in base64

/** The esbuild binary of the package at root, or null. */
function esbuildBinary(root: string): string | null {
  try {
    const pkg = createRequire(join(root, 'package.json')).resolve('esbuild/package.json');
    const bin = join(dirname(pkg), 'bin', 'esbuild');
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** Bundles each program against the package at root (its dist/ must be built). */
export function measureBundles(root: string, programs: readonly string[] = PROGRAMS): Bundles {
  const esbuild = esbuildBinary(root);
  if (esbuild === null) return { rows: null, note: 'esbuild is not installed (a dev dependency): bundle sizes skipped' };
  if (!existsSync(join(root, 'dist', 'index.mjs'))) throw new Error(`${join(root, 'dist', 'index.mjs')} not found (run ./build.sh first)`);
  const dir = mkdtempSync(join(tmpdir(), 'acd-bundles-'));
  try {
    return { rows: programs.map((program, i) => bundle(esbuild, root, dir, program, i)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function bundle(esbuild: string, root: string, dir: string, program: string, i: number): BundleSize {
  const name = /import (?:\* as )?\{? ?([\w, ]+?) ?\}? from/.exec(program)![1]!.split(',').map((s) => s.trim());
  const source = `${program};\nglobalThis.__kept = [${name.join(', ')}];\n`;
  const out = join(dir, `${i}.js`);
  const meta = join(dir, `${i}.json`);
  // Run from the package root, so that 'arrow-c-device' is the package itself
  // (through its "exports", as for a user) and apache-arrow its peer.
  const r = spawnSync(esbuild, ['--bundle', '--minify', '--format=esm', '--platform=browser', '--target=es2022',
    '--log-level=error', `--outfile=${out}`, `--metafile=${meta}`, '--sourcefile=program.mjs', '--loader=js'], { cwd: root, input: source, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`esbuild failed on ${program}: ${r.stderr || r.error?.message}`);
  const bytes = readFileSync(out);
  const metafile = JSON.parse(readFileSync(meta, 'utf8')) as { outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }> };
  const inputs = Object.values(metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([k]) => k));
  return {
    program,
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    apacheArrow: inputs.some((p) => p.includes('node_modules/apache-arrow/')),
    wasm: bytes.includes(WASM_MAGIC),
    dist: inputs.filter((p) => p.startsWith('dist/')).map((p) => relative('dist', p)).sort(),
  };
}

/** The rows as a markdown table. */
export function bundleTable(b: Bundles): string[] {
  if (b.rows === null) return [`Bundle sizes: ${b.note}`];
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  return [
    '| A user\'s program (esbuild --bundle --minify, browser) | Raw | Gzipped | apache-arrow | wasm core |',
    '|---|--:|--:|:-:|:-:|',
    ...b.rows.map((r) => `| \`${r.program}\` | ${kb(r.raw)} | ${kb(r.gzip)} | ${r.apacheArrow ? 'yes' : 'no'} | ${r.wasm ? 'yes' : 'no'} |`),
  ];
}
