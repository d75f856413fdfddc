// The arrow-go peer of the cross-implementation matrix (issue 12, item 6):
// arrow-go's cdata package, through cgo, imports every LP64 fixture image that
// the portable C loader (compiled into the peer) loads, validates it fully and
// compares it with the expected values; the loader counts the releases.
// scripts/cross/go/setup.sh builds the peer (Go module proxy; a peer that
// cannot be built fails this test). Every case must be accepted and equal,
// with every release called once, except the arrow-go outcomes recorded in
// docs/conformance.md, which must then be exactly as recorded.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, recorded, recordedFor, ROOT, run, staleRows } from './fixtures-peer-common.js';

const PEER = join(ROOT, 'build', 'go-cross', 'peer_arrow_go');

interface Outcome {
  outcome: 'accepted' | 'refused' | 'unsupported' | 'violation' | 'load-error';
  equal: boolean | null;
  message: string | null;
  problems: number;
}

interface PeerResult extends Outcome {
  case: string;
  report: string;
  releases: Record<string, number>;
  expected: string | null;
  stream_error?: { errno: number; message: string };
  async?: Record<string, number>;
  as_cpu_array?: Outcome;
}

interface Root { kind: string; fail_at?: number; message?: string; errno?: { lp64: number }; device_type?: string }
interface Case { name: string; images: { lp64?: string }; roots: Root[]; invalid?: boolean }


/** What a recorded outcome means in the peer's output ("misread": accepted, values not equal).
 *  Unrecorded: a valid case accepted and equal, a negative fixture refused. */
function expectedOf(outcome: string | undefined, invalid: boolean): Partial<Outcome> {
  if (outcome === undefined) return invalid ? { outcome: 'refused' } : { outcome: 'accepted', equal: true };
  if (outcome === 'misread') return { outcome: 'accepted', equal: false };
  return { outcome: outcome as Outcome['outcome'] };
}

let dir = '';
let cases: Case[] = [];
let results: PeerResult[] = [];

beforeAll(() => {
  // A cold build (an empty Go build cache) compiles arrow-go: minutes on two cores.
  check('scripts/cross/go/setup.sh', run('bash', [join(ROOT, 'scripts', 'cross', 'go', 'setup.sh')], 540_000));
  dir = mkdtempSync(join(tmpdir(), 'acd-peers-go-'));
  check('arrow-c-device fixtures', run('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', dir, '--layout', 'lp64'], 120_000));
  cases = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: Case[] }).cases.filter((c) => c.images.lp64 !== undefined);
  const out = check('peer_arrow_go', run(PEER, [dir], 120_000));
  results = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as PeerResult);
}, 720_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

test('arrow-go: every case of the TS corpus as recorded (negative fixtures refused), every struct released once', () => {
  const rows = recorded('arrow-go');
  expect(results.map((r) => r.case)).toEqual(cases.map((c) => c.name));
  for (const r of results) {
    const seen = { case: r.case, outcome: r.outcome, equal: r.equal, message: r.message };
    const invalid = cases.find((c) => c.name === r.case)!.invalid === true;
    expect(seen).toEqual({ ...seen, ...expectedOf(recordedFor(rows, r.case), invalid) });
    // Whatever the outcome, arrow-go released every struct it took, once (the loader's report).
    expect({ case: r.case, problems: r.problems, report: r.report, double: r.releases.double_releases, bad: r.releases.bad_releases })
      .toEqual({ case: r.case, problems: 0, report: '', double: 0, bad: 0 });
  }
  expect(results.length).toBeGreaterThanOrEqual(200);
  expect(results.filter((r) => r.case.startsWith('invalid-') && r.outcome === 'refused').length).toBeGreaterThanOrEqual(15);
  expect(results.filter((r) => r.outcome === 'accepted' && r.equal).length).toBeGreaterThanOrEqual(80);
});

