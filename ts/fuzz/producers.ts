// The fuzzer's own callbacks in the core's function table, taken once: the
// release callbacks of the arenas (they count calls by the tag in
// private_data), a pull stream (ArrowArrayStream or ArrowDeviceArrayStream)
// and an async producer and task, each handing out copies of an arena's
// roots. They never throw and never follow a pointer of the struct they get.

import type { Core } from '../abi/core.js';
import type { StructName } from '../abi/layout-types.js';
import type { Arena, ReleaseHooks } from './arena.js';

const EINVAL = 28;

/** What the current run's stream or async producer hands out. */
export interface Script {
  kind: 'array' | 'device';
  schema: Arena;
  /** The arena whose array root each batch copies (ArrowArray or ArrowDeviceArray per kind). */
  data: Arena;
  batches: number;
  /** get_next fails at this batch (code 5, message from the message cell) when >= 0. */
  failAt: number;
  /** The tag in the stream's, producer's or task's private_data. */
  tag: number;
  next: number;
  /** The async producer's credit and state. */
  credit: bigint;
  cancelled: boolean;
  wake: (() => void) | null;
}

export class Producers implements ReleaseHooks {
  readonly schemaRelease: number;
  readonly arrayRelease: number;
  readonly getSchema: number;
  readonly getNext: number;
  readonly getLastError: number;
  readonly streamRelease: number;
  readonly extractData: number;
  readonly request: number;
  readonly cancel: number;
  /** Release calls per tag in this run. */
  releases = new Map<number, number>();
  private tagNames = new Map<number, string>();
  private nextTag = 0x7a000000;
  script: Script | null = null;
  /** Holds the message pointer get_last_error returns (a mutable location). */
  readonly messageCell: number;
  readonly message: number;

  constructor(private readonly core: Core) {
    const s = core.structs;
    const countRelease = (struct: StructName) => (self: number) => {
      const tag = s.ptr(struct, self >>> 0, 'private_data');
      if (!this.tagNames.has(tag)) return; // not ours (a corrupted tag, or another struct)
      this.releases.set(tag, (this.releases.get(tag) ?? 0) + 1);
      s.setPtr(struct, self >>> 0, 'release', 0);
    };
    this.schemaRelease = core.addFunction(countRelease('ArrowSchema'), 'vi');
    this.arrayRelease = core.addFunction(countRelease('ArrowArray'), 'vi');
    const streamStruct = (): StructName => (this.script?.kind === 'device' ? 'ArrowDeviceArrayStream' : 'ArrowArrayStream');
    const mine = (struct: StructName, self: number) => this.script !== null && s.ptr(struct, self >>> 0, 'private_data') === this.script.tag;
    this.getSchema = core.addFunction((self: number, out: number) => {
      if (!mine(streamStruct(), self)) return EINVAL;
      this.handOut('ArrowSchema', this.script!.schema.schemaRoot, out >>> 0, 'get_schema');
      return 0;
    }, 'iii');
    this.getNext = core.addFunction((self: number, out: number) => {
      if (!mine(streamStruct(), self)) return EINVAL;
      const sc = this.script!;
      const struct: StructName = sc.kind === 'device' ? 'ArrowDeviceArray' : 'ArrowArray';
      if (sc.next === sc.failAt) return 5;
      if (sc.next >= sc.batches) {
        core.bytes.fill(0, out >>> 0, (out >>> 0) + s.size(struct)); // the end: a released array
        return 0;
      }
      sc.next++;
      this.handOut(struct, sc.data.arrayRoot, out >>> 0, 'get_next');
      return 0;
    }, 'iii');
    this.getLastError = core.addFunction((self: number) => (mine(streamStruct(), self) ? core.view.getUint32(this.messageCell, true) : 0), 'ii');
    this.streamRelease = core.addFunction((self: number) => {
      if (!mine(streamStruct(), self)) return;
      this.releases.set(this.script!.tag, (this.releases.get(this.script!.tag) ?? 0) + 1);
      s.setPtr(streamStruct(), self >>> 0, 'release', 0);
    }, 'vi');
    this.extractData = core.addFunction((self: number, out: number) => {
      if (!mine('ArrowAsyncTask', self)) return EINVAL;
      const sc = this.script!;
      if ((out >>> 0) !== 0) this.handOut('ArrowDeviceArray', sc.data.arrayRoot, out >>> 0, 'extract_data');
      return 0;
    }, 'iii');
    this.request = core.addFunction((self: number, n: bigint) => {
      if (!mine('ArrowAsyncProducer', self)) return;
      this.script!.credit += BigInt(n);
      this.script!.wake?.();
    }, 'vij');
    this.cancel = core.addFunction((self: number) => {
      if (!mine('ArrowAsyncProducer', self)) return;
      this.script!.cancelled = true;
      this.script!.wake?.();
    }, 'vi');
    this.message = core.alloc(32);
    core.bytes.set(new TextEncoder().encode('fuzz: get_next failed\0'), this.message);
    this.messageCell = core.alloc(8);
    core.view.setUint32(this.messageCell, this.message, true);
  }

