// Issue 15, the CLI: every command's options come from one table (parsed by
// node:util's parseArgs, written into its --help), a refused command line is
// one line and exit 2, and with --json every failure is one JSON object.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { COMMANDS, commandUsage, main, overview } from '../ts/cli/cli.js';
import { errorJson } from '../ts/cli/errors.js';
import { UsageError } from '../ts/cli/input.js';
import { commandHelp, parseCommand, synopsis, wantsHelp, type CommandSpec } from '../ts/cli/options.js';

/** `arrow-c-device ARGV` in this process, with stderr not a terminal. */
async function run(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { version: '9.9.9' }, { out: (l) => out.push(l), err: (l) => err.push(l), errWrite: (t) => err.push(t), errIsTTY: false });
  return { code, out, err };
}

const spec = (name: string): CommandSpec => COMMANDS.find((c) => c.name === name)!;
const refused = (name: string, argv: string[]) => {
  try {
    parseCommand(spec(name), argv);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`${name} ${argv.join(' ')} was accepted`);
};

describe('one table per command: what --help says is what is parsed', () => {
  test.each(COMMANDS.map((c) => [c.name, c] as const))('%s: every option of the table is in its help and is accepted', (_name, c) => {
    const help = commandHelp(c);
    expect(help.startsWith(`usage:\n  arrow-c-device ${c.name}`)).toBe(true);
    for (const o of c.options) {
      expect(help).toContain(`--${o.name}`);
      if (o.name === 'help') continue;
      const value = o.value === undefined ? [] : [o.choices?.[0] ?? (o.name === 'scale' ? '0.5' : '1')];
      const positionals = c.positionals?.required !== undefined ? ['FILE'] : [];
      const required = c.options.filter((r) => r.required && r !== o).flatMap((r) => [`--${r.name}`, 'x']);
      expect(() => parseCommand(c, [...positionals, ...required, `--${o.name}`, ...value])).not.toThrow();
    }
    // Each help section is there, and the examples run this very command.
    for (const section of ['options:', 'examples:', 'exit codes:']) expect(help).toContain(`\n${section}\n`);
    expect(c.examples.length).toBeGreaterThan(0);
    for (const e of c.examples) expect(e).toMatch(new RegExp(`(^|/)arrow-c-device ${c.name}\\b`));
    for (const line of help.split('\n')) expect({ line, long: line.length > 80 && !line.includes('{"ok"') }).toEqual({ line, long: false });
  });

  test('the overview lists every command\'s synopsis and the exit codes; help COMMAND is COMMAND --help', async () => {
    const text = overview();
    for (const c of COMMANDS) expect(text).toContain(synopsis(c).join('\n'));
    expect(text).toMatch(/\nexit codes:\n  0  success\n  1  a check failed/);
    expect(await run('help', 'inspect')).toEqual({ code: 0, out: [commandUsage('inspect')], err: [] });
    expect(await run('inspect', '-h')).toEqual({ code: 0, out: [commandUsage('inspect')], err: [] });
    expect(await run('--help')).toEqual({ code: 0, out: [text], err: [] });
    expect(await run()).toEqual({ code: 2, out: [text], err: [] });
    expect(await run('--version')).toEqual({ code: 0, out: ['arrow-c-device 9.9.9'], err: [] });
  });

  test('roundtrip --help reads as a user expects: usage, what it does, options with defaults, examples, exit codes', () => {
    const help = commandUsage('roundtrip')!;
    expect(help).toMatch(/^usage:\n  arrow-c-device roundtrip FILE \[--via array\|stream\|async\] \[--mode copy\|view\]\n/);
    expect(help).toMatch(/\n  --mode copy\|view {16}import by copying out of wasm memory, or as\n {34}views over it \(default: copy\)\n/);
    expect(help).toMatch(/\n  --validate none\|minimal\|default\|full\n {34}how much the C validator checks/);
    expect(help).toContain('\nexamples:\n  $ arrow-c-device roundtrip data.arrow\n');
    expect(help).toMatch(/\nexit codes:\n  0  every batch came back equal and nothing leaked\n  1  a value mismatch, a leak or a failed conversion\n  2  bad usage/);
  });

  test('--help wins wherever it is (not after --, where it is a file name)', () => {
    expect(wantsHelp(spec('roundtrip'), ['x.arrow', '--frobnicate', '--help'])).toBe(true);
    expect(wantsHelp(spec('roundtrip'), ['--', '--help'])).toBe(false);
    expect(parseCommand(spec('roundtrip'), ['--', '--help']).positionals).toEqual(['--help']);
  });
});

