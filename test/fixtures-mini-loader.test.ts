// docs/fixtures.md claims a loader of its images fits in under 200 lines; this
// measures it. scripts/cross/mini_loader.py is a second loader, written from the
// document alone (Python, ctypes), and scripts/cross/mini_loader_check.py drives
// it with pyarrow over the LP64 corpus of the TS writer and over the
// Python-written mini corpus. Each case must give exactly what the reference
// loader (csrc/fixtures/, through scripts/cross/peer_pyarrow.py) gives on the same
// corpus, which is "accepted, equal" or the outcome docs/conformance.md records
// for pyarrow; every struct the mini loader gave a release must be released once;
// the async cases, which it does not play, must be reported so. Two broken copies
// of the loader show that the check catches a loader that is wrong.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { check, failure, PYTHON, recorded, recordedFor, ROOT, run, type CorpusCase } from './fixtures-peer-common.js';

interface Result {
  case: string;
  outcome: 'accepted' | 'refused' | 'unsupported' | 'load-error';
  equal: boolean | null;
  message: string | null;
  stream_error?: string;
  structs?: number;
  problems?: string[];
}
interface Summary { cases: number; accepted_equal: number; outcomes: Record<string, number>; release_problems: string[] }
interface Run { results: Result[]; summary: Summary; stderr: string }
interface Corpus { dir: string; cases: CorpusCase[]; mini: Run; reference: Map<string, Result> }

const CROSS = join(ROOT, 'scripts', 'cross');
const LOADER = join(CROSS, 'mini_loader.py');
const ASYNC = 'mini loader: async device stream scripts (root kind 6) are not played (mini_loader.py)';
// Lines of code: the lines on which Python's tokenizer finds something besides comments and docstrings.
const CODE_LINES = [
  'import io, sys, tokenize',
  'skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)',
  'toks = tokenize.generate_tokens(io.StringIO(open(sys.argv[1]).read()).readline)',
  'print(len({t.start[0] for t in toks if t.type not in skip and not (t.type == tokenize.STRING and t.string.startswith(\'"""\'))}))',
].join('\n');
const dirs: string[] = [];
const corpora = new Map<'ts' | 'mini', Corpus>();

/** Runs mini_loader_check.py (from `dir`, where a broken loader may sit) on a corpus. */
function checkWith(dir: string, corpus: string): Run {
  const r = run(PYTHON, [join(dir, 'mini_loader_check.py'), corpus], 300_000);
  const lines = check('mini_loader_check.py', r).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Result & { summary?: Summary });
  return { results: lines.filter((l) => l.summary === undefined), summary: lines.find((l) => l.summary !== undefined)!.summary!, stderr: r.stderr };
}

/** The check run on the TS corpus with a copy of the loader in which `from` (which must be there) became `to`. */
function broken(from: string, to: string): Run {
  const source = readFileSync(LOADER, 'utf8');
  expect(source).toContain(from);
  const dir = mkdtempSync(join(tmpdir(), 'acd-mini-broken-'));
  dirs.push(dir);
  for (const f of ['mini_loader_check.py', 'peer_pyarrow.py', 'integration_json.py']) copyFileSync(join(CROSS, f), join(dir, f));
  writeFileSync(join(dir, 'mini_loader.py'), source.replace(from, to));
  return checkWith(dir, corpora.get('ts')!.dir);
}

function load(dir: string): Corpus {
  const cases = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: CorpusCase[] }).cases
    .filter((c) => c.images === undefined || c.images.lp64 !== undefined);  // the mini corpus names no images
  const out = check('peer_pyarrow.py', run(PYTHON, [join(CROSS, 'peer_pyarrow.py'), dir], 300_000));
  const reference = new Map(out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Result).map((r) => [r.case, r]));
  return { dir, cases, mini: checkWith(CROSS, dir), reference };
}

const isAsync = (c: CorpusCase) => (c.roots ?? []).some((r) => r.kind === 'async device stream script');

