// Issue 10's architecture rules, checked by scripts/check-architecture.mjs:
// first that the checker finds each kind of violation in small trees made
// here (so that its pass on the repository means something), then the
// repository itself: no import cycle between folders or files in ts/ and
// csrc/, no file over 400 lines without its reason.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from '@typescript/typescript6';
import {
  cGraph, checkArchitecture, cycleViolations, findCTools, formatReport, listFiles, tsGraph, tsSpecifiers,
} from '../scripts/check-architecture.mjs';

const ROOT = join(__dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'check-architecture.mjs');

type Violation = { kind: string; message: string; nodes?: string[]; details?: string[] };

const made: string[] = [];
afterAll(() => { for (const d of made) rmSync(d, { recursive: true, force: true }); });

/** A source tree in a temp dir: { 'ts/a/x.ts': '...' }. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'acd-arch-test-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const tsCheck = (root: string): Violation[] => checkArchitecture(root, { c: false }).violations;
const kinds = (vs: Violation[]) => vs.map((v) => v.kind);
const lines = (n: number, head = '// A test file.\n') => head + Array.from({ length: n - head.split('\n').length + 1 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';

describe('the checker finds what it must (synthetic trees)', () => {
  test('an import cycle between two folders, without a file cycle', () => {
    const root = tree({
      'ts/a/x.ts': "// x\nimport { y } from '../b/y.js';\nexport const x = y;\n",
      'ts/b/y.ts': "// y\nimport { z } from '../a/z.js';\nexport const y = z;\n",
      'ts/a/z.ts': '// z\nexport const z = 1;\n',
    });
    const vs = tsCheck(root);
    expect(kinds(vs)).toEqual(['ts-folder-cycle']);
    expect(vs[0].nodes).toEqual(['a', 'b']);
    expect(vs[0].details).toEqual(expect.arrayContaining(['  ts/a/x.ts -> ts/b/y.ts (../b/y.js)', '  ts/b/y.ts -> ts/a/z.ts (../a/z.js)']));
  });

  test('the files directly in ts/ are the folder "."', () => {
    const root = tree({
      'ts/index.ts': "// facade\nexport * from './stream/pull.js';\n",
      'ts/stream/pull.ts': "// pull\nimport { version } from '../index.js';\nexport const pull = version;\n",
    });
    const vs = tsCheck(root);
    expect(kinds(vs)).toEqual(['ts-folder-cycle', 'ts-file-cycle']);
    expect(vs[0].nodes).toEqual(['.', 'stream']);
  });

  test('type-only imports and re-exports count as edges', () => {
    const root = tree({
      'ts/api.ts': "// api\nimport type {\n  Stream,\n} from './stream.js';\nexport type S = Stream;\n",
      'ts/stream.ts': "// stream\nexport type { Api as Stream } from './api.js';\n",
    });
    const vs = tsCheck(root);
    expect(kinds(vs)).toEqual(['ts-file-cycle']);
    expect(vs[0].nodes).toEqual(['ts/api.ts', 'ts/stream.ts']);
    expect(vs[0].details?.[0]).toBe('cycle: ts/api.ts -> ts/stream.ts -> ts/api.ts');
  });

  test('a two-file cycle inside one folder, through a dynamic import', () => {
    const root = tree({
      'ts/io/a.ts': "// a\nexport async function a() { return (await import('./b.js')).b; }\n",
      'ts/io/b.ts': "// b\nimport { a } from './a.js';\nexport const b = a;\n",
    });
    const vs = tsCheck(root);
    expect(kinds(vs)).toEqual(['ts-file-cycle']);
    expect(vs[0].nodes).toEqual(['ts/io/a.ts', 'ts/io/b.ts']);
  });

  test('imports in comments and strings are not edges; index files and extensionless specifiers resolve', () => {
    const root = tree({
      'ts/a/x.ts': [
        '// x: imports b/index.ts, and mentions others only in text',
        "/* import { no } from '../b/other.js'; */",
        "const sample = `import { no } from '../b/other.js';`;",
        "const quoted = \"x; import('../b/other.js'); import '../b/other.js'\";",
        "const re = /from '\\.\\.\\/b\\/other\\.js'/;",
        "import { y } from '../b/index.js';",
        "import { z } from '../b';",
        'export const x = [sample, quoted, re, y, z];',
      ].join('\n'),
      'ts/b/index.ts': "// b\nexport const y = 1;\nexport const z = 2;\n",
      'ts/b/other.ts': "// other\nexport const o = 1;\n",
    });
    expect(tsCheck(root)).toEqual([]);
    const g = tsGraph(root);
    expect([...g.edges.get('ts/a/x.ts')!.keys()]).toEqual(['ts/b/index.ts']);
  });

  test('an import naming no file is reported, not dropped', () => {
    const root = tree({ 'ts/a.ts': "// a\nimport { b } from './b.js';\nimport { c } from './generated/c.js';\nexport const a = [b, c];\n" });
    const vs = tsCheck(root);
    expect(kinds(vs)).toEqual(['ts-unresolved', 'ts-unresolved']);
    expect(vs[1].message).toMatch(/bash build\.sh/);
  });

  test('files over 400 lines need "Longer than 400 lines" and a reason in their opening comment', () => {
    const root = tree({
      'ts/exactly-400.ts': lines(400),
      'ts/long.ts': lines(401),
      'ts/long-ok.ts': lines(401, '// The layout tables.\n// Longer than 400 lines: one table per ABI, generated from the compilers.\n'),
      'ts/long-no-reason.ts': lines(401, '// Longer than 400 lines.\n'),
      'ts/long-reason-too-late.ts': lines(401, "// A module.\nimport './exactly-400.js';\n// Longer than 400 lines: because of many things here.\n"),
      'csrc/big.c': lines(500, '/* The validator.\n * Longer than 400 lines because the switch over types is one piece. */\n').replace(/export const (\w+) = (\d+);/g, 'int $1 = $2;'),
      'csrc/big.h': lines(401, '/* A header. */\n').replace(/export const (\w+) = (\d+);/g, 'int $1;'),
    });
    const vs = checkArchitecture(root, { c: false }).violations as Violation[];
    expect(vs.filter((v) => v.kind === 'length').map((v) => v.message.split(':')[0]).sort())
      .toEqual(['csrc/big.h', 'ts/long-no-reason.ts', 'ts/long-reason-too-late.ts', 'ts/long.ts']);
    expect(vs.find((v) => v.message.startsWith('ts/long.ts'))!.message).toMatch(/401 lines/);
  });

  test('the CLI prints the report and exits 1 on a violation, 0 without', () => {
    const bad = tree({ 'ts/a.ts': "// a\nimport './b.js';\n", 'ts/b.ts': "// b\nimport './a.js';\n" });
    const ok = tree({ 'ts/a.ts': "// a\nimport './b.js';\n", 'ts/b.ts': '// b\n' });
    const run = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8', env: { ...process.env, PATH: '' } });
    const r1 = run(bad);
    expect(r1.status).toBe(1);
    expect(r1.stdout).toMatch(/\[ts-file-cycle\] ts\/: 2 files import each other: ts\/a\.ts, ts\/b\.ts/);
    // Without a compiler on PATH the C part is a violation, never a silent pass.
    expect(r1.stdout).toMatch(/\[c-skipped\]/);
    const r2 = run(ok);
    expect(r2.status).toBe(1);
    expect(r2.stdout).not.toMatch(/cycle\]/);
    const r3 = spawnSync(process.execPath, [SCRIPT, ok], { encoding: 'utf8' });
    expect(r3.stdout).toMatch(/^OK: /m);
    expect(r3.status).toBe(0);
  });

  test('the parser finds the same specifiers as TypeScript itself, in every file of ts/, scripts/, test/ and bin/', () => {
    const files = ['ts', 'scripts', 'test', 'bin'].flatMap((d) => listFiles(ROOT, d, /\.(ts|mjs|cjs|js)$/));
    expect(files.length).toBeGreaterThan(50);
    for (const f of files) {
      const src = readFileSync(join(ROOT, f), 'utf8');
      const theirs = [...new Set(ts.preProcessFile(src, true, true).importedFiles.map((x) => x.fileName))].sort();
      expect({ file: f, specifiers: [...new Set(tsSpecifiers(src) as string[])].sort() }).toEqual({ file: f, specifiers: theirs });
    }
  });
});