describe('what parseArgs reads, and the refusals, each one line', () => {
  test('values inline or next, flags, the -- terminator', () => {
    const { values, positionals } = parseCommand(spec('roundtrip'), ['--mode=view', '--via', 'stream', '--json', '--', '-weird-name.arrow']);
    expect({ values, positionals }).toEqual({ values: { mode: 'view', via: 'stream', json: true }, positionals: ['-weird-name.arrow'] });
    expect(parseCommand(spec('bench'), ['--scale', '-1']).values).toEqual({ scale: '-1' });
  });

  test('a value that may be left out (bench --json [FILE]): the next argument unless it is an option or follows --', () => {
    const bench = spec('bench');
    expect(parseCommand(bench, ['--quick', '--json', 'out.json']).values).toEqual({ quick: true, json: 'out.json' });
    expect(parseCommand(bench, ['--json=out.json', '--quick']).values).toEqual({ json: 'out.json', quick: true });
    expect(parseCommand(bench, ['--json', '--quick']).values).toEqual({ json: true, quick: true });
    expect(parseCommand(bench, ['--quick', '--json']).values).toEqual({ quick: true, json: true });
    expect(refused('bench', ['--json', '--', 'out.json'])).toBe('bench: unexpected argument out.json');
    expect(refused('bench', ['--json='])).toBe('--json: expected a value (FILE), found nothing (or give --json alone)');
    // Only a command without positional arguments has one (there it cannot take a FILE meant as one).
    for (const c of COMMANDS) {
      if (c.options.some((o) => o.optional)) expect({ command: c.name, positionals: c.positionals?.max ?? 0 }).toEqual({ command: c.name, positionals: 0 });
    }
    expect(synopsis(bench).join('\n')).toContain('[--json [FILE]]');
  });

  test.each([
    ['roundtrip', ['x', '--frobnicate'], 'roundtrip: unknown option --frobnicate; its options are --via, --mode, --device, --validate, --reader, --json, --progress, --no-progress or --help (arrow-c-device roundtrip --help)'],
    ['integration', ['x', '--mode', 'view'], 'integration: unknown option --mode; its options are --json, --progress, --no-progress or --help (arrow-c-device integration --help)'],
    ['demo', ['-x'], 'demo: unknown option -x; its only option is --help (arrow-c-device demo --help)'],
    ['demo', ['extra'], 'demo: unexpected argument extra'],
    ['roundtrip', ['a', 'b'], 'roundtrip: unexpected argument b'],
    ['roundtrip', [], 'roundtrip: missing FILE'],
    ['fixtures', [], 'fixtures: missing --out DIR'],
    ['fixtures', ['--out'], '--out: expected a value (DIR), found nothing'],
    ['roundtrip', ['x', '--mode', '--json'], '--mode: expected copy or view, found the option --json (write --mode=--json for a value that starts with -)'],
    ['roundtrip', ['x', '--mode='], '--mode: expected copy or view, found nothing'],
    ['roundtrip', ['x', '--reader', 'mine'], '--reader: expected auto, apache-arrow or own, found mine'],
    ['roundtrip', ['x', '--json=yes'], '--json takes no value, found --json=yes'],
    ['roundtrip', ['x', '--progress', '--no-progress'], '--progress and --no-progress: give one of them'],
    ['inspect', ['--layout', 'ilp32', '--sample', 'demo'], '--layout: expected wasm32 or lp64, found ilp32'],
    ['playground', ['--port'], '--port: expected a port number (0 to 65535), found nothing'],
  ])('%s %j: %s', (name, argv, message) => {
    expect(refused(name, argv as string[])).toBe(message);
  });

  test.each([
    [['roundtrip', 'x.arrow', '--frobnicate'], 'roundtrip: unknown option --frobnicate; its options are'],
    [['bench', '--quick=1'], '--quick takes no value, found --quick=1'],
    [['inspect', '--sample', 'demo', '--batch', '1'], 'inspect: --batch is for a FILE; a sample has one batch'],
    [['fixtures', '--out', 'x', '--only', ','], '--only: expected a pattern, found nothing'],
    [['nope'], "unknown command 'nope'; the commands are demo, roundtrip, integration, fixtures, inspect, playground, bench"],
    [['help', 'nope'], "unknown command 'nope'"],
    [['--version', 'x'], '--version: unexpected argument x'],
  ])('%j: exit 2, one line on stderr, nothing on stdout', async (argv, start) => {
    const r = await run(...(argv as string[]));
    expect({ code: r.code, out: r.out, err: r.err.length }).toEqual({ code: 2, out: [], err: 1 });
    expect(r.err[0]!.startsWith(`arrow-c-device: ${start}`)).toBe(true);
  });
});