beforeAll(() => {
  check('scripts/cross/setup.sh', run('bash', [join(CROSS, 'setup.sh')], 240_000));
  const ts = mkdtempSync(join(tmpdir(), 'acd-mini-loader-ts-'));
  const mini = mkdtempSync(join(tmpdir(), 'acd-mini-loader-mini-'));
  dirs.push(ts, mini);
  check('arrow-c-device fixtures', run('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', ts, '--layout', 'lp64'], 120_000));
  corpora.set('ts', load(ts));
  check('mini_corpus.py', run(PYTHON, [join(CROSS, 'mini_corpus.py'), mini], 120_000));
  corpora.set('mini', load(mini));
}, 600_000);

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Every way the results differ from what each case of the corpus must give, one line per case and
 * rule: the outcome docs/conformance.md records for pyarrow (else accepted and equal, or refused for
 * a negative fixture), a failing stream's error, and exactly what the reference loader gave; an
 * async case reported unsupported by the mini loader. Empty when all is right.
 */
function wrong(corpus: Corpus, results: Result[]): string[] {
  const rows = recorded('pyarrow');
  const out: string[] = [];
  const want = (name: string, rule: string, seen: object, expected: object) => {
    if (!isDeepStrictEqual(seen, expected)) out.push(`${name}, ${rule}: got ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`);
  };
  for (const c of corpus.cases) {
    const r = results.find((x) => x.case === c.name);
    if (r === undefined) {
      out.push(`${c.name}: no result`);
      continue;
    }
    const seen = { outcome: r.outcome, equal: r.equal, message: r.message, stream_error: r.stream_error };
    if (isAsync(c)) {
      want(c.name, 'async, not played', seen, { outcome: 'unsupported', equal: null, message: ASYNC, stream_error: undefined });
      continue;
    }
    const outcome = recordedFor(rows, c.name);
    if (outcome !== undefined) want(c.name, 'recorded in docs/conformance.md', seen, { ...seen, outcome });
    else want(c.name, 'not recorded', seen, c.invalid === true ? { ...seen, outcome: 'refused' } : { ...seen, outcome: 'accepted', equal: true });
    const failing = failure(c);
    if (failing !== null) want(c.name, 'the stream fails', seen, { ...seen, stream_error: `OSError: ${failing}` });
    const ref = corpus.reference.get(c.name);
    if (ref === undefined) out.push(`${c.name}: no result from the reference loader`);
    else want(c.name, 'as the reference loader', seen, { outcome: ref.outcome, equal: ref.equal, message: ref.message, stream_error: ref.stream_error });
  }
  return out;
}

test('mini_loader.py: under 200 lines, comments included, Python stdlib only; the docs cite those counts', () => {
  const source = readFileSync(LOADER, 'utf8');
  const lines = source.endsWith('\n') ? source.split('\n').length - 1 : source.split('\n').length;
  expect(lines).toBeLessThan(200);
  const imports = [...source.matchAll(/^(?:import (\w+)|from (\w+) import)/gm)].map((m) => m[1] ?? m[2]);
  expect(imports.sort()).toEqual(['collections', 'ctypes', 'struct']);
  expect(source).not.toMatch(/CDLL|acd_fixture\.(so|h)|AcdFixture/);  // not the reference loader in disguise
  const code = check('tokenize', run(PYTHON, ['-c', CODE_LINES, LOADER], 30_000)).trim();
  expect(Number(code)).toBeLessThan(lines);
  const fixtures = readFileSync(join(ROOT, 'docs', 'fixtures.md'), 'utf8');
  expect(fixtures.match(/`scripts\/cross\/mini_loader\.py`, (\d+) lines of Python with its comments, (\d+) of code/)?.slice(1)).toEqual([String(lines), code]);
  const conformance = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');
  expect(conformance.match(/(\d+) lines with its comments \((\d+) of code\)/)?.slice(1)).toEqual([String(lines), code]);
});

