// The Arrow C++ async device stream peer of the cross-implementation matrix
// (issue 12, item 6), both directions, built by scripts/cross/cpp/setup.sh
// against pyarrow's libarrow (a peer that cannot be built fails this test):
// - cpp_async_consumer: arrow::CreateAsyncDeviceStreamHandler consumes the
//   loader's async scripts (the LP64 async-stream-* cases) in four scenarios;
// - cpp_async_producer: arrow::ExportAsyncRecordBatchReader drives the C
//   core's async consumer with every valid non-stream case's batch (its
//   expected IPC stream, or its image imported by Arrow C++ where it has no
//   stream) plus an empty slice and a slice, and with a failing generator, a
//   cancel and two refusals (on int32).
// Every case and scenario must do what the spec asks (accepted, equal, every
// struct released once, nothing left allocated), except the outcomes recorded
// in docs/conformance.md (peer `arrow-cpp-async-<scenario>` for the consumer,
// `arrow-cpp-export-<scenario>` for the producer), which must be exactly as
// recorded.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check, recorded, ROOT, run } from './fixtures-peer-common.js';

const OUT = join(ROOT, 'build', 'cpp-cross');
const SCENARIOS = ['paced', 'credit-1', 'eager', 'cancel'];
const EXPORTS = ['inline', 'pumped'];
const EXPORT_ERRORS = ['fails', 'cancel', 'refuse-schema', 'refuse-task'];
const FIRST = 'int32';  // the producer's error scenarios run on it

interface Root { kind: string; batches?: number; fail_at?: number; message?: string; errno?: { lp64: number }; device_type_value?: number }
interface Case { name: string; images: { lp64?: string }; roots: Root[]; invalid?: boolean; expected?: { ipc?: string | null } | null }
type Line = Record<string, any>;  // eslint-disable-line @typescript-eslint/no-explicit-any

let dir = '';
let cases: Case[] = [];
let consumed: Line[] = [];
let exported: Line[] = [];
let sources: string[] = [];
let images: string[] = [];  // sources without an IPC stream: read from their image

const lines = (out: string) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);

beforeAll(() => {
  // A first build: the C core natively and two C++ programs (about 30 s on two cores), after the venv.
  check('scripts/cross/cpp/setup.sh', run('bash', [join(ROOT, 'scripts', 'cross', 'cpp', 'setup.sh')], 540_000));
  dir = mkdtempSync(join(tmpdir(), 'acd-peers-cpp-'));
  check('arrow-c-device fixtures', run('node', [join(ROOT, 'bin', 'arrow-c-device.mjs'), 'fixtures', '--out', dir, '--layout', 'lp64'], 120_000));
  cases = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: Case[] }).cases.filter((c) => c.images.lp64 !== undefined);
  const scripts = cases.filter((c) => c.roots.some((r) => r.kind === 'async device stream script')).map((c) => c.name);
  consumed = lines(check('cpp_async_consumer', run(join(OUT, 'cpp_async_consumer'), [dir, ...scripts], 120_000)));
  const plain = ['ArrowSchema', 'ArrowArray', 'ArrowDeviceArray'];
  const valid = cases.filter((c) => c.invalid !== true && c.roots.every((r) => plain.includes(r.kind)));
  sources = [FIRST, ...valid.map((c) => c.name).filter((n) => n !== FIRST)];
  images = valid.filter((c) => typeof c.expected?.ipc !== 'string').map((c) => c.name);
  exported = lines(check('cpp_async_producer', run(join(OUT, 'cpp_async_producer'), [dir, ...sources], 120_000)));
}, 780_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

/** What the consumer's line says, in the terms the expectations use. */
function consumerSeen(r: Line) {
  return {
    case: r.case, scenario: r.scenario, batches: r.batches, valid: r.valid.every((v: unknown) => v === true),
    equal: r.equal.every((v: unknown) => v === true), schema: r.schema_equal, end: r.end,
    errno: r.error?.errno ?? null, message: r.error?.message ?? null, never_extracted: r.tasks_never_extracted,
    violations: r.async.violations > 0, async_problems: r.async_problems, problems: r.problems,
    handler_releases: r.async.handler_releases, cancels: r.async.cancel_calls,
  };
}

