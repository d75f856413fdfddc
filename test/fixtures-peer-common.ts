// What the peer tests of the conformance matrix share (test/fixtures-peers*.test.ts):
// running a peer's process, and the outcomes docs/conformance.md records for a peer.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..');
export const PYTHON = join(ROOT, 'build', 'venv-cross', 'bin', 'python');

/** A corpus case, as the peers' tests read manifest.json (the TS corpus) or the mini corpus's. */
export interface CorpusCase {
  name: string;
  images?: { lp64?: string };
  stream_error?: { message: string } | null;  // the mini corpus
  roots?: { kind: string; fail_at?: number; message?: string; errno?: { lp64: number } }[];  // the TS corpus
  invalid?: boolean;  // a negative fixture: to be refused
  refused_at?: string;
}

/** The message a case's failing ArrowArrayStream must end with, if it has one. */
export function failure(c: CorpusCase): string | null {
  if (c.stream_error) return c.stream_error.message;
  const r = c.roots?.find((x) => x.fail_at !== undefined && x.fail_at >= 0 && x.kind === 'ArrowArrayStream');
  return r?.message ?? null;
}

/** Runs a command from the project's root, killed after `timeout` ms. */
export function run(command: string, args: string[], timeout: number): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout, killSignal: 'SIGKILL', maxBuffer: 64 << 20 });
}

/** Its stdout; an error with everything it printed when it did not exit 0. */
export function check(what: string, r: SpawnSyncReturns<string>): string {
  if (r.status !== 0) throw new Error(`${what}: exit status ${r.status}${r.signal ? `, killed by ${r.signal}` : ''}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * The outcomes docs/conformance.md records for a peer, from its table rows
 * "| `case` | peer | outcome | whose fault | why |": case (or a `*` pattern) -> outcome.
 */
/** A row's case, a name or a pattern where `*` stands for any run of [a-z0-9-]. */
const pattern = (p: string) => new RegExp(`^${p.replace(/\*/g, '[\\w-]*')}$`);

/** The recorded outcome of a case: its own row, else the first pattern row it matches. */
export function recordedFor(rows: Map<string, string>, name: string): string | undefined {
  if (rows.has(name)) return rows.get(name);
  for (const [p, outcome] of rows) if (p.includes('*') && pattern(p).test(name)) return outcome;
  return undefined;
}

/** The rows (names or patterns) that match no case of `names`: stale rows. */
export function staleRows(rows: Map<string, string>, names: readonly string[]): string[] {
  return [...rows.keys()].filter((p) => !names.some((n) => (p.includes('*') ? pattern(p).test(n) : n === p)));
}

export function recorded(peer: string): Map<string, string> {
  const whole = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');
  // The rows of the import matrix: the section of the peers' exports (test/fixtures-dump.test.ts) has its own.
  const start = whole.indexOf("\n## Peers' exports, dumped");
  const end = start < 0 ? -1 : whole.indexOf('\n## ', start + 5);
  const doc = start < 0 ? whole : whole.slice(0, start) + (end < 0 ? '' : whole.slice(end));
  const rows = [...doc.matchAll(/^\| `([\w*-]+)` \| ([\w-]+) \| ([\w-]+) \| [^|]+ \| [^|]+ \|$/gm)];
  return new Map(rows.filter((m) => m[2] === peer).map((m) => [m[1], m[3]]));
}
