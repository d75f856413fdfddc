// The CLI as a user runs it: the built bin, exit codes and the --json summary.
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOLD } from './helpers.js';

// Scratch folders of the tests below, removed when the file is done.
const scratch: string[] = [];
const afterThis = (dir: string) => scratch.push(dir);
afterAll(() => scratch.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

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

  test.each(['copy', 'view'])('integration JSON (gzip) in %s mode, read by the JSON reader, fully validated', (mode) => {
    const r = run('roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.json.gz'), '--mode', mode, '--validate', 'full', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, reader: 'json', mode, bytesLeaked: 0, mismatches: [], errors: [] });
  });

  test('a file apache-arrow misreads goes through the own reader, and says so', () => {
    const r = run('roundtrip', join(GOLD, '0.17.1', 'generated_union.arrow_file'), '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, reader: 'own', batches: 2, bytesLeaked: 0 });
    expect(summary.notes[0]).toMatch(/apache-arrow misreads this file/);
  });

  test('--reader apache-arrow keeps to apache-arrow: the misread file fails with exit 1', () => {
    const r = run('roundtrip', join(GOLD, '0.17.1', 'generated_union.arrow_file'), '--reader', 'apache-arrow', '--json');
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, reader: 'apache-arrow', bytesLeaked: 0 });
  });

  test('--reader own on an IPC stream, through a device', () => {
    const r = run('roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.stream'), '--reader=own', '--device', 'cuda:1', '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, reader: 'own', device: 'cuda:1', bytesLeaked: 0, deviceBytesLeaked: 0 });
  });

  test.each([
    [['roundtrip'], /missing FILE/],
    [['roundtrip', primitive, '--validate', 'paranoid'], /--validate: expected none, minimal, default or full, found paranoid/],
    [['roundtrip', primitive, '--reader', 'mine'], /--reader: expected auto, apache-arrow or own, found mine/],
    [['integration'], /integration: missing FILE/],
    [['integration', primitive, '--mode', 'view'], /unknown option --mode/],
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
    afterThis(dir);
    const junk = join(dir, 'junk.arrow');
    writeFileSync(junk, 'not an arrow file at all');
    const r = run('roundtrip', junk);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/is not a readable Arrow IPC file, stream or integration JSON/);
  });
});

describe('integration', () => {
  test('the protocol on a gold JSON file: --json summary, exit 0', () => {
    const r = run('integration', join(GOLD, '1.0.0-littleendian', 'generated_union.json.gz'), '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, batches: 2, bytesLeaked: 0, errors: [] });
  });

  test('text output', () => {
    const r = run('integration', join(GOLD, '4.0.0-shareddict', 'generated_shared_dict.json.gz'));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: .*generated_shared_dict\.json\.gz: schema and \d+ batches through the C Data integration protocol, 0 bytes leaked/);
  });

  test('malformed JSON: exit 1, the error says where', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acd-'));
    afterThis(dir);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"schema": {"fields": [{"name": "x", "nullable": true, "type": {"name": "int", "bitWidth": 32, "isSigned": true}, "children": []}]}, "batches": [{"count": 2, "columns": [{"name": "x", "count": 2, "VALIDITY": [1, 1], "DATA": [1]}]}]}');
    const r = run('integration', bad, '--json');
    expect(r.status).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary.ok).toBe(false);
    expect(summary.errors.join('\n')).toMatch(/DATA/);
  });

  test('a file that does not exist: exit 2', () => {
    const r = run('integration', '/nonexistent/file.json');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot read \/nonexistent\/file\.json/);
  });
});