/** What the spec asks of Arrow C++'s consumer in a scenario, or what docs/conformance.md records. */
function consumerExpected(c: Case, scenario: string, outcome: string | undefined) {
  const script = c.roots[0];
  const fails = script.fail_at !== undefined && script.fail_at >= 0;
  const before = fails ? script.fail_at! : script.batches!;
  const error = { errno: fails ? script.errno!.lp64 : null, message: fails ? script.message! : null };
  const base = { case: c.name, scenario, valid: true, equal: true, schema: true, never_extracted: 0, violations: false,
    async_problems: 0, problems: 0, handler_releases: 1, cancels: 0 };
  // A script on a device Arrow C++ has no memory manager for: it takes the schema, extracts the first
  // batch, fails to import it and leaks it; the producer hears nothing (docs/conformance.md).
  if (outcome === 'device-leak') {
    const refused = { ...base, batches: 0, end: 'error', errno: null, message: `Device type ${script.device_type_value}is not registered`, problems: 1 };
    return scenario === 'eager' ? { ...refused, never_extracted: 1, violations: true, async_problems: 2 } : { ...refused, handler_releases: 0 };
  }
  // Cancelled after its first batch: the producer releases the handler, nothing more comes.
  if (scenario === 'cancel' && before > 0) {
    const cancelled = { ...base, batches: 1, errno: null, message: null, cancels: 1 };
    if (outcome === 'pending') return { ...cancelled, end: 'pending', problems: null };
    return { ...cancelled, end: 'end' };
  }
  const spec = { ...base, batches: before, end: fails ? 'error' : 'end', ...error };
  if (outcome === 'violation') return { ...spec, violations: true, async_problems: 1 };
  if (outcome === 'lost-batch') return { ...spec, batches: 0, never_extracted: before, async_problems: before };
  return spec;
}

test('Arrow C++ consumer (CreateAsyncDeviceStreamHandler): every async script in every scenario as recorded, every struct released once', () => {
  const scripts = cases.filter((c) => c.roots.some((r) => r.kind === 'async device stream script'));
  expect(scripts.length).toBeGreaterThanOrEqual(3);
  expect(consumed.map((r) => `${r.case}/${r.scenario}`)).toEqual(scripts.flatMap((c) => SCENARIOS.map((s) => `${c.name}/${s}`)));
  for (const r of consumed) {
    const c = scripts.find((x) => x.name === r.case)!;
    const outcome = recorded(`arrow-cpp-async-${r.scenario}`).get(r.case);
    expect(consumerSeen(r)).toEqual(consumerExpected(c, r.scenario, outcome));
    // Whatever the scenario, no struct of the loader's was released twice or left unreleased (but the batch leaked above).
    if (outcome === 'device-leak') expect({ ...r.releases, report: r.report }).toEqual({ ...r.releases, double_releases: 0, bad_releases: 0, not_released: 1, report: expect.stringMatching(/^ArrowArray at body offset \d+: handed out and never released/) });
    else if (r.problems !== null) expect({ case: r.case, scenario: r.scenario, ...r.releases, report: r.report }).toEqual(
      { case: r.case, scenario: r.scenario, ...r.releases, double_releases: 0, bad_releases: 0, not_released: 0, report: '' });
  }
  // The play really happened: batches came out, the failing script's error crossed.
  expect(consumed.filter((r) => r.scenario === 'paced').reduce((n, r) => n + r.batches, 0)).toBeGreaterThanOrEqual(4);
  expect(consumed.find((r) => r.case === 'async-stream-fails' && r.scenario === 'paced')?.error)
    .toEqual({ status: 'Unknown error', message: 'fixture stream: batch 1 failed', errno: 5, detail_message: 'fixture stream: batch 1 failed' });
});

/** What the producer's line says. */
function producerSeen(r: Line) {
  if (r.outcome === 'crashed') return { case: r.case, scenario: r.scenario, outcome: r.outcome };
  return {
    case: r.case, scenario: r.scenario, outcome: r.outcome, batches: r.batches, valid: r.valid.every((v: unknown) => v === true),
    equal: r.equal.every((v: unknown) => v === true), ended: r.ended, released: r.released, error_code: r.error_code,
    calls: { on_schema: r.calls.on_schema, tasks: r.calls.tasks, ends: r.calls.ends, on_error: r.calls.on_error, release: r.calls.release },
    on_error_message: r.calls.error_message ?? null,
    // Arrow C++'s exports: the schema and one per batch taken, each released once; every task extracted.
    exports_besides_batches: r.arrow_exports - r.batches,
    left: [r.consumers_live, r.tasks_live, r.core_bytes_left, r.arrow_references_left, r.arrow_exports - r.arrow_releases, r.tasks_unextracted],
  };
}