describe('C: edges from the compiled symbols (synthetic trees)', () => {
  const header = '/* Shared prototypes. */\nint acd_f(int);\nint acd_g(int);\nextern int acd_counter;\n';

  test('a compiler and a symbol lister are on PATH (else the C checks below cannot run)', () => {
    expect(findCTools()).not.toBeNull();
  });

  test('a call cycle between two folders is found, naming the symbols', () => {
    const root = tree({
      'csrc/acd.h': header,
      'csrc/abi/f.c': '/* f */\n#include "acd.h"\nint acd_f(int x) { return x > 0 ? acd_g(x - 1) : 0; }\n',
      'csrc/device/g.c': '/* g */\n#include "acd.h"\nint acd_counter;\nint acd_g(int x) { acd_counter++; return acd_f(x); }\n',
      'csrc/model/h.c': '/* h */\n#include "acd.h"\nstatic int local(void) { return acd_counter; }\nint acd_h(void) { return local(); }\n',
      // The same base name in two folders, and a header found through its folder.
      'csrc/model/f.c': '/* f */\n#include "model.h"\nint acd_model_f(void) { return acd_h(); }\n',
      'csrc/model/model.h': '/* model */\nint acd_h(void);\n',
      'csrc/examples/ignored.c': '/* an example: not part of the graph */\n#include "../acd.h"\nint acd_example(void) { return acd_f(1); }\n',
    });
    const g = cGraph(root);
    expect(g.problems).toEqual([]);
    expect(g.files).toEqual(['csrc/abi/f.c', 'csrc/device/g.c', 'csrc/model/f.c', 'csrc/model/h.c']);
    expect(g.edges.get('csrc/model/h.c')).toEqual(new Map([['csrc/device/g.c', ['acd_counter']]]));
    expect(g.edges.get('csrc/model/f.c')).toEqual(new Map([['csrc/model/h.c', ['acd_h']]]));
    const vs = cycleViolations(g) as Violation[];
    expect(kinds(vs)).toEqual(['c-folder-cycle', 'c-file-cycle']);
    expect(vs[0].nodes).toEqual(['abi', 'device']);
    expect(vs[0].details).toEqual(expect.arrayContaining(['  csrc/abi/f.c -> csrc/device/g.c (acd_g)', '  csrc/device/g.c -> csrc/abi/f.c (acd_f)']));
  });

  test('one-way calls pass; a file that does not compile is reported; no compiler is reported', () => {
    const root = tree({
      'csrc/acd.h': header,
      'csrc/f.c': '/* f */\n#include "acd.h"\nint acd_f(int x) { return acd_g(x); }\n',
      'csrc/g/g.c': '/* g */\n#include "acd.h"\nint acd_g(int x) { return x; }\n',
    });
    expect(cycleViolations(cGraph(root))).toEqual([]);
    writeFileSync(join(root, 'csrc', 'g', 'broken.c'), '/* broken */\nint acd_broken(void) { return undeclared; }\n');
    const g = cGraph(root);
    expect(g.problems.map((p: Violation) => p.kind)).toEqual(['c-compile']);
    expect(g.problems[0].message).toMatch(/^csrc\/g\/broken\.c does not compile/);
    expect(g.edges.get('csrc/f.c')).toEqual(new Map([['csrc/g/g.c', ['acd_g']]]));
    expect(cGraph(root, 'csrc', null).problems.map((p: Violation) => p.kind)).toEqual(['c-skipped']);
  });
});

