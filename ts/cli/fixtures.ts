// `arrow-c-device fixtures --out DIR [--layout wasm32|lp64|both] [--only PATTERN]`:
// writes the fixture corpus (ts/fixtures/, docs/fixtures.md) into DIR. The
// library yields the files; here they are written, with progress on stderr
// (ts/cli/progress.ts: on a terminal, or with --progress).

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { corpusCases, fixtureFiles, type FixtureLayout } from '../fixtures.js';
import { UsageError } from './input.js';
import { HELP, JSON_OUTPUT, parseCommand, PROGRESS, type CommandSpec } from './options.js';
import { mb, Progress, type Io } from './progress.js';

export const FIXTURES: CommandSpec = {
  name: 'fixtures',
  summary: 'write the fixture corpus for other implementations (docs/fixtures.md)',
  description: [
    'Writes the fixture corpus (docs/fixtures.md): DIR/<layout>/<case>.acdfix, the expected values ' +
      'DIR/expected/<case>.json (Arrow integration JSON) and <case>.arrows (Arrow IPC stream, where apache-arrow holds ' +
      'the case exactly), and DIR/manifest.json; the invalid-... cases, which a consumer must refuse, have no expected ' +
      'files. The same bytes on every run.',
  ],
  options: [
    { name: 'out', value: 'DIR', required: true, help: 'the folder to write into (required; made when missing)' },
    { name: 'layout', value: 'LAYOUT', choices: ['wasm32', 'lp64', 'both'], default: 'both', help: 'the struct layouts of the images' },
    { name: 'only', value: 'PATTERN', help: 'only the cases whose names match: whole names, comma-separated, with * and ? as wildcards (int*,*utf8*,bool)' },
    { ...JSON_OUTPUT, help: 'print one JSON object on stdout: {"ok":true,"cases","layouts","files","bytes","out","manifest"}, or on failure {"ok":false,"exitCode":N,"error":{...}}' },
    ...PROGRESS, HELP,
  ],
  examples: ['arrow-c-device fixtures --out corpus', 'arrow-c-device fixtures --out corpus --layout lp64 --only \'int*,utf8-view\''],
  exitCodes: [[0, 'written'], [2, 'bad usage, no case matching --only, or a file that cannot be written']],
};

/** A matcher for --only: comma-separated globs (* and ?) over whole names. */
export function namePattern(pattern: string): (name: string) => boolean {
  const parts = pattern.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) throw new UsageError('--only: expected a pattern, found nothing');
  const tests = parts.map((p) => {
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    return (name: string) => re.test(name);
  });
  return (name) => tests.some((t) => t(name));
}

/**
 * Runs the command: 0 when written; a bad argument or a file that cannot be
 * written is a UsageError (exit 2, one line).
 */
export function fixturesCommand(argv: readonly string[], io: Io): number {
  const { values } = parseCommand(FIXTURES, argv);
  const out = values.out as string;
  const layout = (values.layout as string | undefined) ?? 'both';
  const layouts: FixtureLayout[] = layout === 'both' ? ['wasm32', 'lp64'] : [layout as FixtureLayout];
  const only = values.only === undefined ? undefined : namePattern(values.only as string);
  if (only !== undefined && !corpusCases().some((c) => only(c.name))) throw new UsageError('--only: no case matches the pattern');
  const progress = Progress.of(io, 'fixtures', values);
  let files = 0;
  let cases = 0;
  let bytes = 0;
  const report = (name: string, index: number, count: number) => {
    cases = count;
    progress.update(`case ${index + 1}/${count} (${name}), ${files} files, ${mb(bytes)} written`);
  };
  try {
    for (const file of fixtureFiles({ layouts, only, progress: report })) {
      const path = join(out, ...file.path.split('/'));
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, file.bytes);
      } catch (e) {
        throw new UsageError(`cannot write ${path}: ${(e as Error).message}`, { cause: e });
      }
      files++;
      bytes += file.bytes.length;
    }
  } catch (e) {
    progress.end();
    throw e;
  }
  progress.end(`${cases} cases, ${files} files, ${mb(bytes)} written`);
  const manifest = join(out, 'manifest.json');
  if (values.json === true) io.out(JSON.stringify({ ok: true, cases, layouts, files, bytes, out, manifest }));
  else io.out(`wrote ${cases} cases (${layouts.join(', ')}): ${files} files, ${bytes} bytes, into ${out}; see ${manifest}`);
  return 0;
}
