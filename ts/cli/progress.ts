// Progress on stderr for work that can take seconds (a large file's round
// trip, the fixture corpus, the bench): shown by default only when stderr is a
// terminal and --json is not given, or forced with --progress; --no-progress
// turns it off. On a terminal it is one line rewritten in place (and cleared
// at the end); otherwise one line per report, the last one when done.
// Reports are throttled to one every 250 ms; stdout is never touched.

import { performance } from 'node:perf_hooks';
import type { Values } from './options.js';

/** Where the command line's output goes: stdout and stderr lines, and raw stderr for a terminal. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Writes to stderr as is (no newline): the terminal's rewritten line. */
  errWrite(text: string): void;
  /** Whether stderr is a terminal. */
  errIsTTY: boolean;
}

export const processIo: Io = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  errWrite: (text) => { process.stderr.write(text); },
  get errIsTTY() { return process.stderr.isTTY === true; },
};

export interface ProgressClock {
  now(): number;
  /** The least time between two reports. */
  intervalMs: number;
  /** Shown without --progress only once the work has taken this long. */
  delayMs: number;
}

const CLOCK: ProgressClock = { now: () => performance.now(), intervalMs: 250, delayMs: 1000 };

export type ProgressMode = 'off' | 'lines' | 'terminal';

/** off unless --progress, or stderr is a terminal without --json or --no-progress. */
export function progressMode(values: Values, errIsTTY: boolean): { mode: ProgressMode; forced: boolean } {
  if (values['no-progress'] === true) return { mode: 'off', forced: false };
  if (values.progress === true) return { mode: errIsTTY ? 'terminal' : 'lines', forced: true };
  return { mode: errIsTTY && values.json !== true ? 'terminal' : 'off', forced: false };
}

export class Progress {
  private readonly start: number;
  private last = -Infinity;
  private onTerminal = false;

  /** `label` starts every line ('roundtrip', 'fixtures', 'bench'). */
  constructor(private readonly io: Io, private readonly label: string, private readonly mode: ProgressMode,
    private readonly forced = true, private readonly clock: ProgressClock = CLOCK) {
    this.start = clock.now();
  }

  static of(io: Io, label: string, values: Values, clock?: ProgressClock): Progress {
    const { mode, forced } = progressMode(values, io.errIsTTY);
    return new Progress(io, label, mode, forced, clock);
  }

  get enabled(): boolean {
    return this.mode !== 'off';
  }

  /** Reports where the work is (batch i of n); shown unless the last report was under intervalMs ago. */
  update(text: string): void {
    this.report(text, false);
  }

  /**
   * Reports a new step (reading, then checking, ...): shown even right after
   * another report, since the step may run for long without one.
   */
  step(text: string): void {
    this.report(text, true);
  }

  private report(text: string, step: boolean): void {
    if (this.mode === 'off') return;
    const now = this.clock.now();
    if (!this.forced && now - this.start < this.clock.delayMs) return;
    if (!step && now - this.last < this.clock.intervalMs) return;
    this.last = now;
    this.show(`${this.label}: ${text}`);
  }

  /**
   * The work is done (or failed): a terminal's line is cleared; as lines,
   * `summary` (when given) ends them, with the time taken.
   */
  end(summary?: string): void {
    if (this.mode === 'terminal') {
      if (this.onTerminal) this.io.errWrite('\r\x1b[K');
      this.onTerminal = false;
      return;
    }
    if (this.mode === 'off' || summary === undefined) return;
    const seconds = ((this.clock.now() - this.start) / 1000).toFixed(1);
    this.io.err(`${this.label}: ${summary} in ${seconds} s`);
  }

  private show(line: string): void {
    if (this.mode === 'lines') this.io.err(line);
    else {
      this.io.errWrite(`\r${line}\x1b[K`);
      this.onTerminal = true;
    }
  }
}

/** Bytes as MB with one decimal. */
export const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * A callback reporting `what: batch i/n (x of y MB)` from the bytes of each
 * batch, asked for at the first report (when the sizes do not match the
 * count reported, the bytes are left out).
 */
export function batchReporter(progress: Progress, what: string, batchBytes: () => readonly number[]): (done: number, total: number) => void {
  if (!progress.enabled) return () => {};
  let sizes: readonly number[] | undefined;
  const cumulative = [0];
  return (done, total) => {
    if (sizes === undefined) {
      sizes = batchBytes();
      for (const s of sizes) cumulative.push(cumulative[cumulative.length - 1]! + s);
    }
    const all = cumulative[cumulative.length - 1]!;
    const bytes = total === sizes.length && all > 0 ? ` (${mb(cumulative[done]!)} of ${mb(all)})` : '';
    // The first batch starts a step: shown whenever the last report was.
    if (done === 1) progress.step(`${what}: batch ${done}/${total}${bytes}`);
    else progress.update(`${what}: batch ${done}/${total}${bytes}`);
  };
}