describe('this repository', () => {
  let result: ReturnType<typeof checkArchitecture>;
  beforeAll(() => {
    result = checkArchitecture(ROOT);
    console.log(formatReport(result));
  });
  const messages = (prefix: string) => (result.violations as Violation[])
    .filter((v) => v.kind.startsWith(prefix)).map((v) => [v.message, ...(v.details ?? [])].join('\n'));

  test('ts/: no import cycle between folders or between files', () => {
    expect(messages('ts-')).toEqual([]);
  });
  test('csrc/: no call cycle between folders or between files', () => {
    expect(result.c!.files.length).toBeGreaterThan(10);
    expect(messages('c-')).toEqual([]);
  });
  test('no file over 400 lines without its reason', () => {
    expect(messages('length')).toEqual([]);
  });
  test('docs/architecture.md names only files that exist, and every concept folder of csrc/ and ts/', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const named = [...new Set([...doc.matchAll(/`((?:csrc|ts|scripts|test)\/[\w./-]+)`/g)].map((m) => m[1]))];
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
    const folders = (dir: string) => readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== 'generated' && d.name !== 'examples').map((d) => d.name);
    const rows = new Set([...doc.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([\w-]+)\/`/g)].map((x) => x[1])));
    expect([...folders('csrc'), ...folders('ts')].filter((f) => !rows.has(f))).toEqual([]);
  });
});

