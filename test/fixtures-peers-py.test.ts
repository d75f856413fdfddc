// The cross-implementation matrix (issue 12, item 6), its PyCapsule peers:
// nanoarrow (Python) and arro3-core (arrow-rs) import the LP64 fixture images
// through the portable C loader, wrapped in the PyCapsules of the Arrow
// PyCapsule interface (scripts/cross/peer_capsules.py). Every case must be
// accepted and equal, with every release called once and no capsule left,
// except the outcomes recorded in docs/conformance.md, which must then be
// exactly as recorded. A negative fixture (the manifest's "invalid") must be
// refused by nanoarrow's full validation unless recorded otherwise; arrow-rs
// validates nothing on import, so arro3's outcome on one is checked only where
// recorded. A peer that setup.sh cannot install fails the test.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, failure, PYTHON, recorded, recordedFor, ROOT, run, staleRows } from './fixtures-peer-common.js';

const PEERS = ['nanoarrow', 'arro3'] as const;
type Peer = (typeof PEERS)[number];

interface PeerResult {
  case: string;
  outcome: 'accepted' | 'refused' | 'unsupported' | 'load-error';
  equal: boolean | null;
  message: string | null;
  problems: number;
  report: string;
  releases: Record<string, number>;
  capsules: { by_destructor: number; by_driver: number; live: number };
  stream_error?: string;
  compared_via_iterator?: number;
  invalid?: boolean;
}

interface Case {
  name: string;
  invalid?: boolean;
  images?: { lp64?: string };
  stream_error?: { message: string } | null;  // the mini corpus
  roots?: { kind: string; fail_at?: number; message?: string }[];  // the TS corpus
}

/** How each peer raises a stream's failure (the script's errno is EIO, 5). */
const STREAM_ERROR: Record<Peer, (message: string) => string> = {
  nanoarrow: (m) => `NanoarrowException: ArrowArrayStream::get_next() failed (5): ${m}`,
  arro3: (m) => `Exception: C Data interface error: ${m}`,
};

const dirs: string[] = [];
const corpora = new Map<string, Case[]>();
const results = new Map<string, PeerResult[]>();  // `${corpus}/${peer}`

beforeAll(() => {
  check('scripts/cross/setup.sh', run('bash', [join(ROOT, 'scripts', 'cross', 'setup.sh')], 240_000));
  const ts = mkdtempSync(join(tmpdir(), 'acd-peers-py-ts-'));
  const mini = mkdtempSync(join(tmpdir(), 'acd-peers-py-mini-'));
  dirs.push(ts, mini);
  check('arrow-c-device fixtures', run('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', ts, '--layout', 'lp64'], 120_000));
  check('mini_corpus.py', run(PYTHON, [join(ROOT, 'scripts', 'cross', 'mini_corpus.py'), mini], 120_000));
  for (const [corpus, dir] of [['ts', ts], ['mini', mini]] as const) {
    corpora.set(corpus, (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: Case[] }).cases
      .filter((c) => c.images === undefined || c.images.lp64 !== undefined));
    for (const peer of PEERS) {
      const out = check(`peer_capsules.py ${peer}`, run(PYTHON, [join(ROOT, 'scripts', 'cross', 'peer_capsules.py'), peer, dir], 300_000));
      results.set(`${corpus}/${peer}`, out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as PeerResult));
    }
  }
}, 600_000);

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function outcomeOf(r: PeerResult): string {
  if (r.outcome === 'accepted') return r.equal === true || r.invalid === true ? 'accepted' : 'unequal';
  return r.outcome;
}

function expectMatrix(corpus: string, peer: Peer): PeerResult[] {
  const cases = corpora.get(corpus)!;
  const got = results.get(`${corpus}/${peer}`)!;
  const exceptions = recorded(peer);
  expect(got.map((r) => r.case)).toEqual(cases.map((c) => c.name));
  for (const r of got) {
    const seen = { case: r.case, outcome: outcomeOf(r), message: r.message };
    expect({ case: r.case, invalid: r.invalid === true }).toEqual({ case: r.case, invalid: cases.find((c) => c.name === r.case)!.invalid === true });
    const outcome = recordedFor(exceptions, r.case);
    if (!r.invalid) expect(seen).toEqual({ ...seen, outcome: outcome ?? 'accepted' });
    else if (peer === 'nanoarrow' || outcome !== undefined) expect(seen).toEqual({ ...seen, outcome: outcome ?? 'refused' });
    // Whatever the outcome: every struct released once, by the peer or by a capsule's destructor, and no capsule left.
    expect({ case: r.case, problems: r.problems, report: r.report, double: r.releases.double_releases, bad: r.releases.bad_releases, live: r.capsules.live })
      .toEqual({ case: r.case, problems: 0, report: '', double: 0, bad: 0, live: 0 });
    const failing = failure(cases.find((c) => c.name === r.case)!);
    if (failing !== null) expect({ case: r.case, error: r.stream_error }).toEqual({ case: r.case, error: STREAM_ERROR[peer](failing) });
  }
  return got;
}

test('nanoarrow: the TS corpus, every case as recorded, validated at nanoarrow\'s full level', () => {
  const got = expectMatrix('ts', 'nanoarrow');
  expect(got.length).toBeGreaterThanOrEqual(90);
  expect(got.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(180);
  // Only string and binary views (more than 3 buffers) go back through nanoarrow's iterator rather than its export.
  expect(got.filter((r) => r.compared_via_iterator).map((r) => r.case).every((c) => /(utf8|binary)-view/.test(c))).toBe(true);
  expect(got.filter((r) => r.compared_via_iterator).length).toBeGreaterThan(0);
});

test('arro3 (arrow-rs): the TS corpus, every case as recorded', () => {
  const got = expectMatrix('ts', 'arro3');
  expect(got.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(175);
});

test('nanoarrow and arro3: the Python-written mini corpus, every case as recorded', () => {
  for (const peer of PEERS) {
    const got = expectMatrix('mini', peer);
    expect(got.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(8);
    expect(got.find((r) => r.case === 'stream_fails')?.stream_error).toBe(STREAM_ERROR[peer]('disk on fire'));
  }
});

test('docs/conformance.md records no outcome for a case that does not exist', () => {
  const cases = [...corpora.values()].flat();
  for (const peer of PEERS) {
    expect(staleRows(recorded(peer), cases.map((c) => c.name))).toEqual([]);
    expect(recorded(peer).size).toBeGreaterThan(0);
  }
});
