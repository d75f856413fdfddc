// Issue 15, item 4: the examples of README.md and docs/*.md are tests. Every
// fenced code block is run (JS/TS programs in Node against the built
// package, shell blocks with bash) or carries a reason the reader sees
// (`*Not run by the tests: ...*`); the conventions are test/docs-blocks.ts's.
// A program must exit 0 with nothing left allocated by any instance it loaded.
// docs/api/ is generated (scripts/api-docs.mjs) and holds no examples.
import { describe, expect, test } from '@jest/globals';
import { transformSync } from '@swc/core';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWholeProgram, parseBlocks, programOf, shellOf, type Block } from './docs-blocks.js';

const ROOT = join(__dirname, '..');
const WORK = join(ROOT, 'build/docs-examples');
const ENV = { ...process.env, NODE_PATH: join(ROOT, 'node_modules') };
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const BLOCKS = FILES.flatMap((f) => parseBlocks(f, readFileSync(join(ROOT, f), 'utf8')));

// A fresh working directory per run: nothing an earlier run compiled is reused.
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });

/** One working directory per `##` section, with the repository's csrc/, test/ and dist/ (the commands name them). */
function workdir(b: Block): string {
  const dir = join(WORK, `${b.file}-${b.section}`.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase());
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    for (const d of ['csrc', 'test', 'dist']) symlinkSync(join(ROOT, d), join(dir, d));
  }
  return dir;
}

const shellsRun = new Set<Block>();

function runShell(b: Block): void {
  if (shellsRun.has(b)) return;
  shellsRun.add(b);
  // timeout(1) signals the whole process group, so nothing a command started outlives it.
  const r = spawnSync('timeout', ['-k', '5', '120', 'bash', '-euo', 'pipefail', '-c', shellOf(b, ROOT)], { cwd: workdir(b), env: ENV, encoding: 'utf8' });
  expect({ block: `${b.file}:${b.line}`, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ block: `${b.file}:${b.line}`, status: 0, stderr: '' });
}

function runProgram(b: Block): string {
  // The shell blocks before it in its section make what it reads (a compiled module).
  for (const s of BLOCKS) if (s.kind === 'shell' && s.notRun === null && s.file === b.file && s.section === b.section && s.line < b.line) runShell(s);
  const dir = workdir(b);
  let source = programOf(b);
  if (/^(ts|typescript)$/.test(b.lang) || (b.base !== null && /^(ts|typescript)$/.test(b.base.lang))) {
    source = transformSync(source, { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, isModule: true }).code;
  }
  const file = join(dir, `example-${b.line}.mjs`);
  writeFileSync(file, source);
  const r = spawnSync(process.execPath, [file], { cwd: dir, env: ENV, encoding: 'utf8', timeout: 60_000 });
  expect({ block: `${b.file}:${b.line}`, status: r.status, stderr: r.status === 0 ? '' : r.stderr })
    .toEqual({ block: `${b.file}:${b.line}`, status: 0, stderr: '' });
  return r.stdout;
}

describe('the conventions of the example runner', () => {
  const md = [
    '# T', '```js', "import { load } from 'arrow-c-device';", 'const acd = await load();', '```',
    '## A', '```js', 'acd.bytesAllocated();', '```',
    'Some text.', '', '*Not run by the tests: needs', 'a CUDA device.*', '', '```sh', 'nvidia-smi', '```',
    '```c', 'int x;', '```', '## B', '```js', '// a comment first', "import * as arrow from 'apache-arrow';", '```',
    '```js', 'arrow;', '```', '', 'This prints `1n` and `[ 2 ]`. Then more.',
  ].join('\n');
  const blocks = parseBlocks('t.md', md);

  test('a block not starting with an import continues the first program of its section, else of the document', () => {
    expect(blocks.map((b) => [b.line, b.kind, b.section, b.base?.line ?? null])).toEqual([
      [2, 'program', '', null], [7, 'program', 'A', 2], [15, 'shell', 'A', null], [18, 'other', 'A', null],
      [22, 'program', 'B', null], [26, 'program', 'B', 22],
    ]);
    expect(isWholeProgram('/* x */\n// y\nimport a from "b";')).toBe(true);
    expect(isWholeProgram('const importance = 1;')).toBe(false);
  });

  test('what a program prints is read from a "This prints" paragraph right after it', () => {
    expect(blocks.map((b) => b.prints)).toEqual([[], [], [], [], [], ['1n', '[ 2 ]']]);
  });

  test('the visible reason is read from the paragraph right before the block', () => {
    expect(blocks.map((b) => b.notRun)).toEqual([null, null, 'needs a CUDA device.', null, null, null]);
  });

  test('a continued block runs after its base in a scope of its own, between the leak check\'s prologue and epilogue', () => {
    const program = programOf(blocks[1]!);
    expect(program.indexOf('const acd = await load();')).toBeLessThan(program.indexOf('{ // t.md:7\nacd.bytesAllocated();\n}'));
    expect(program).toContain('__ACD.load = async');
    expect(program.trimEnd().endsWith('}')).toBe(true);
  });

  test('a program that leaves a handle unreleased fails, naming the leak', () => {
    const dir = join(WORK, 'leak-check');
    mkdirSync(dir, { recursive: true });
    const leaky = parseBlocks('leak.md', ['```js', "import * as arrow from 'apache-arrow';", "import { load } from 'arrow-c-device';",
      'const acd = await load();', 'const { schema, array } = acd.exportBatch(arrow.tableFromArrays({ a: Int32Array.from([1]) }).batches[0]);', '```'].join('\n'))[0]!;
    writeFileSync(join(dir, 'leak.mjs'), programOf(leaky));
    const r = spawnSync(process.execPath, [join(dir, 'leak.mjs')], { cwd: dir, env: ENV, encoding: 'utf8' });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/LEAK: the example ends with [1-9]\d* bytes allocated in the core \(0 after load\)/);
  });
});

describe('every code block of README.md and docs/*.md', () => {
  test('each is code the runner knows, JSON, a diagram or output (`text`), or says why it is not run', () => {
    const unknown = BLOCKS.filter((b) => b.notRun === null && b.kind === 'other').map((b) => `${b.file}:${b.line} (\`\`\`${b.lang})`);
    expect(unknown).toEqual([]);
    const fragments = BLOCKS.filter((b) => b.kind === 'program' && b.notRun === null && !isWholeProgram(b.code) && b.base === null);
    expect(fragments.map((b) => `${b.file}:${b.line}`)).toEqual([]);
    expect(BLOCKS.filter((b) => b.notRun !== null && b.notRun.length < 10).map((b) => `${b.file}:${b.line}`)).toEqual([]);
  });

  for (const b of BLOCKS.filter((x) => x.notRun === null && x.kind === 'json')) {
    test(`${b.file}:${b.line} (${b.section || 'top'}, json): parses`, () => {
      expect(() => JSON.parse(b.code)).not.toThrow();
    });
  }

  for (const b of BLOCKS.filter((x) => x.notRun === null && (x.kind === 'program' || x.kind === 'shell'))) {
    const title = `${b.file}:${b.line} (${b.section || 'top'}, ${b.lang}${b.base !== null ? `, continues line ${b.base.line}` : ''}${b.prints.length > 0 ? `, prints ${b.prints.length} things` : ''})`;
    test(title, () => {
      if (b.kind === 'shell') runShell(b);
      else {
        const stdout = runProgram(b);
        for (const text of b.prints) expect({ block: `${b.file}:${b.line}`, prints: text, found: stdout.includes(text) }).toEqual({ block: `${b.file}:${b.line}`, prints: text, found: true });
      }
    }, 180_000);
  }
});
