// Issue 9, item 8: the CLI fuzzer (scripts/fuzz/cli-fuzz.mjs), a seeded part
// of it in npm test, and its classifier checked against stub commands that
// misbehave in each way it must catch. The whole run: npm run fuzz:cli.
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const FUZZ = join(__dirname, '..', 'scripts', 'fuzz', 'cli-fuzz.mjs');
const dir = mkdtempSync(join(tmpdir(), 'acd-cli-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface FuzzSummary {
  runs: number; exit0Verified: number; exit1: number; exit2: number; failures: number;
  byKind: Record<string, number>; slowestMs: number; failed: { kind: string; input: string; why: string }[];
}

function fuzz(...args: string[]): { status: number | null; line: string; summary: FuzzSummary } {
  const r = spawnSync(process.execPath, [FUZZ, '--json', ...args], { encoding: 'utf8', timeout: 120_000 });
  const out = r.stdout.trim().split('\n');
  return { status: r.status, line: out[0] ?? '', summary: JSON.parse(out[out.length - 1] ?? 'null') };
}

function stub(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

describe('item 8: the CLI fuzzer', () => {
  test('item 8: a seeded sample of 24 gold files, 2 mutations each: every run ends within 10 s, exit 0 only when verified', () => {
    const { status, line, summary } = fuzz('--seed', '9', '--mutations', '2', '--sample', '24');
    expect(line).toMatch(/^cli-fuzz: seed 9, 24 gold files × 2 mutations = 48 runs in \d+ s: exit 0 ×\d+ \(each verified\), exit 1 ×\d+, exit 2 ×\d+; 0 failures/);
    expect(summary).toMatchObject({ runs: 48, failures: 0, failed: [] });
    expect(summary.exit0Verified + summary.exit1 + summary.exit2).toBe(48);
    expect(summary.slowestMs).toBeLessThan(10_000);
    expect(status).toBe(0);
  }, 120_000);

  test.each([
    ['a command that says ok to everything', 'console.log(JSON.stringify({ ok: true, reader: "own" }));', 'false ok'],
    ['a hang', 'setTimeout(() => {}, 60_000);', 'hang'],
    ['an uncaught exception (a stack trace)', 'throw new Error("boom");', 'stack trace'],
    ['an abort (as V8 out of memory)', 'process.kill(process.pid, "SIGABRT");', 'signal'],
    ['another exit code', 'process.exitCode = 3;', 'exit code'],
    ['exit 2 without its line', 'process.exitCode = 2;', 'output'],
  ])('item 8: the fuzzer fails %s', (name, body, kind) => {
    const bin = stub(`${kind.replace(' ', '-')}.mjs`, body);
    const { status, summary } = fuzz('--seed', '1', '--mutations', '2', '--filter', '1.0.0-littleendian/generated_primitive.stream', '--timeout', '2000', '--bin', bin);
    expect(status).toBe(1);
    expect(summary.runs).toBe(2);
    expect(summary.failures).toBe(2);
    expect(summary.byKind[kind]).toBe(2);
    expect(summary.failed.map((f) => f.input)).toEqual([expect.stringMatching(/^1\.0\.0-littleendian\/generated_primitive\.stream #[01] \[/),
      expect.stringMatching(/^1\.0\.0-littleendian\/generated_primitive\.stream #[01] \[/)]);
  }, 60_000);

  test('item 8: bad options are one line and exit 2', () => {
    const r = spawnSync(process.execPath, [FUZZ, '--mutations', 'many'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('cli-fuzz: --mutations: expected a whole number, found many');
  });
});