test('mini_loader.py refuses an image that is not a version 1 LP64 image, or is cut short', () => {
  const image = join(corpora.get('ts')!.dir, 'lp64', 'int32.acdfix');
  const script = [
    'import sys; sys.path.insert(0, sys.argv[1]); from mini_loader import MiniLoader',
    'data = open(sys.argv[2], "rb").read()',
    'for name, bad in [("ptr4", data[:10] + b"\\x04" + data[11:]), ("v2", data[:8] + b"\\x02" + data[9:]), ("cut", data[:-1])]:',
    '    open(sys.argv[3], "wb").write(bad)',
    '    try: MiniLoader(sys.argv[3]); print(name, "loaded")',
    '    except ValueError as e: print(name, str(e).split(": ", 1)[1])',
  ].join('\n');
  const out = check('mini_loader.py on broken headers', run(PYTHON, ['-c', script, CROSS, image, join(corpora.get('ts')!.dir, 'bad.acdfix')], 30_000));
  expect(out.split('\n').filter((l) => l !== '')).toEqual([
    expect.stringMatching(/^ptr4 not a version 1 little-endian lp64 image \(.*pointer_size 4/),
    expect.stringMatching(/^v2 not a version 1 little-endian lp64 image \(magic b'ACDFIX\\r\\n', version 2,/),
    'cut body or tables past the end of the file',
  ]);
});

test('every LP64 case of both corpora loaded by the mini loader, none skipped, with a summary that adds up', () => {
  for (const [name, corpus] of corpora) {
    const names = corpus.cases.map((c) => c.name);
    expect({ name, enough: names.length >= (name === 'ts' ? 200 : 9) }).toEqual({ name, enough: true });
    expect(corpus.mini.results.map((r) => r.case)).toEqual(names);
    expect(corpus.mini.summary.cases).toBe(names.length);
    expect(Object.values(corpus.mini.summary.outcomes).reduce((a, b) => a + b, 0)).toBe(names.length);
    expect(corpus.mini.results.filter((r) => r.outcome === 'load-error')).toEqual([]);
    expect(corpus.mini.stderr).toBe('');  // no exception swallowed in a ctypes callback
  }
  expect(corpora.get('ts')!.mini.summary.accepted_equal).toBeGreaterThanOrEqual(180);
  expect(corpora.get('mini')!.mini.summary.accepted_equal).toBeGreaterThanOrEqual(8);
});

test('each case: accepted and equal, or as docs/conformance.md records for pyarrow, and what the reference loader gives', () => {
  for (const corpus of corpora.values()) {
    expect(corpus.reference.size).toBe(corpus.mini.results.length);
    expect(wrong(corpus, corpus.mini.results)).toEqual([]);
  }
  // Not played, and said so: the async cases of the TS corpus.
  expect(corpora.get('ts')!.mini.results.filter((r) => r.message === ASYNC).length).toBeGreaterThanOrEqual(3);
});

test('every struct the mini loader gave a release was released exactly once, in every case', () => {
  for (const corpus of corpora.values()) {
    for (const r of corpus.mini.results) {
      expect({ case: r.case, problems: r.problems }).toEqual({ case: r.case, problems: [] });
      expect({ case: r.case, some: (r.structs ?? 0) > 0 }).toEqual({ case: r.case, some: true });
    }
    expect(corpus.mini.summary.release_problems).toEqual([]);
  }
  // The streams were played: their schema copies and batches are among the structs counted.
  const ts = corpora.get('ts')!;
  expect(ts.mini.results.find((r) => r.case === 'stream-batches')!.structs).toBeGreaterThan(ts.cases.find((c) => c.name === 'stream-batches')!.roots!.length);
});

test('the check catches a broken loader: children never released, a failing batch handed out', () => {
  const ts = corpora.get('ts')!;
  const leaky = broken('            call_release(u64(kids + 8 * i).value, release)  # skips a child already released\n', '            pass\n');
  expect(leaky.summary.release_problems.length).toBeGreaterThan(100);
  expect(leaky.results.find((r) => r.case === 'int32')!.problems).toEqual(expect.arrayContaining([expect.stringMatching(/released 0 times$/)]));
  expect(wrong(ts, leaky.results)).toEqual([]);  // pyarrow sees nothing wrong: only the counts tell
  // The failing batch (empty) handed out instead of the error: the values are still equal, the error is missing.
  const noFailure = broken("        if state['next'] == fail_at:\n", '        if False:\n');
  expect(wrong(ts, noFailure.results).map((w) => w.split(':')[0])).toEqual(['stream-fails, the stream fails', 'stream-fails, as the reference loader']);
  expect(noFailure.summary.release_problems).toEqual([]);
}, 120_000);
