// Issue 15, the CLI: progress on stderr (batches and bytes done) for work that
// takes seconds, only on a terminal or with --progress, throttled, and never
// on stdout.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as arrow from 'apache-arrow';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../ts/cli/cli.js';
import { Progress, progressMode, type Io, type ProgressClock } from '../ts/cli/progress.js';
import { GOLD } from './helpers.js';

const BIN = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
const dir = mkdtempSync(join(tmpdir(), 'acd-progress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });

/** An Io that records what it was given; `tty` says whether stderr is a terminal. */
function recorder(tty: boolean) {
  const out: string[] = [];
  const err: string[] = [];
  const raw: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), errWrite: (t) => raw.push(t), errIsTTY: tty };
  return { io, out, err, raw };
}

function clock(): ProgressClock & { t: number } {
  const c = { t: 0, now: () => c.t, intervalMs: 250, delayMs: 1000 };
  return c;
}

describe('Progress', () => {
  test('when it is shown: --progress, or a terminal without --json; --no-progress never', () => {
    expect(progressMode({}, false)).toEqual({ mode: 'off', forced: false });
    expect(progressMode({}, true)).toEqual({ mode: 'terminal', forced: false });
    expect(progressMode({ json: true }, true)).toEqual({ mode: 'off', forced: false });
    expect(progressMode({ progress: true }, false)).toEqual({ mode: 'lines', forced: true });
    expect(progressMode({ progress: true, json: true }, false)).toEqual({ mode: 'lines', forced: true });
    expect(progressMode({ progress: true }, true)).toEqual({ mode: 'terminal', forced: true });
    expect(progressMode({ 'no-progress': true }, true)).toEqual({ mode: 'off', forced: false });
  });

  test('--progress without a terminal: one line per report, at most one per 250 ms but every new step, and a last line with the time', () => {
    const r = recorder(false);
    const c = clock();
    const p = Progress.of(r.io, 'roundtrip', { progress: true }, c);
    p.update('batch 1/4');
    c.t = 100;
    p.update('batch 2/4');
    c.t = 300;
    p.update('batch 3/4');
    c.t = 400;
    p.update('batch 4/4');
    // A new step is shown at once: it may run for long without another report.
    p.step('comparing');
    c.t = 1234;
    p.end('4 batches, ok');
    expect(r.err).toEqual(['roundtrip: batch 1/4', 'roundtrip: batch 3/4', 'roundtrip: comparing', 'roundtrip: 4 batches, ok in 1.2 s']);
    expect([r.out, r.raw]).toEqual([[], []]);
  });

  test('on a terminal: nothing for work under a second, then one line rewritten in place, cleared at the end', () => {
    const quick = recorder(true);
    const c = clock();
    const p = Progress.of(quick.io, 'fixtures', {}, c);
    for (c.t = 0; c.t < 1000; c.t += 100) p.update(`case ${c.t / 100 + 1}/10`);
    p.end('10 cases');
    expect([quick.err, quick.raw]).toEqual([[], []]);

    const slow = recorder(true);
    const d = clock();
    const q = Progress.of(slow.io, 'fixtures', {}, d);
    for (d.t = 0; d.t <= 1500; d.t += 100) q.update(`case ${d.t / 100 + 1}/16`);
    q.end('16 cases');
    expect(slow.raw).toEqual(['\rfixtures: case 11/16\x1b[K', '\rfixtures: case 14/16\x1b[K', '\r\x1b[K']);
    expect(slow.err).toEqual([]);
  });

  test('--json on a terminal: no progress unless --progress', () => {
    const r = recorder(true);
    const p = Progress.of(r.io, 'bench', { json: true }, clock());
    p.update('set 1/4');
    p.end('done');
    expect([r.err, r.raw]).toEqual([[], []]);
  });

  test('bench --json FILE on a terminal: the tables go to stdout, so progress shows as without --json', () => {
    expect(progressMode({ json: 'out.json' }, true)).toEqual({ mode: 'terminal', forced: false });
    expect(progressMode({ json: true }, true)).toEqual({ mode: 'off', forced: false });
  });
});