describe('--json: every failure is one JSON object on stdout as well', () => {
  test.each([
    [['roundtrip', 'x.arrow', '--frobnicate', '--json']],
    [['integration', '--json']],
    [['fixtures', '--json', '--layout', 'ilp32', '--out', 'x']],
    [['inspect', '--json', '--sample', 'demo', '--batch', 'one']],
    [['playground', '--json', '--port', '70000']],
    [['bench', '--json', '--scale', 'lots']],
    [['demo', '--json']],
    [['nope', '--json']],
  ])('%j: {ok: false, exitCode: 2, error: {name, code, errno, message}}, message = the stderr line', async (argv) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.out).toHaveLength(1);
    expect(JSON.parse(r.out[0]!)).toEqual({ ok: false, exitCode: 2, error: { name: 'UsageError', code: 'ERR_USAGE', errno: null, message: r.err[0]!.replace(/^arrow-c-device: /, '') } });
  });

  test('a file that cannot be read: the file system\'s errno name and number', async () => {
    const r = await run('roundtrip', '/nonexistent/file.arrow', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out[0]!)).toEqual({ ok: false, exitCode: 2, error: { name: 'UsageError', code: 'ENOENT', errno: 2,
      message: "cannot read /nonexistent/file.arrow: ENOENT: no such file or directory, open '/nonexistent/file.arrow'" } });
  });

  test('an ArrowCDeviceError, alone or behind a UsageError: its code, errno, path, level and layout are copied', () => {
    const lib = new ArrowCDeviceError('children[1]: expected 3 offsets,\n  found 2', 28, { path: 'children[1]', level: 'full', layout: 'lp64' });
    expect(errorJson(lib)).toEqual({ name: 'ArrowCDeviceError', code: 'EINVAL', errno: 28, message: 'children[1]: expected 3 offsets, found 2', path: 'children[1]', level: 'full', layout: 'lp64' });
    const usage = new UsageError('f is not valid Arrow data: batch 0: children[1]: expected 3 offsets, found 2', { cause: lib });
    expect(errorJson(usage)).toEqual({ name: 'UsageError', code: 'EINVAL', errno: 28, message: usage.message, path: 'children[1]', level: 'full', layout: 'lp64' });
    // Details that are not set are absent.
    expect(errorJson(new ArrowCDeviceError('m', 52))).toEqual({ name: 'ArrowCDeviceError', code: 'ENOSYS', errno: 52, message: 'm' });
  });
});

describe('the bin before dist/ is built', () => {
  test('says how to build, exit 2; with --json also one JSON object on stdout', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acd-unbuilt-'));
    try {
      cpSync(resolve(__dirname, '..', 'bin'), join(dir, 'bin'), { recursive: true });
      cpSync(resolve(__dirname, '..', 'package.json'), join(dir, 'package.json'));
      const bin = join(dir, 'bin', 'arrow-c-device.mjs');
      const message = 'dist/ is not built yet: run `npm run build` (or `npm start`) in the package folder';
      const plain = spawnSync(process.execPath, [bin, 'roundtrip', 'x.arrow'], { encoding: 'utf8' });
      expect([plain.status, plain.stdout, plain.stderr]).toEqual([2, '', `arrow-c-device: ${message}\n`]);
      const json = spawnSync(process.execPath, [bin, 'roundtrip', 'x.arrow', '--json'], { encoding: 'utf8' });
      expect([json.status, json.stderr]).toEqual([2, `arrow-c-device: ${message}\n`]);
      expect(JSON.parse(json.stdout)).toEqual({ ok: false, exitCode: 2, error: { name: 'Error', code: 'ERR_NOT_BUILT', errno: null, message } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
