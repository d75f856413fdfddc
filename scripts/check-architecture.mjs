#!/usr/bin/env node
// Checks the architecture rules of issue 10 on a source tree (default: this
// repository), so that they hold by test rather than by review:
//   1. no import cycle in ts/, between files or between folders (type-only
//      imports count: they tie the two files' concepts together all the same);
//   2. no call cycle in csrc/, between files or between folders, read from the
//      compiled objects' symbols (who defines and who uses each function or
//      global), so that macros, prototypes and headers cannot hide an edge;
//   3. no source file (ts/, csrc/, test/, scripts/, bin/) over 400 lines
//      unless its opening comment says "Longer than 400 lines" and why.
// A folder is the first path segment under ts/ or csrc/; files directly in
// them form the root folder ".". Usage:
//   node scripts/check-architecture.mjs [root]   prints a report, exits 1 on a violation
// A part that cannot run (no compiler, a file that does not compile, a
// generated file not built yet) is a violation too: skipped is not passed.
// Longer than 400 lines: one dependency-free file that test/ imports and npm
// runs, with three checks sharing the graph code; its "----" headings part it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, relative, resolve, sep } from 'node:path';

export const MAX_LINES = 400;
const TS_SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const C_SOURCE = /\.(c|cpp|cc)$/;
const C_LENGTH = /\.(c|cpp|cc|h|hpp)$/;

/** Files under root/dir (relative to root, '/'-separated) whose names match re, sorted. */
export function listFiles(root, dir, re, skip = () => false) {
  const out = [];
  const walk = (rel) => {
    const abs = join(root, rel);
    if (!existsSync(abs)) return;
    for (const name of readdirSync(abs).sort()) {
      const r = `${rel}/${name}`;
      if (skip(r)) continue;
      if (statSync(join(root, r)).isDirectory()) walk(r);
      else if (re.test(name)) out.push(r);
    }
  };
  walk(dir);
  return out;
}

/** The concept folder of a file: its first segment under base ("ts", "csrc"), or "." for files directly in base. */
export function folderOf(file, base) {
  const parts = file.slice(base.length + 1).split('/');
  return parts.length === 1 ? '.' : parts[0];
}

// ---- TypeScript imports ------------------------------------------------------

/**
 * The source with comments and the text of string and template literals
 * blanked (quotes, offsets and newlines kept), so that an import written in a
 * comment or a string is not taken for one; a specifier is then read from the
 * original source at the offsets of its blanked literal.
 */
export function maskTs(src) {
  const out = src.split('');
  const blank = (from, to) => { for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' '; };
  const stack = [{ tpl: false, depth: 0 }];
  let prev = ''; // the last significant code character, to tell a regex from a division
  let i = 0;
  while (i < src.length) {
    const top = stack[stack.length - 1];
    const c = src[i];
    if (top.tpl) {
      if (c === '\\') { blank(i, i + 2); i += 2; continue; }
      if (c === '`') { stack.pop(); prev = '`'; i++; continue; }
      if (c === '$' && src[i + 1] === '{') { stack.push({ tpl: false, depth: 0 }); prev = '{'; i += 2; continue; }
      blank(i, i + 1); i++; continue;
    }
    if (c === '/' && src[i + 1] === '/') { const e = src.indexOf('\n', i); const end = e < 0 ? src.length : e; blank(i, end); i = end; continue; }
    if (c === '/' && src[i + 1] === '*') { const e = src.indexOf('*/', i + 2); const end = e < 0 ? src.length : e + 2; blank(i, end); i = end; continue; }
    if (c === '\'' || c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      blank(i + 1, Math.min(j, src.length)); i = j + 1; prev = c; continue;
    }
    if (c === '`') { stack.push({ tpl: true }); i++; continue; }
    if (c === '/' && (prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev) || /\b(return|typeof|case|do|else|in|of|void|yield|await)\s*$/.test(src.slice(Math.max(0, i - 8), i)))) {
      // A regex literal: skip it, classes included, so that a quote in it is not a string.
      let j = i + 1; let cls = false;
      while (j < src.length && src[j] !== '\n') {
        if (src[j] === '\\') { j += 2; continue; }
        if (src[j] === '[') cls = true; else if (src[j] === ']') cls = false; else if (src[j] === '/' && !cls) break;
        j++;
      }
      blank(i, j + 1); i = j + 1; prev = ')'; continue;
    }
    if (c === '{') top.depth++;
    if (c === '}') {
      if (top.depth === 0 && stack.length > 1) { stack.pop(); i++; continue; } // the end of a ${...}
      top.depth--;
    }
    if (!/\s/.test(c)) prev = c;
    i++;
  }
  return out.join('');
}