test('demo: the structs, the import, and nothing left allocated', () => {
  const r = run('demo');
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/ArrowSchema @ 0x[0-9a-f]{8} \(48 bytes\): struct<id: int32, name: utf8, /);
  expect(r.stdout).toMatch(/ArrowDeviceArray @ 0x[0-9a-f]{8} \(104 bytes\): on cpu/);
  expect(r.stdout).toMatch(/device_type +1 +ARROW_DEVICE_CPU \(cpu\)\n/);
  expect(r.stdout).toMatch(/device_id +-1 +none \(the CPU has no device id\)\n/);
  expect(r.stdout).toMatch(/flags +2 +ARROW_FLAG_NULLABLE\n/);
  // The README's words: ints and strings with nulls, a list, a dictionary.
  expect(r.stdout).toMatch(/\{"id": null, "name": null, "scores": \[\], "city": "Oslo"\}/);
  expect(r.stdout).toMatch(/Released: 0 bytes still allocated\./);
});

describe('roundtrip --via', () => {
  test.each(['stream', 'async'])('--via %s, with and without --device cuda: ok, nothing leaked', (via) => {
    for (const device of [[], ['--device', 'cuda']]) {
      const r = run('roundtrip', primitive, '--via', via, ...device, '--json');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, via, device: device.length === 0 ? 'cpu' : 'cuda:0', batches: 2, rows: 37, columns: 30, bytesLeaked: 0, deviceBytesLeaked: 0, tableSlotsLeaked: 0, objectsLeaked: 0, mismatches: [], errors: [] });
    }
  });

  test('--via in the text output, and a bad --via is a usage error', () => {
    const r = run('roundtrip', join(GOLD, '1.0.0-littleendian', 'generated_nested.stream'), '--via=async');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: .*generated_nested\.stream \(copy mode, via async\): \d+ batches/);
    const bad = run('roundtrip', primitive, '--via', 'carrier-pigeon');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--via: expected array, stream or async, found carrier-pigeon/);
  });

  test.each(['stream', 'async'])('--via %s: a file apache-arrow misreads goes through the own reader', (via) => {
    const r = run('roundtrip', join(GOLD, '0.17.1', 'generated_union.stream'), '--via', via, '--device', 'cuda', '--json');
    expect(r.status).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ok: true, via, reader: 'own', device: 'cuda:0', batches: 2, bytesLeaked: 0, deviceBytesLeaked: 0 });
    expect(summary.notes[0]).toMatch(/apache-arrow misreads this file/);
  });
});

describe('--version and COMMAND --help', () => {
  test('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    const r = run('--version');
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: `arrow-c-device ${version}\n` });
  });

  test.each(['demo', 'roundtrip', 'integration', 'fixtures', 'inspect', 'playground', 'bench'])('%s --help prints its usage and runs nothing', (command) => {
    const r = run(command, '--help');
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^usage:\\n  arrow-c-device ${command}\\b`));
    // Only its own part: no line of another command's usage.
    expect(r.stdout).not.toMatch(new RegExp(`^  arrow-c-device (?!${command}\\b)`, 'm'));
    expect(r.stdout).not.toContain('A table made with apache-arrow');
  });

  test('an unknown command with --help, and demo with an argument: exit 2 and one line', () => {
    const bogus = run('bogus', '--help');
    expect([bogus.status, bogus.stdout, bogus.stderr]).toEqual([2, '',
      "arrow-c-device: unknown command 'bogus'; the commands are demo, roundtrip, integration, fixtures, inspect, playground, bench (arrow-c-device --help)\n"]);
    const demo = run('demo', 'extra');
    expect([demo.status, demo.stdout, demo.stderr]).toEqual([2, '', 'arrow-c-device: demo: unexpected argument extra\n']);
  });

  test('integration on an IPC file says what the bytes look like, never prints them', () => {
    const r = run('integration', primitive, '--json');
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`arrow-c-device: ${primitive} is not integration JSON (a JSON object): it starts with the bytes 41 52 52 4f 57 31 00 00; ` +
      'it looks like Arrow IPC, which `arrow-c-device roundtrip` reads\n');
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, exitCode: 2, error: { name: 'UsageError', code: 'ERR_USAGE', errno: null, message: r.stderr.trim().replace(/^arrow-c-device: /, '') } });
  });
});