test('arrow-go: an ArrowDeviceArray on a simulated device is not read as CPU memory', () => {
  const onDevices = results.filter((r) => /^on-/.test(r.case));
  expect(onDevices).toHaveLength(13);
  for (const r of onDevices) {
    expect({ case: r.case, outcome: r.outcome, cpu: r.as_cpu_array?.outcome, message: r.as_cpu_array?.message?.replace(/type \d+ .*/, 'type N') })
      .toEqual({ case: r.case, outcome: 'unsupported', cpu: 'refused', message: 'the peer cannot import root 1 as a CPU array: an ArrowDeviceArray on device type N' });
  }
});

test('arrow-go: a refusal by its validator alone, or a protocol violation, still imported the values right', () => {
  const valid = new Set(cases.filter((c) => c.invalid !== true).map((c) => c.name));
  const shown = results.filter((r) => valid.has(r.case) && ((r.outcome === 'refused' && r.message?.includes('array.Validate')) || r.outcome === 'violation'));
  expect(shown.length).toBeGreaterThan(0);
  for (const r of shown) expect({ case: r.case, equal: r.equal }).toEqual({ case: r.case, equal: true });
});

test('arrow-go: each ArrowDeviceArray case, imported as the CPU ArrowArray it holds, does what its twin does', () => {
  const rows = recorded('arrow-go');
  const byName = new Map(results.map((r) => [r.case, r]));
  const onCpu = (c: Case) => c.roots.some((x) => x.kind === 'ArrowDeviceArray' && x.device_type === 'ARROW_DEVICE_CPU');
  const twins = results.filter((r) => onCpu(cases.find((c) => c.name === r.case)!));
  expect(twins.length).toBeGreaterThanOrEqual(80);
  for (const r of twins) {
    const twin = byName.get(r.case.replace(/-device$/, ''))!;
    expect(recordedFor(rows, twin.case)).not.toBe('unsupported');
    // A case refused before its ArrowDeviceArray mattered (its schema) has no second import.
    const got = r.outcome === 'unsupported' ? r.as_cpu_array : r;
    expect({ case: r.case, outcome: got?.outcome, equal: got?.equal, problems: got?.problems })
      .toEqual({ case: r.case, outcome: twin.outcome, equal: twin.equal, problems: 0 });
  }
});

test('arrow-go: streams give their batches, then the script\'s errno and message', () => {
  for (const c of cases) {
    const failing = c.roots.find((x) => x.fail_at !== undefined && x.fail_at >= 0);
    const r = results.find((x) => x.case === c.name)!;
    if (failing === undefined || r.outcome === 'unsupported') continue;
    // arrow-go's stream reader prefixes the errno's text ("input/output error: ..."); its async handler does not.
    const ends = r.stream_error?.message.endsWith(failing.message!) ?? false;
    expect({ case: c.name, errno: r.stream_error?.errno, ends }).toEqual({ case: c.name, errno: failing.errno!.lp64, ends: true });
  }
  expect(results.find((r) => r.case === 'stream-fails')?.stream_error).toEqual({ errno: 5, message: 'input/output error: fixture stream: batch 1 failed' });
  expect(results.find((r) => r.case === 'async-stream-fails')?.stream_error).toEqual({ errno: 5, message: 'fixture stream: batch 1 failed' });
  // The async play: every task extracted by arrow-go's handler, the end and one release.
  const async = results.find((r) => r.case === 'async-stream-batches')!.async!;
  expect({ tasks: async.tasks, extracted: async.extracted, ends: async.ends, releases: async.handler_releases })
    .toEqual({ tasks: 3, extracted: 3, ends: 1, releases: 1 });
});

test('docs/conformance.md records no arrow-go outcome for a case that does not exist', () => {
  const names = cases.map((c) => c.name);
  const rows = recorded('arrow-go');
  expect(staleRows(rows, names)).toEqual([]);
  expect(rows.size).toBeGreaterThan(0);
});
