// The arrow-c-device command line (Node): one option table per command
// (ts/cli/options.ts parses it with node:util's parseArgs and writes its
// --help), dispatched here. Exit codes: 0 all held, 1 a value mismatch, a
// leak or a failed conversion, 2 bad usage, an unreadable file or input that
// is not Arrow data. A failure is one line on stderr; with --json also one
// JSON object on stdout (ts/cli/errors.ts). docs/cli.md describes it all.

import { BENCH, benchCommand } from './bench.js';
import { DEMO, roundtripDemo } from './demo.js';
import { errorJson, errorLine, exitCodeOf } from './errors.js';
import { FIXTURES, fixturesCommand } from './fixtures.js';
import { UsageError } from './input.js';
import { INSPECT, inspectCommand } from './inspect.js';
import { asksForJson, commandHelp, parseCommand, synopsis, wantsHelp, wrap, type CommandSpec } from './options.js';
import { PLAYGROUND, playgroundCommand } from './playground.js';
import { processIo, type Io } from './progress.js';
import { INTEGRATION, integrationCommand, ROUNDTRIP, roundtripCommand } from './roundtrip.js';
// Only from the library's public entry: the CLI bundle uses dist/index.mjs, never a second copy of it.
import { load } from '../index.js';

/** Every command, in the order the overview lists them. */
export const COMMANDS: readonly CommandSpec[] = [DEMO, ROUNDTRIP, INTEGRATION, FIXTURES, INSPECT, PLAYGROUND, BENCH];

const RUN: Record<string, (argv: readonly string[], io: Io) => Promise<number> | number> = {
  demo: async (argv, io) => {
    parseCommand(DEMO, argv);
    await roundtripDemo(await load(), (l) => io.out(l));
    return 0;
  },
  roundtrip: roundtripCommand,
  integration: integrationCommand,
  fixtures: fixturesCommand,
  inspect: (argv, io) => inspectCommand(argv, load, (l) => io.out(l)),
  playground: (argv, io) => playgroundCommand(argv, (l) => io.out(l)),
  bench: benchCommand,
};

/** `arrow-c-device --help`: every command's synopsis and summary, the exit codes and --json. */
export function overview(): string {
  return [
    'usage:',
    ...COMMANDS.flatMap((c) => [...synopsis(c), ...wrap(c.summary, '      ')]),
    '  arrow-c-device COMMAND --help   that command\'s options, examples, exit codes',
    '  arrow-c-device help COMMAND     the same',
    '  arrow-c-device --version        the version of the package',
    '',
    'exit codes:',
    '  0  success',
    '  1  a check failed: a value mismatch, a leak, a failed conversion',
    '  2  bad usage (an unknown command or option, a bad value), a file that cannot be',
    '     read or written, or input that is not Arrow data',
    '',
    'A failure prints one line on stderr. With --json (every command but demo), stdout',
    'gets one JSON object, on failure too: {"ok":false,"exitCode":N,"error":{"name",',
    '"code","errno","message",...}}. Progress goes to stderr, on a terminal or with',
    '--progress. See docs/cli.md.',
  ].join('\n');
}

/** The help of one command (`COMMAND --help`), or null for an unknown command. */
export function commandUsage(command: string): string | null {
  const spec = COMMANDS.find((c) => c.name === command);
  return spec === undefined ? null : commandHelp(spec);
}

/**
 * Runs one command; returns the exit code. A failure is one line on stderr
 * (and, with --json, one JSON object {ok: false, exitCode, error} on stdout);
 * only a bug in this program is thrown.
 */
export async function main(argv: readonly string[], info: { version?: string } = {}, io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0)) {
      io.out(overview());
      return command === undefined ? 2 : 0;
    }
    if (command === '--version' || command === '-V') {
      if (rest.length > 0) throw new UsageError(`${command}: unexpected argument ${rest[0]}`);
      if (info.version === undefined) throw new UsageError('--version: the version is not known here (run the installed arrow-c-device command)');
      io.out(`arrow-c-device ${info.version}`);
      return 0;
    }
    if (command === 'help') {
      const usage = commandUsage(rest[0]!);
      if (usage === null || rest.length > 1) throw new UsageError(usage === null ? `unknown command '${rest[0]}'` : `help: unexpected argument ${rest[1]}`);
      io.out(usage);
      return 0;
    }
    const run = RUN[command];
    const spec = COMMANDS.find((c) => c.name === command);
    if (run === undefined || spec === undefined) {
      throw new UsageError(`unknown command '${command}'; the commands are ${COMMANDS.map((c) => c.name).join(', ')} (arrow-c-device --help)`);
    }
    // `COMMAND --help`: that command's help, before anything runs.
    if (wantsHelp(spec, rest)) {
      io.out(commandHelp(spec));
      return 0;
    }
    return await run(rest, io);
  } catch (e) {
    const exitCode = exitCodeOf(e);
    if (exitCode === null) throw e;
    const error = e as Error;
    io.err(`arrow-c-device: ${errorLine(error)}`);
    if (asksForJson(argv)) io.out(JSON.stringify({ ok: false, exitCode, error: errorJson(error) }));
    return exitCode;
  }
}
