// Every command's options, in one table per command: node:util's parseArgs
// reads the command line from it, and the --help text is written from it,
// so that what the help says is what is parsed.

import { parseArgs } from 'node:util';
import { UsageError } from './input.js';

export interface OptionSpec {
  /** The long name, without dashes. */
  name: string;
  /** A one-letter alias (-h). */
  short?: string;
  /** For an option with a value: the value's name in the help (FILE, N, TYPE[:ID]); a flag has none. */
  value?: string;
  /**
   * The value may be left out (`--json`, or `--json FILE`): the next argument
   * is its value unless it is an option or follows `--`. Only for a command
   * without positional arguments, where it cannot take one of those.
   */
  optional?: boolean;
  /** The values allowed (checked here); the help shows them as the value's name. */
  choices?: readonly string[];
  /** What a refused or missing value is told to be: "--port: expected <this>, found x". */
  expected?: string;
  /** Shown in the help as "(default: X)". */
  default?: string;
  /** Must be given (the synopsis shows it without brackets). */
  required?: boolean;
  help: string;
}

export interface CommandSpec {
  name: string;
  /** The positional arguments in the synopsis ('FILE', 'FILE | --sample NAME'); none when absent. */
  args?: string;
  /** How many positional arguments it takes, and the name of the first when it is required. */
  positionals?: { max: number; required?: string };
  /** One line for the overview of all commands. */
  summary: string;
  /** What it does, as paragraphs of plain text (wrapped for the help). */
  description: string[];
  options: OptionSpec[];
  examples: string[];
  /** What its exit codes mean: [code, meaning]. */
  exitCodes: [number, string][];
}

export type Values = Record<string, string | boolean | undefined>;

export interface Parsed {
  values: Values;
  positionals: string[];
}

// The options several commands share, written once.
export const HELP: OptionSpec = { name: 'help', short: 'h', help: 'print this help and exit' };
export const JSON_OUTPUT: OptionSpec = {
  name: 'json',
  help: 'print one JSON object on stdout: the result, or on any failure {"ok": false, "exitCode": N, "error": {"name", "code", "errno", "message", ...}}',
};
export const PROGRESS: OptionSpec[] = [
  { name: 'progress', help: 'report progress on stderr (batches and bytes done), also when stderr is not a terminal or with --json' },
  { name: 'no-progress', help: 'no progress on stderr, also on a terminal (where it is shown by default, unless --json)' },
];

const or = (xs: readonly string[]) => xs.join(', ').replace(/, ([^,]*)$/, ' or $1');
const dashes = (o: OptionSpec) => `--${o.name}`;

/** Whether --json is among the arguments (before any --): then a failure is also reported as JSON. */
export function asksForJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === '--json' || a.startsWith('--json='));
}

/** parseArgs' tokens of argv by the command's table, not strict: the checks are parseCommand's. */
function tokensOf(spec: CommandSpec, argv: readonly string[]) {
  // An optional value is read by parseCommand: parseArgs would take the next argument whatever it is.
  const config = Object.fromEntries(spec.options.map((o) => [o.name, { type: o.value === undefined || o.optional ? 'boolean' : 'string', ...(o.short ? { short: o.short } : {}) }] as const));
  return parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true }).tokens;
}

/** Whether the arguments ask for the command's help (--help or -h as an option, wherever it is). */
export function wantsHelp(spec: CommandSpec, argv: readonly string[]): boolean {
  return tokensOf(spec, argv).some((t) => t.kind === 'option' && t.name === 'help');
}

/**
 * Parses a command's arguments by its table (node:util's parseArgs, then the
 * checks it leaves to its caller: unknown options, missing values, choices,
 * the number of positionals). Every refusal is a UsageError of one line.
 * --help is the caller's to look for first (wantsHelp).
 */
