// The cross-implementation matrix (issue 12, item 6): real peers load the LP64
// fixture images through the portable C loader (csrc/fixtures/), import every
// root, validate it fully and compare it with the expected IPC stream; the
// loader counts the releases. Every case must be accepted and equal, with
// every release called once, except the outcomes recorded in
// docs/conformance.md, which must then be exactly as recorded.
// Corpora: the TS writer's (`arrow-c-device fixtures --layout lp64`, after
// build.sh) and the Python-written mini corpus (scripts/cross/mini_corpus.py).
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, failure, PYTHON, recorded, recordedFor, ROOT, run, staleRows, type CorpusCase as Case } from './fixtures-peer-common.js';


interface PeerResult {
  case: string;
  outcome: 'accepted' | 'refused' | 'unsupported' | 'load-error';
  equal: boolean | null;
  message: string | null;
  problems: number;
  report: string;
  releases: Record<string, number>;
  stream_error?: string;
  as_struct_array?: { outcome: string; equal: boolean | null; message: string | null; problems: number };
}


const dirs: string[] = [];
const results = new Map<string, { cases: Case[]; peer: PeerResult[] }>();

function peer(corpus: string, dir: string): void {
  const cases = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: Case[] }).cases
    .filter((c) => c.images === undefined || c.images.lp64 !== undefined);
  const out = check('peer_pyarrow.py', run(PYTHON, [join(ROOT, 'scripts', 'cross', 'peer_pyarrow.py'), dir], 300_000));
  results.set(corpus, { cases, peer: out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as PeerResult) });
}

beforeAll(() => {
  check('scripts/cross/setup.sh', run('bash', [join(ROOT, 'scripts', 'cross', 'setup.sh')], 240_000));
  const ts = mkdtempSync(join(tmpdir(), 'acd-peers-ts-'));
  const mini = mkdtempSync(join(tmpdir(), 'acd-peers-mini-'));
  dirs.push(ts, mini);
  check('arrow-c-device fixtures', run('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', ts, '--layout', 'lp64'], 120_000));
  peer('ts', ts);
  check('mini_corpus.py', run(PYTHON, [join(ROOT, 'scripts', 'cross', 'mini_corpus.py'), mini], 120_000));
  peer('mini', mini);
}, 600_000);

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function expectMatrix(corpus: string, peer: string): void {
  const { cases, peer: got } = results.get(corpus)!;
  const exceptions = recorded(peer);
  expect(got.map((r) => r.case)).toEqual(cases.map((c) => c.name));
  for (const r of got) {
    const outcome = recordedFor(exceptions, r.case);
    const seen = { case: r.case, outcome: r.outcome, equal: r.equal, message: r.message };
    const invalid = cases.find((c) => c.name === r.case)?.invalid === true;
    if (outcome === undefined) expect(seen).toEqual(invalid ? { ...seen, outcome: 'refused' } : { ...seen, outcome: 'accepted', equal: true });
    else expect(seen).toEqual({ ...seen, outcome });
    // Whatever the outcome, the peer released every struct it took, once.
    expect({ case: r.case, problems: r.problems, report: r.report, double: r.releases.double_releases, bad: r.releases.bad_releases })
      .toEqual({ case: r.case, problems: 0, report: '', double: 0, bad: 0 });
    const failing = failure(cases.find((c) => c.name === r.case)!);
    if (failing !== null) expect({ case: r.case, error: r.stream_error }).toEqual({ case: r.case, error: `OSError: ${failing}` });
    // A RecordBatch import refused: the same tree as a StructArray must be accepted and equal (whose fault it is).
    if (r.outcome === 'refused' && r.message?.includes('RecordBatch') && !invalid) {
      expect({ case: r.case, ...r.as_struct_array }).toEqual({ case: r.case, outcome: 'accepted', equal: true, message: null, problems: 0 });
    }
  }
}

test('pyarrow: the TS corpus (arrow-c-device fixtures), every case as recorded', () => {
  expectMatrix('ts', 'pyarrow');
  const got = results.get('ts')!.peer;
  expect(got.length).toBeGreaterThanOrEqual(90);
  expect(got.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(85);
});

test('pyarrow: the Python-written mini corpus, every case as recorded', () => {
  expectMatrix('mini', 'pyarrow');
  const got = results.get('mini')!.peer;
  expect(got.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(8);
  // The failing stream: the batch before the failure equal, then EIO as Python's OSError with the script's message.
  expect(got.find((r) => r.case === 'stream_fails')?.stream_error).toBe('OSError: disk on fire');
});

test('docs/conformance.md records no outcome for a case that does not exist', () => {
  const names = [...results.values()].flatMap((r) => r.cases.map((c) => c.name));
  expect(staleRows(recorded('pyarrow'), names)).toEqual([]);
  expect(recorded('pyarrow').size).toBeGreaterThan(0);
});

/** docs/conformance.md's table of the negative fixtures: case -> where pyarrow refuses it (or 'accepted') and its message. */
function recordedInvalid(): Map<string, { level: string; where: string; message: string }> {
  const doc = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `(invalid-[\w-]+)` \| (minimal|default|full) \| (import|validate\(full=True\)|accepted) \| (.+) \|$/gm)];
  return new Map(rows.map((m) => [m[1]!, { level: m[2]!, where: m[3]!, message: m[4]!.replace(/^`|`$/g, '') }]));
}

test('pyarrow: every negative fixture refused, at import or by validate(full=True), with the message docs/conformance.md records', () => {
  const { cases, peer: got } = results.get('ts')!;
  const invalid = cases.filter((c) => c.invalid === true).map((c) => c.name);
  expect(invalid.length).toBeGreaterThanOrEqual(20);
  const table = recordedInvalid();
  expect([...table.keys()].sort()).toEqual([...invalid].sort());
  for (const name of invalid) {
    const r = got.find((x) => x.case === name)!;
    const where = r.outcome === 'accepted' ? 'accepted' : r.message?.startsWith('validate(full=True): ') ? 'validate(full=True)' : 'import';
    const { level, where: want, message } = table.get(name)!;
    expect({ case: name, level }).toEqual({ case: name, level: cases.find((c) => c.name === name)!.refused_at });
    expect({ case: name, where, refused: r.outcome }).toEqual({ case: name, where: want, refused: want === 'accepted' ? 'accepted' : 'refused' });
    if (want !== 'accepted') expect({ case: name, message: r.message }).toEqual({ case: name, message: expect.stringContaining(message) });
  }
  // One case only is accepted: a buffer too short, which no native consumer can see (docs/conformance.md).
  expect(invalid.filter((n) => table.get(n)!.where === 'accepted')).toEqual(['invalid-buffer-short']);
});