/** Every module specifier a TS/JS source imports or re-exports, type-only and dynamic imports included. */
export function tsSpecifiers(src) {
  const code = maskTs(src);
  const specs = [];
  const patterns = [
    // import x from '…', import type { X } from '…', export * from '…', export { a } from '…'
    /(?:^|[;}\n])\s*(?:import|export)\s[^;()='"`]*?\bfrom\s*(['"])([^'"\n]*)\1/dg,
    // import '…' (for its effects)
    /(?:^|[;}\n])\s*import\s*(['"])([^'"\n]*)\1/dg,
    // import('…'), require('…'), import x = require('…')
    /(?<![\w$.])(?:import|require)\s*\(\s*(['"])([^'"\n]*)\1\s*[,)]/dg,
  ];
  for (const re of patterns) {
    for (const m of code.matchAll(re)) {
      const spec = src.slice(...m.indices[2]);
      if (spec) specs.push(spec);
    }
  }
  return specs;
}

/** The file (relative to root) a relative specifier names, the way TypeScript resolves it, or null. */
export function resolveTs(root, from, spec) {
  const p = resolve(root, dirname(from), spec);
  const cands = [];
  const m = /\.(js|jsx|mjs|cjs)$/.exec(p);
  if (m) {
    const stem = p.slice(0, -m[0].length);
    const ts = { js: ['.ts', '.tsx'], jsx: ['.tsx'], mjs: ['.mts'], cjs: ['.cts'] }[m[1]];
    cands.push(...ts.map((e) => stem + e), `${stem}.d${ts[0]}`, p);
  } else {
    cands.push(p, `${p}.ts`, `${p}.tsx`, `${p}.d.ts`, `${p}.js`, join(p, 'index.ts'), join(p, 'index.tsx'), join(p, 'index.js'));
  }
  for (const c of cands) if (existsSync(c) && statSync(c).isFile()) return relative(root, c).split(sep).join('/');
  return null;
}

/** The import graph of root/ts: every file is a node; relative imports that stay inside ts/ are edges. */
export function tsGraph(root, base = 'ts') {
  const files = listFiles(root, base, TS_SOURCE);
  const edges = new Map(files.map((f) => [f, new Map()]));
  const problems = [];
  for (const file of files) {
    for (const spec of tsSpecifiers(readFileSync(join(root, file), 'utf8'))) {
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
      const target = resolveTs(root, file, spec);
      const inside = relative(join(root, base), resolve(root, dirname(file), spec));
      if (inside.startsWith('..')) continue; // outside ts/: not part of this graph
      if (!target) {
        const generated = /(^|\/)generated\//.test(inside.split(sep).join('/'));
        problems.push({
          kind: 'ts-unresolved',
          message: `${file}: import '${spec}' names no file${generated ? ' (a generated file: run `bash build.sh` first, then check again)' : ''}`,
        });
        continue;
      }
      if (!edges.has(target)) edges.set(target, new Map()); // e.g. a .d.ts next to a .js
      if (target !== file) edges.get(file).set(target, [...(edges.get(file).get(target) ?? []), spec]);
    }
  }
  return { name: 'TypeScript', base, files: [...edges.keys()].sort(), edges, problems, method: 'import/export/import() specifiers, type-only ones included' };
}

// ---- C symbols -------------------------------------------------------------------

function onPath(name) {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (d && existsSync(join(d, name))) return join(d, name);
  }
  return null;
}

/** The compilers and symbol lister to use: Emscripten's (what build.sh uses), else the native ones. */
export function findCTools() {
  const first = (names) => names.map(onPath).find(Boolean) ?? null;
  const llvmNm = ['llvm-nm', ...Array.from({ length: 12 }, (_, k) => `llvm-nm-${22 - k}`)];
  const emcc = onPath('emcc');
  const emxx = onPath('em++');
  const emNm = first(['emnm', ...llvmNm]);
  if (emcc && emxx && emNm) return { method: 'emcc', cc: emcc, cxx: emxx, nm: emNm };
  const cc = first(['cc', 'gcc', 'clang']);
  const cxx = first(['c++', 'g++', 'clang++']);
  const nm = first(['nm', ...llvmNm]);
  if (cc && nm) return { method: 'native', cc, cxx, nm };
  return null;
}

/**
 * Compiles every C/C++ file to an object and lists its global symbols:
 * returns Map<file, { defs: Set, uses: Set }> and the files that failed.
 * Files go to the compiler in batches (one process per batch) with distinct
 * base names, since a batch writes <name>.o into its working directory.
 */
function compileAndList(root, files, tools, includes) {
  const work = mkdtempSync(join(tmpdir(), 'acd-arch-'));
  const failed = [];
  const objects = new Map(); // file -> object path
  try {
    const groups = { c: files.filter((f) => f.endsWith('.c')), cxx: files.filter((f) => !f.endsWith('.c')) };
    for (const [lang, list] of Object.entries(groups)) {
      const compiler = lang === 'c' ? tools.cc : tools.cxx;
      const flags = [lang === 'c' ? '-std=c11' : '-std=c++17', '-c', ...includes.map((d) => `-I${d}`)];
      if (!compiler) { for (const f of list) failed.push({ file: f, error: 'no C++ compiler found' }); continue; }
      const batches = [];
      for (const f of list) {
        const o = basename(f).replace(/\.[^.]+$/, '.o');
        let b = batches.find((x) => !x.has(o));
        if (!b) { b = new Map(); batches.push(b); }
        b.set(o, f);
      }
      batches.forEach((batch, k) => {
        const dir = join(work, `${lang}${k}`);
        mkdirSync(dir);
        const r = spawnSync(compiler, [...flags, ...[...batch.values()].map((f) => join(root, f))], { cwd: dir, encoding: 'utf8' });
        for (const [o, f] of batch) {
          if (r.status === 0 && existsSync(join(dir, o))) { objects.set(f, join(dir, o)); continue; }
          // The batch failed: compile this file alone, to say which one and why.
          const one = spawnSync(compiler, [...flags, join(root, f), '-o', join(dir, o)], { cwd: dir, encoding: 'utf8' });
          if (one.status === 0) objects.set(f, join(dir, o));
          else failed.push({ file: f, error: `${one.error?.message ?? ''}${one.stderr ?? ''}`.trim().split('\n').slice(0, 6).join('\n') });
        }
      });
    }
    const symbols = new Map(files.map((f) => [f, { defs: new Set(), uses: new Set() }]));
    const byObject = new Map([...objects].map(([f, o]) => [o, f]));
    if (objects.size) {
      const r = spawnSync(tools.nm, ['-g', '-P', '-A', ...objects.values()], { encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status !== 0) throw new Error(`${tools.nm} failed: ${r.stderr}`);
      for (const line of r.stdout.split('\n')) {
        const m = /^(.*?): (\S+) ([A-Za-z]) ?/.exec(line);
        if (!m) continue;
        const file = byObject.get(m[1].replace(/\[.*\]$/, ''));
        if (!file) continue;
        // U, and w/v (weak, undefined): used here; upper case (and u, GNU's unique global): defined here.
        if ('Uwv'.includes(m[3])) symbols.get(file).uses.add(m[2]);
        else if ('TDBRCVWGSIu'.includes(m[3])) symbols.get(file).defs.add(m[2]);
      }
    }
    for (const { file } of failed) symbols.delete(file);
    return { symbols, failed };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The dependency graph of root/csrc (csrc/examples/ left out): A -> B when A
 * uses a function or global that B defines, read from the objects' symbols.
 */
export function cGraph(root, base = 'csrc', tools = findCTools()) {
  const files = listFiles(root, base, C_SOURCE, (r) => r === `${base}/examples`);
  const edges = new Map(files.map((f) => [f, new Map()]));
  const result = { name: 'C', base, files, edges, problems: [], method: '' };
  if (!tools) {
    result.method = 'skipped: no compiler';
    result.problems.push({ kind: 'c-skipped', message: 'C dependency check skipped: no compiler (emcc or cc) and symbol lister (llvm-nm or nm) on PATH; a skipped check is not a pass' });
    return result;
  }
  result.method = tools.method === 'emcc'
    ? `symbols of objects compiled by ${basename(tools.cc)}/${basename(tools.cxx)}, listed by ${basename(tools.nm)}`
    : `symbols of objects compiled natively by ${basename(tools.cc)}/${basename(tools.cxx ?? '(none)')}, listed by ${basename(tools.nm)}`;
  // csrc/ and each of its folders on the include path, so that "acd.h" and "abi/acd.h" both resolve.
  const dirs = [...new Set(files.map((f) => dirname(f)))].filter((d) => d !== base);
  const { symbols, failed } = compileAndList(root, files, tools, [base, ...dirs].map((d) => join(root, d)));
  for (const { file, error } of failed) {
    result.problems.push({ kind: 'c-compile', message: `${file} does not compile (${basename(file.endsWith('.c') ? tools.cc : tools.cxx ?? 'no C++ compiler')}), so its edges are unknown:\n${error}` });
  }
  const definedBy = new Map();
  for (const [file, { defs }] of symbols) for (const s of defs) definedBy.set(s, [...(definedBy.get(s) ?? []), file]);
  for (const [file, { uses }] of symbols) {
    for (const s of uses) {
      for (const target of definedBy.get(s) ?? []) {
        if (target !== file) edges.get(file).set(target, [...(edges.get(file).get(target) ?? []), s]);
      }
    }
  }
  return result;
}

// ---- cycles ------------------------------------------------------------------------

/** Strongly connected components (Tarjan), each a sorted list of nodes; nodes are strings, edges Map<node, Iterable<node>>. */
export function stronglyConnected(nodes, edges) {
  let next = 0;
  const index = new Map(); const low = new Map(); const onStack = new Set(); const stack = []; const out = [];
  const visit = (v) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      out.push(comp.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return out;
}

/** A shortest cycle through start, staying inside the set of nodes given. */
function cycleThrough(start, inside, next) {
  const from = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of next(v)) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) { from.set(w, v); queue.push(w); }
    }
  }
  return [start];
}

/** The folder graph of a file graph: Map<folder, Map<folder, [[fromFile, toFile], ...]>>. */
export function folderGraph(graph) {
  const folders = new Map();
  for (const f of graph.files) if (!folders.has(folderOf(f, graph.base))) folders.set(folderOf(f, graph.base), new Map());
  for (const [a, targets] of graph.edges) {
    for (const b of targets.keys()) {
      const fa = folderOf(a, graph.base); const fb = folderOf(b, graph.base);
      if (fa === fb) continue;
      const m = folders.get(fa);
      m.set(fb, [...(m.get(fb) ?? []), [a, b]]);
    }
  }
  return folders;
}

/** Cycle violations of a graph: every folder-level and file-level strongly connected component of more than one node. */
export function cycleViolations(graph) {
  const tag = graph.name === 'C' ? 'c' : 'ts';
  const verb = tag === 'c' ? 'use each other\'s symbols' : 'import each other';
  const label = (a, b) => {
    const why = graph.edges.get(a).get(b);
    return why?.length ? ` (${[...new Set(why)].slice(0, 4).join(', ')}${new Set(why).size > 4 ? ', …' : ''})` : '';
  };
  const out = [];
  const folders = folderGraph(graph);
  const folderEdges = new Map([...folders].map(([f, m]) => [f, [...m.keys()]]));
  for (const comp of stronglyConnected([...folders.keys()].sort(), folderEdges)) {
    if (comp.length < 2) continue;
    const inside = new Set(comp);
    const lines = [`cycle: ${cycleThrough(comp[0], inside, (v) => folderEdges.get(v)).join(' -> ')}`];
    for (const fa of comp) {
      for (const [fb, pairs] of folders.get(fa)) {
        if (!inside.has(fb)) continue;
        lines.push(`${fa} -> ${fb}:`, ...pairs.map(([a, b]) => `  ${a} -> ${b}${label(a, b)}`));
      }
    }
    out.push({ kind: `${tag}-folder-cycle`, message: `${graph.base}/: folders ${comp.join(', ')} ${verb}`, nodes: comp, details: lines });
  }
  const fileEdges = new Map([...graph.edges].map(([f, m]) => [f, [...m.keys()]]));
  for (const comp of stronglyConnected(graph.files, fileEdges)) {
    if (comp.length < 2) continue;
    const inside = new Set(comp);
    const lines = [`cycle: ${cycleThrough(comp[0], inside, (v) => fileEdges.get(v)).join(' -> ')}`, 'edges inside it:'];
    for (const a of comp) for (const b of fileEdges.get(a)) if (inside.has(b)) lines.push(`  ${a} -> ${b}${label(a, b)}`);
    out.push({ kind: `${tag}-file-cycle`, message: `${graph.base}/: ${comp.length} files ${verb}: ${comp.join(', ')}`, nodes: comp, details: lines });
  }
  return out;
}

// ---- file length ------------------------------------------------------------------------

/** The comments before the first code of a source (a #! line skipped), markers stripped. */
export function openingComment(src) {
  let s = src.replace(/^\uFEFF/, '').replace(/^#![^\n]*\n/, '');
  const parts = [];
  for (;;) {
    s = s.replace(/^\s+/, '');
    if (s.startsWith('//')) { const e = s.indexOf('\n'); parts.push(s.slice(2, e < 0 ? s.length : e)); s = e < 0 ? '' : s.slice(e); continue; }
    if (s.startsWith('/*')) { const e = s.indexOf('*/'); parts.push(s.slice(2, e < 0 ? s.length : e)); s = e < 0 ? '' : s.slice(e + 2); continue; }
    break;
  }
  return parts.join('\n').split('\n').map((l) => l.replace(/^\s*[/*!]*\s?/, '').trim()).join(' ');
}

export function lineCount(src) {
  if (src === '') return 0;
  return src.split('\n').length - (src.endsWith('\n') ? 1 : 0);
}

/** Whether an opening comment says "Longer than 400 lines" followed by a reason (a few words). */
export function givesLengthReason(comment) {
  const m = new RegExp(`longer than ${MAX_LINES} lines\\b(.*)`, 'is').exec(comment);
  return !!m && (m[1].match(/[A-Za-z]{2,}/g) ?? []).length >= 3;
}

/** Every source file of ts/, csrc/, test/, scripts/ and bin/ with its line count, longest first. */
export function fileLengths(root) {
  const files = [...listFiles(root, 'ts', TS_SOURCE), ...listFiles(root, 'csrc', C_LENGTH),
    ...['test', 'scripts', 'bin'].flatMap((dir) => [...listFiles(root, dir, TS_SOURCE), ...listFiles(root, dir, C_LENGTH)])];
  return files.map((file) => {
    const src = readFileSync(join(root, file), 'utf8');
    return { file, lines: lineCount(src), reason: givesLengthReason(openingComment(src)) };
  }).sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
}

export function lengthViolations(lengths) {
  return lengths.filter((x) => x.lines > MAX_LINES && !x.reason).map((x) => ({
    kind: 'length',
    message: `${x.file}: ${x.lines} lines, and its opening comment does not say "Longer than ${MAX_LINES} lines" and why`,
    file: x.file,
  }));
}

// ---- the whole check -------------------------------------------------------------------

/** Runs every check on root; { ts, c, lengths, violations }. Pass { c: false } to leave C out. */
export function checkArchitecture(root, options = {}) {
  const ts = tsGraph(root);
  const c = options.c === false ? null : cGraph(root, 'csrc', options.tools === undefined ? findCTools() : options.tools);
  const lengths = fileLengths(root);
  const violations = [
    ...ts.problems, ...cycleViolations(ts),
    ...(c ? [...c.problems, ...cycleViolations(c)] : []),
    ...lengthViolations(lengths),
  ];
  return { root, ts, c, lengths, violations };
}

function describeGraph(graph) {
  const edgeCount = [...graph.edges.values()].reduce((n, m) => n + m.size, 0);
  const folders = folderGraph(graph);
  const lines = [`${graph.name} (${graph.base}/): ${graph.files.length} files, ${edgeCount} file-to-file edges, ${folders.size} folders`,
    `  edges from: ${graph.method}`, '  folder graph (folder -> the folders it depends on):'];
  for (const [f, m] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    const n = graph.files.filter((x) => folderOf(x, graph.base) === f).length;
    lines.push(`    ${f} (${n} files) -> ${[...m.keys()].sort().join(', ') || '(nothing)'}`);
  }
  return lines;
}

/** The readable report the CLI prints. */
export function formatReport(result) {
  const lines = [`Architecture check of ${result.root}`, ''];
  lines.push(...describeGraph(result.ts), '');
  if (result.c) lines.push(...describeGraph(result.c), '');
  lines.push(`Longest files (limit ${MAX_LINES} lines unless the opening comment says why):`);
  for (const x of result.lengths.slice(0, 12)) {
    lines.push(`  ${String(x.lines).padStart(5)}  ${x.file}${x.lines > MAX_LINES ? (x.reason ? '  (reason given)' : '  (NO REASON GIVEN)') : ''}`);
  }
  lines.push('');
  if (!result.violations.length) {
    lines.push('OK: no import cycle between folders or files, no unexplained long file.');
  } else {
    lines.push(`FAILED: ${result.violations.length} violation(s)`);
    for (const v of result.violations) {
      lines.push(`- [${v.kind}] ${v.message}`);
      for (const d of v.details ?? []) lines.push(`    ${d}`);
    }
  }
  return lines.join('\n');
}

const invoked = process.argv[1] && basename(process.argv[1]) === 'check-architecture.mjs';
if (invoked) {
  const root = resolve(process.argv[2] ?? join(dirname(resolve(process.argv[1])), '..'));
  const result = checkArchitecture(root);
  console.log(formatReport(result));
  process.exitCode = result.violations.length ? 1 : 0;
}
