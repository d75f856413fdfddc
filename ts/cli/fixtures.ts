// `arrow-c-device fixtures --out DIR [--layout wasm32|lp64|both] [--only PATTERN]`:
// writes the fixture corpus (ts/fixtures/, docs/fixtures.md) into DIR. The
// library yields the files; here they are written, and progress goes to stderr.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { corpusCases, fixtureFiles, type FixtureLayout } from '../fixtures.js';
import { UsageError } from './input.js';

export const FIXTURES_USAGE = `  arrow-c-device fixtures --out DIR [--layout wasm32|lp64|both] [--only PATTERN]
      write the fixture corpus (docs/fixtures.md): DIR/<layout>/<case>.acdfix,
      the expected values DIR/expected/<case>.json (Arrow integration JSON)
      and <case>.arrows (Arrow IPC stream, where apache-arrow holds the case
      exactly), and DIR/manifest.json; the invalid-... cases, which a
      consumer must refuse, have no expected files. The same bytes on every
      run. PATTERN:
      whole case names, comma-separated, with * and ? as wildcards
      (int*,*utf8*,bool)`;

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

interface FixturesArgs {
  out: string;
  layouts: FixtureLayout[];
  only: ((name: string) => boolean) | undefined;
}

function parseFixturesArgs(args: string[]): FixturesArgs {
  let out: string | undefined;
  let layouts: FixtureLayout[] = ['wasm32', 'lp64'];
  let only: ((name: string) => boolean) | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const value = () => {
      const v = eq > 0 && arg.startsWith('--') ? arg.slice(eq + 1) : args[++i];
      if (v === undefined) throw new UsageError(`${name}: expected a value`);
      return v;
    };
    if (name === '--out') out = value();
    else if (name === '--only') only = namePattern(value());
    else if (name === '--layout') {
      const v = value();
      if (v !== 'wasm32' && v !== 'lp64' && v !== 'both') throw new UsageError(`--layout: expected wasm32, lp64 or both, found ${v}`);
      layouts = v === 'both' ? ['wasm32', 'lp64'] : [v];
    } else if (name.startsWith('-')) throw new UsageError(`unknown option ${name}`);
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (out === undefined) throw new UsageError('fixtures: missing --out DIR');
  return { out, layouts, only };
}

/**
 * Runs the command: 0 when written; a bad argument or a file that cannot be
 * written is a UsageError (exit 2, one line).
 */
export function fixturesCommand(args: string[], print: (line: string) => void, progress: (line: string) => void): number {
  const { out, layouts, only } = parseFixturesArgs(args);
  if (only !== undefined && !corpusCases().some((c) => only(c.name))) throw new UsageError('--only: no case matches the pattern');
  let files = 0;
  let cases = 0;
  let bytes = 0;
  const report = (name: string, index: number, count: number) => {
    cases = count;
    if (index % 20 === 0 || index === count - 1) progress(`fixtures: case ${index + 1}/${count} (${name})`);
  };
  for (const file of fixtureFiles({ layouts, only, progress: report })) {
    const path = join(out, ...file.path.split('/'));
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.bytes);
    } catch (e) {
      throw new UsageError(`cannot write ${path}: ${(e as Error).message}`);
    }
    files++;
    bytes += file.bytes.length;
  }
  print(`wrote ${cases} cases (${layouts.join(', ')}): ${files} files, ${bytes} bytes, into ${out}; see ${join(out, 'manifest.json')}`);
  return 0;
}
