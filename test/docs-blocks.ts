// The code blocks of README.md and docs/*.md as the example test runs them
// (test/docs-examples.test.ts). The conventions, which README.md states:
// - a JS/TS block that starts with `import` is a program of its own; any
//   other JS/TS block continues the first program of its `##` section (of
//   the document when its section has none): the runner runs that program
//   and then this block, in a scope of its own;
// - shell blocks run in order with the programs of their `##` section, in
//   one working directory per section;
// - a block the tests cannot run has, as the paragraph right before it, a
//   reason the reader sees: `*Not run by the tests: REASON.*`;
// - `json` blocks (output, data) must parse as JSON;
// - `text` blocks are not code (diagrams, output) and are not run;
// - a paragraph right after a program that starts "This prints" names, in
//   backticks, text its output must contain.

export type Kind = 'program' | 'shell' | 'json' | 'text' | 'other';

export interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly kind: Kind;
  readonly code: string;
  /** The `##` heading above the block ('' before the first one). */
  readonly section: string;
  /** The visible reason it is not run, or null. */
  readonly notRun: string | null;
  /** For a JS/TS block that does not start with `import`: the block it continues. */
  base: Block | null;
  /** What its output must contain: the backticked parts of a "This prints" paragraph right after it. */
  readonly prints: readonly string[];
}

const NOT_RUN = /^\*Not run by the tests: (.+)\*$/;

export function kindOf(lang: string): Kind {
  if (/^(js|javascript|mjs|ts|typescript)$/.test(lang)) return 'program';
  if (/^(sh|bash|shell)$/.test(lang)) return 'shell';
  if (lang === 'json') return 'json';
  if (lang === 'text') return 'text';
  return 'other';
}

/** Whether a JS/TS block is a whole program: its first statement (after comments) is an import. */
export function isWholeProgram(code: string): boolean {
  const body = code.replace(/^(\s*(\/\/[^\n]*|\/\*[\s\S]*?\*\/))*\s*/, '');
  return /^import[\s{*'"]/.test(body);
}

/** Every fenced block of a markdown text, with its section, its reason not to run and the program it continues. */
export function parseBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.*)$/.exec(lines[i]!);
    if (heading !== null) section = heading[1]!.trim();
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]!);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(fence!); i++) {
      code.push(lines[i]!.startsWith(indent!) ? lines[i]!.slice(indent!.length) : lines[i]!);
    }
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: a code block that is never closed`);
    let next = i + 1;
    while (next < lines.length && lines[next]!.trim() === '') next++;
    const after: string[] = [];
    for (; next < lines.length && lines[next]!.trim() !== '' && !/^(`{3,}|~{3,}|#)/.test(lines[next]!.trim()); next++) after.push(lines[next]!.trim());
    const printsText = /^This prints (.*?)\.(\s|$)/.exec(after.join(' '));
    const prints = printsText === null ? [] : [...printsText[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    // The paragraph right before the block (it may be wrapped over several lines).
    let end = start - 1;
    while (end >= 0 && lines[end]!.trim() === '') end--;
    let first = end;
    while (first > 0 && lines[first - 1]!.trim() !== '' && !/^(`{3,}|~{3,}|#)/.test(lines[first - 1]!.trim())) first--;
    const paragraph = end >= 0 ? lines.slice(first, end + 1).map((l) => l.trim()).join(' ') : '';
    const reason = NOT_RUN.exec(paragraph);
    blocks.push({
      file, line: start + 1, lang: lang!, kind: kindOf(lang!), code: code.join('\n') + '\n', section,
      notRun: reason === null ? null : reason[1]!.trim(), base: null, prints,
    });
  }
  for (const b of blocks) {
    if (b.kind !== 'program' || b.notRun !== null || isWholeProgram(b.code)) continue;
    const runnable = (x: Block) => x.kind === 'program' && x.notRun === null && isWholeProgram(x.code);
    b.base = blocks.find((x) => runnable(x) && x.section === b.section) ?? blocks.find(runnable) ?? null;
  }
  return blocks;
}

/**
 * The module a program block runs as: a prologue that records each instance
 * load() and attach() make with its live bytes then, the program (a
 * continued block in a scope of its own, after its base), and an epilogue
 * that fails when an instance does not end where it started (a handle left
 * unreleased: the finalizer would free it only at some later GC).
 */
export function programOf(block: Block): string {
  const base = block.base;
  const body = base === null ? block.code : `${base.code}\n{ // ${block.file}:${block.line}\n${block.code}}\n`;
  return `${PROLOGUE}\n${body}\n${EPILOGUE}\n`;
}

const PROLOGUE = `import { ArrowCDevice as __ACD } from 'arrow-c-device';
const __instances = [];
const __record = (acd) => { if (!__instances.some((x) => x.acd === acd)) __instances.push({ acd, bytes: acd.bytesAllocated(), device: acd.deviceBytesAllocated() }); return acd; };
{ const load = __ACD.load.bind(__ACD), attach = __ACD.attach.bind(__ACD);
  __ACD.load = async (...a) => __record(await load(...a));
  __ACD.attach = (...a) => __record(attach(...a)); }`;

const EPILOGUE = `for (const { acd, bytes, device } of __instances) {
  const now = acd.bytesAllocated(), dev = acd.deviceBytesAllocated();
  if (now !== bytes || dev !== device) {
    console.error(\`LEAK: the example ends with \${now} bytes allocated in the core (\${bytes} after load) and \${dev} device bytes (\${device}): a handle was not released\`);
    process.exitCode = 3;
  }
}`;

/** A shell block as bash runs it: the package's command through node, as `npx arrow-c-device` would run it once installed. */
export function shellOf(block: Block, root: string): string {
  return block.code.replace(/\bnpx arrow-c-device\b/g, `node ${JSON.stringify(`${root}/bin/arrow-c-device.mjs`)}`);
}
