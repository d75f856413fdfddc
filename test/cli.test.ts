// The CLI as a user runs it: the built bin, exit codes and the --json summary.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOLD } from './helpers.js';

const BIN = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
const primitive = join(GOLD, '1.0.0-littleendian', 'generated_primitive.arrow_file');

describe('roundtrip', () => {
  test.each(['copy', 'view'])('--json in %s mode prints one summary object and exits 0', (mode) => {
    const r = run('roundtrip', primitive, '--mode', mode, '--json');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]);
    expect(summary).toMatchObject({ ok: true, batches: 2, rows: 37, columns: 30, bytesLeaked: 0, mismatches: [], mode });
  });

  test('text output for a stream', () => {
    const r = run('roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.stream'));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: .*generated_nested\.stream \(copy mode\): \d+ batches, \d+ rows, \d+ columns, 0 bytes leaked/);
  });

  test('a failed round trip exits 1 and says why', () => {
    const r = run('roundtrip', join(GOLD, '0.17.1', 'generated_union.arrow_file'), '--json');
    expect(r.status).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary.ok).toBe(false);
    expect(summary.errors.length).toBeGreaterThan(0);
    expect(summary.bytesLeaked).toBe(0);
  });

  test.each([
    [['roundtrip'], /missing FILE/],
    [['roundtrip', primitive, '--mode', 'zero'], /--mode: expected copy or view, found zero/],
    [['roundtrip', primitive, '--frobnicate'], /unknown option --frobnicate/],
    [['roundtrip', '/nonexistent/file.arrow'], /cannot read \/nonexistent\/file\.arrow/],
    [['frobnicate'], /unknown command 'frobnicate'/],
  ])('bad usage %j: one line on stderr, exit 2', (args, message) => {
    const r = run(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });

  test('a file that is not Arrow IPC: exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acd-'));
    const junk = join(dir, 'junk.arrow');
    writeFileSync(junk, 'not an arrow file at all');
    const r = run('roundtrip', junk);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/is not a readable Arrow IPC file or stream/);
  });
});

test('demo: the structs, the import, and nothing left allocated', () => {
  const r = run('demo');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/struct ArrowSchema @ 0x[0-9a-f]{8} \(48 bytes\)/);
  expect(r.stdout).toMatch(/struct ArrowDeviceArray @ 0x[0-9a-f]{8} \(104 bytes\)/);
  expect(r.stdout).toMatch(/device_type\s+1\n/);
  expect(r.stdout).toMatch(/device_id\s+-1\n/);
  expect(r.stdout).toMatch(/Released: 0 bytes still allocated\./);
});