describe('roundtrip and integration: progress on stderr, stdout unchanged', () => {
  let file: string;
  beforeAll(() => {
    // 40 batches of 25,000 rows (about 16 MB of buffers): seconds of work.
    const rows = 25_000;
    const batches = Array.from({ length: 40 }, (_, b) => {
      const ints = Int32Array.from({ length: rows }, (_, i) => b * rows + i);
      const strings = Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : `value ${b}:${i}`));
      return arrow.tableFromArrays({ n: ints, s: arrow.vectorFromArray(strings, new arrow.Utf8()) }).batches[0]!;
    });
    file = join(dir, 'big.arrows');
    writeFileSync(file, arrow.tableToIPC(new arrow.Table(batches), 'stream'));
  });

  test('--progress: reading, checking and round-trip lines with batches and MB, a last line; stdout as without it', () => {
    const plain = run('roundtrip', file);
    expect([plain.status, plain.stderr]).toEqual([0, '']);
    expect(plain.stdout).toMatch(/^ok: .*big\.arrows \(copy mode\): 40 batches, 1000000 rows, 2 columns, 0 bytes leaked\n$/);
    const shown = run('roundtrip', file, '--progress');
    expect(shown.status).toBe(0);
    expect(shown.stdout).toBe(plain.stdout);
    const lines = shown.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`roundtrip: reading ${file}`);
    expect(lines.every((l) => l.startsWith('roundtrip: '))).toBe(true);
    expect(lines.slice(1, -1).every((l) => /^roundtrip: (reading .* \([\d.]+ MB\) with this library's reader|reading with apache-arrow|(checking|comparing the readers|round trip): batch \d+\/40 \([\d.]+ MB of [\d.]+ MB\))$/.test(l))).toBe(true);
    // Every step is shown as it starts, and the bytes are those of the batches' buffers (about 19 MB).
    expect(lines[1]).toMatch(/^roundtrip: reading .*big\.arrows \(\d+\.\d MB\) with this library's reader$/);
    for (const step of ['checking', 'comparing the readers', 'round trip']) {
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^roundtrip: ${step}: batch 1/40 \\(0\\.\\d MB of 1\\d\\.\\d MB\\)$`)));
    }
    expect(lines).toContain('roundtrip: reading with apache-arrow');
    expect(lines[lines.length - 1]).toMatch(/^roundtrip: 40 batches, ok in [\d.]+ s$/);
  }, 120_000);

  test('--json --progress: the summary alone on stdout; --json without --progress: nothing on stderr', () => {
    const json = run('roundtrip', file, '--json', '--via', 'stream', '--reader', 'own', '--progress');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, via: 'stream', batches: 40, rows: 1_000_000, bytesLeaked: 0 });
    expect(json.stderr).toMatch(/^roundtrip: reading /);
    expect(json.stderr).toMatch(/\nroundtrip: 40 batches, ok in [\d.]+ s\n$/);
    const quiet = run('integration', join(GOLD, '1.0.0-littleendian', 'generated_primitive.json.gz'), '--json');
    expect([quiet.status, quiet.stderr]).toEqual([0, '']);
    const shown = run('integration', join(GOLD, '1.0.0-littleendian', 'generated_primitive.json.gz'), '--json', '--progress');
    expect(shown.stdout).toBe(quiet.stdout);
    expect(shown.stderr).toMatch(/^integration: reading .*generated_primitive\.json\.gz\n(integration: .*\n)*integration: 2 batches, ok in [\d.]+ s\n$/);
  }, 120_000);

  test('on a terminal with --progress: the line is rewritten in place and cleared before the result', async () => {
    const r = recorder(true);
    const code = await main(['roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.stream'), '--progress'], {}, r.io);
    expect(code).toBe(0);
    expect(r.raw.length).toBeGreaterThanOrEqual(2);
    expect(r.raw[0]).toMatch(/^\rroundtrip: reading .*generated_nested\.stream\x1b\[K$/);
    expect(r.raw[r.raw.length - 1]).toBe('\r\x1b[K');
    expect(r.err).toEqual([]);
    expect(r.out).toEqual([expect.stringMatching(/^ok: .*generated_nested\.stream/)]);
  });
});