export function parseCommand(spec: CommandSpec, argv: readonly string[]): Parsed {
  const byName = new Map(spec.options.map((o) => [o.name, o]));
  // Not strict: parseArgs would refuse with its own wording; the checks below say it in this CLI's.
  const tokens = tokensOf(spec, argv);
  const values: Values = {};
  const positionals: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'positional') positionals.push(t.value);
    if (t.kind !== 'option') continue;
    const o = byName.get(t.name);
    if (o === undefined) {
      throw new UsageError(`${spec.name}: unknown option ${t.rawName}; ` +
        `${spec.options.length === 1 ? `its only option is ${dashes(spec.options[0]!)}` : `its options are ${or(spec.options.map(dashes))}`} ` +
        `(arrow-c-device ${spec.name} --help)`);
    }
    if (o.optional && t.value === undefined) {
      const next = tokens[i + 1];
      if (next?.kind === 'positional') {
        values[o.name] = next.value;
        i++;
      } else values[o.name] = true;
      continue;
    }
    if (o.value === undefined) {
      if (t.value !== undefined) throw new UsageError(`${dashes(o)} takes no value, found ${t.rawName}=${t.value}`);
      values[o.name] = true;
      continue;
    }
    const expected = o.expected ?? (o.choices ? or(o.choices) : `a value (${o.value})`);
    if (t.value === undefined) throw new UsageError(`${dashes(o)}: expected ${expected}, found nothing`);
    // parseArgs takes the next argument whatever it is: an option there means the value was forgotten.
    if (!t.inlineValue && t.value.startsWith('-') && t.value !== '-' && !/^-\d/.test(t.value)) {
      throw new UsageError(`${dashes(o)}: expected ${expected}, found the option ${t.value} (write ${dashes(o)}=${t.value} for a value that starts with -)`);
    }
    if (o.optional && t.value === '') throw new UsageError(`${dashes(o)}: expected ${expected}, found nothing (or give ${dashes(o)} alone)`);
    if (o.choices !== undefined && !o.choices.includes(t.value)) throw new UsageError(`${dashes(o)}: expected ${expected}, found ${t.value === '' ? 'nothing' : t.value}`);
    values[o.name] = t.value;
  }
  if (values.progress === true && values['no-progress'] === true) throw new UsageError('--progress and --no-progress: give one of them');
  for (const o of spec.options) if (o.required && values[o.name] === undefined) throw new UsageError(`${spec.name}: missing ${dashes(o)} ${o.value}`);
  const { max = 0, required } = spec.positionals ?? {};
  if (positionals.length > max) throw new UsageError(`${spec.name}: unexpected argument ${positionals[max]}`);
  if (required !== undefined && positionals.length === 0) throw new UsageError(`${spec.name}: missing ${required}`);
  return { values, positionals };
}

// ---- help text ---------------------------------------------------------------------

const WIDTH = 80;

/** Words wrapped into lines of at most `width` characters, each starting with `indent`. */
export function wrap(text: string, indent: string, width = WIDTH): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(indent + line);
  return lines;
}

const valueOf = (o: OptionSpec) => (o.choices ? o.choices.join('|') : o.value);
/** ` FILE`, ` [FILE]` for a value that may be left out, or nothing for a flag. */
const valueLabel = (o: OptionSpec) => (o.value === undefined ? '' : o.optional ? ` [${valueOf(o)}]` : ` ${valueOf(o)}`);
const optionLabel = (o: OptionSpec) => `${o.short ? `-${o.short}, ` : ''}--${o.name}${valueLabel(o)}`;

/** The synopsis: `arrow-c-device NAME ARGS [--a A] [--b]`, wrapped under the command name. */
export function synopsis(spec: CommandSpec, prefix = '  '): string[] {
  const head = `arrow-c-device ${spec.name}${spec.args ? ` ${spec.args}` : ''}`;
  // Options the positional part names already (inspect's --sample) are not repeated.
  const parts = spec.options.filter((o) => o.name !== 'help' && !(spec.args ?? '').includes(dashes(o))).map((o) => {
    const text = `--${o.name}${valueLabel(o)}`;
    return o.required ? text : `[${text}]`;
  });
  const lines: string[] = [];
  let line = `${prefix}${head}`;
  const indent = ' '.repeat(prefix.length + `arrow-c-device ${spec.name} `.length);
  for (const p of parts) {
    if (line.length + 1 + p.length > WIDTH) {
      lines.push(line);
      line = indent + p;
    } else line = `${line} ${p}`;
  }
  lines.push(line);
  return lines;
}

/** `arrow-c-device NAME --help`: synopsis, description, options, examples, exit codes. */
export function commandHelp(spec: CommandSpec): string {
  const column = Math.min(32, Math.max(...spec.options.map((o) => optionLabel(o).length)) + 4);
  const options = spec.options.flatMap((o) => {
    const label = `  ${optionLabel(o)}`;
    const help = `${o.help}${o.default === undefined ? '' : ` (default: ${o.default})`}`;
    const text = wrap(help, ' '.repeat(column + 2));
    if (label.length + 2 <= column + 2) return [label.padEnd(column + 2) + text[0]!.trimStart(), ...text.slice(1)];
    return [label, ...text];
  });
  return [
    'usage:',
    ...synopsis(spec),
    '',
    ...spec.description.flatMap((p, i) => [...(i > 0 ? [''] : []), ...wrap(p, '  ')]),
    '',
    'options:',
    ...options,
    '',
    'examples:',
    ...spec.examples.map((e) => `  $ ${e}`),
    '',
    'exit codes:',
    ...spec.exitCodes.flatMap(([code, meaning]) => wrap(meaning, '     ').map((l, i) => (i === 0 ? `  ${code}  ${l.trimStart()}` : l))),
  ].join('\n');
}