/** What the spec asks of Arrow C++'s producer (and of the core's consumer), or what is recorded. */
function producerExpected(name: string, scenario: string, sources: number, outcome: string | undefined) {
  if (outcome === 'crashed') return { case: name, scenario, outcome };
  const calls = { on_schema: 1, tasks: sources, ends: 1, on_error: 0, release: 1 };
  const base = { case: name, scenario, outcome: 'accepted', batches: sources, valid: true, equal: true, ended: true,
    released: true, error_code: 0, calls, on_error_message: null, exports_besides_batches: 1, left: [0, 0, 0, 0, 0, 0] };
  const EINVAL = 22;
  const onError = (message: string) => ({ error_code: EINVAL, calls: { ...calls, tasks: base.calls.tasks, ends: 0, on_error: 1 }, on_error_message: message });
  switch (scenario) {
    case 'fails':  // Arrow C++ reports every failure of its generator as EINVAL, with the status's message.
      return { ...base, batches: 1, ended: false, ...onError('source: batch 1 failed'), calls: { ...calls, tasks: 1, ends: 0, on_error: 1 } };
    case 'cancel': {
      const cancelled = { ...base, batches: 1, ended: false, calls: { ...calls, tasks: 1, ends: 0 } };
      if (outcome === 'violation') return { ...cancelled, error_code: EINVAL, calls: { ...cancelled.calls, on_error: 1 }, on_error_message: 'Consumer requested cancellation' };
      return cancelled;
    }
    case 'refuse-schema': {
      const refused = { ...base, outcome: 'refused', batches: 0, ended: false, error_code: EINVAL, calls: { ...calls, tasks: 0, ends: 0 } };
      if (outcome === 'violation') return { ...refused, calls: { ...refused.calls, on_error: 1 }, on_error_message: 'Received error from handler::on_schema 1' };
      return refused;
    }
    case 'refuse-task':
      return { ...base, batches: 1, ended: false, error_code: EINVAL, calls: { ...calls, tasks: 2, ends: 0 } };
    default:
      return base;
  }
}

test('Arrow C++ producer (ExportAsyncRecordBatchReader): every valid case\'s batches reach the core\'s consumer valid (FULL) and equal; errors, cancel and refusals as recorded', () => {
  expect(sources.length).toBeGreaterThanOrEqual(180);
  expect(images.length).toBeGreaterThanOrEqual(10);
  const wanted = [...EXPORT_ERRORS.map((s) => `${FIRST}/${s}`), ...sources.flatMap((n) => EXPORTS.map((s) => `${n}/${s}`)),
    ...images.map((n) => `${n}/image`)];
  expect(exported.map((r) => `${r.case}/${r.scenario}`).sort()).toEqual(wanted.sort());
  // Each image's structs, imported by Arrow C++ as the source, released once each.
  for (const r of exported.filter((x) => x.scenario === 'image')) expect(r).toEqual({ case: r.case, scenario: 'image', problems: 0, report: '' });
  for (const r of exported.filter((x) => x.scenario !== 'image')) {
    expect(r.outcome === 'crashed' || r.sources >= 1).toBe(true);
    const outcome = recorded(`arrow-cpp-export-${r.scenario}`).get(r.case);
    expect(producerSeen(r)).toEqual(producerExpected(r.case, r.scenario, r.sources ?? 0, outcome));
  }
  // Several batches per case, an empty one among them (the source's empty slice).
  expect(exported.filter((r) => r.scenario === 'inline').every((r) => r.sources >= 2)).toBe(true);
  expect(exported.filter((r) => r.scenario === 'pumped').reduce((n, r) => n + r.batches, 0)).toBeGreaterThanOrEqual(400);
});

test('docs/conformance.md records Arrow C++ outcomes only for cases and scenarios that exist', () => {
  const names = new Set(cases.map((c) => c.name));
  const peers = [...SCENARIOS.map((s) => `arrow-cpp-async-${s}`), ...[...EXPORTS, ...EXPORT_ERRORS].map((s) => `arrow-cpp-export-${s}`)];
  let rows = 0;
  for (const p of peers) {
    for (const name of recorded(p).keys()) {
      rows++;
      expect({ peer: p, name, exists: names.has(name) }).toEqual({ peer: p, name, exists: true });
    }
  }
  expect(rows).toBeGreaterThan(0);
});