  /** Every callback of ours (harmless in any struct: they check the tag). */
  get callbacks(): number[] {
    return [this.schemaRelease, this.arrayRelease, this.getSchema, this.getNext, this.getLastError, this.streamRelease,
      this.extractData, this.request, this.cancel];
  }

  tag(what: string): number {
    const t = this.nextTag++;
    this.tagNames.set(t, what);
    return t;
  }

  /** Copies a root struct of an arena into out with a fresh tag (a struct handed to the consumer). */
  private handOut(struct: StructName, from: number, out: number, what: string): void {
    const size = this.core.structs.size(struct);
    this.core.bytes.copyWithin(out, from, from + size);
    const at = struct === 'ArrowDeviceArray' ? out + this.core.structs.offsetOf('ArrowDeviceArray', 'array') : out;
    const inner: StructName = struct === 'ArrowDeviceArray' ? 'ArrowArray' : struct;
    // A corrupted release stays corrupted; a fresh tag counts this hand-out's release.
    this.core.structs.setPtr(inner, at, 'private_data', this.tag(what));
    this.handed.push(this.core.structs.ptr(inner, at, 'private_data'));
  }

  /** A tag that lives for this run only (a stream's, producer's or task's). */
  runTag(what: string): number {
    const t = this.tag(what);
    this.handed.push(t);
    return t;
  }

  /** Tags handed out in this run. */
  handed: number[] = [];

  /** Forgets the run's tags (the arenas' own tags stay). */
  resetRun(): void {
    for (const t of this.handed) this.tagNames.delete(t);
    this.handed = [];
    this.releases.clear();
    this.script = null;
    this.core.view.setUint32(this.messageCell, this.message, true);
  }

  /** Tags released more than once in this run. */
  doubleReleases(): string[] {
    return [...this.releases].filter(([, n]) => n > 1).map(([t, n]) => `${this.tagNames.get(t) ?? `tag ${t}`} released ${n} times`);
  }

  /**
   * Structs released in this run that are not this run's: a late release of
   * an earlier run's struct (a finalizer of a handle that run left behind).
   */
  strayReleases(current: ReadonlySet<number>): string[] {
    return [...this.releases].filter(([t]) => !current.has(t) && !this.handed.includes(t))
      .map(([t, n]) => `${this.tagNames.get(t) ?? `tag ${t}`} (${n}x)`);
  }

  nameOf(tag: number): string {
    return this.tagNames.get(tag) ?? `tag ${tag}`;
  }

  releaseCount(tag: number): number {
    return this.releases.get(tag) ?? 0;
  }

  free(): void {
    for (const f of this.callbacks) this.core.removeFunction(f);
    this.core.free(this.message);
    this.core.free(this.messageCell);
  }
}
