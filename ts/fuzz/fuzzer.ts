// One loaded core with the fuzzer's samples, arenas and producers, reused
// across runs: runOne(run) mutates, imports, reads, releases, restores, then
// checks that the instance is healthy (canary round trip, stack pointer, no
// pending async work) and that nothing leaked (bytes, table slots, stream
// objects, device memory), and classifies the outcome.
//
// Leak rule: the fuzzer's producer (arena.ts) never frees anything in its
// release callbacks, so after every run each counter must be exactly where it
// was before it, whatever the mutation; release calls are counted per struct
// handed out (twice is a failure; an accepted import whose root release was
// not corrupted must release each root exactly once).

import * as arrow from 'apache-arrow';
import { ArrowCDevice, type DevicePolicy, type ValidationLevel } from '../api.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError } from '../abi/errors.js';
import type { ImportMode } from '../arrow-js/import.js';
import { streamRuntime } from '../stream/runtime.js';
import { Arena } from './arena.js';
import { arenaLocations, mutate, structLocations, type Location, type Targets } from './mutate.js';
import { Prng } from './prng.js';
import { Producers, type Script } from './producers.js';
import { ForeignModule } from '../foreign/module.js';
import { HangError, ROUTES, runAsync, runSync, type Route } from './routes.js';
import { sampleBatches, sampleRaws, sampleVectors } from './samples.js';

export const LEVELS: readonly ValidationLevel[] = ['none', 'minimal', 'default', 'full'];
export const MODES: readonly ImportMode[] = ['copy', 'view'];
export const FAILURES = ['trap', 'foreign', 'broken', 'leak', 'hang', 'release'] as const;
export type Outcome = 'ok-error' | 'ok-success' | (typeof FAILURES)[number];

export interface RunResult {
  run: number;
  route: Route;
  level: ValidationLevel;
  mode: ImportMode;
  sample: string;
  mutations: string[];
  outcome: Outcome;
  /** The error or the failed check, one line. */
  message: string;
  /** The instance cannot be trusted any more: the runner loads a new one. */
  reload: boolean;
}

/** Which route, level and mode run `run` covers: every combination in turn. */
export function plan(run: number): { route: Route; level: ValidationLevel; mode: ImportMode } {
  const r = ROUTES.length;
  return { route: ROUTES[run % r]!, level: LEVELS[Math.floor(run / r) % 4]!, mode: MODES[Math.floor(run / (r * 4)) % 2]! };
}

interface Baseline { bytes: number; slots: number; objects: number; device: number; sp: number }

export class Fuzzer {
  private readonly core: Core;
  /** The core's memory, table and allocator as another module's, for the foreign route. */
  private readonly foreign: ForeignModule;
  private readonly producers: Producers;
  private readonly exports: { release(): void }[] = [];
  private readonly pools: Record<'batch' | 'vector' | 'raw' | 'device' | 'cpuDevice', Arena[]>;
  private readonly all: Arena[] = [];
  private readonly locations = new Map<Arena, Location[]>();
  private readonly targets: Targets;
  /** Structs the streams and the async producer use, rewritten every run. */
  private readonly block: number;
  private base!: Baseline;
  private readonly canary = arrow.vectorFromArray([1, 2, 3], new arrow.Int32());

  /** collect: run the garbage collector after every run (node --expose-gc), so that finalizers act within their run. */
  private constructor(readonly acd: ArrowCDevice, readonly seed: number, readonly timeoutMs: number, readonly collect: boolean) {
    const core = acd.core;
    this.core = core;
    this.foreign = new ForeignModule({ name: 'the core as a foreign module', memory: core.memory, table: core.table,
      malloc: (n) => core.alloc(n), free: (p) => core.free(p) });
    streamRuntime(core); // its permanent slot is part of the baseline
    this.producers = new Producers(core);
    const make = (label: string, exported: { schema: number; array: number; release(): void }, device: boolean) => {
      const a = new Arena(core, this.producers, exported.schema, exported.array, device, label);
      this.all.push(a);
      this.locations.set(a, arenaLocations(core, a));
      return a;
    };
    const batches = sampleBatches();
    const once = (label: string, e: { schema: number; array: number; release(): void }, device = false) => {
      try { return make(label, e, device); } finally { e.release(); }
    };
    this.pools = {
      batch: batches.map((b, i) => once(`batch ${i}`, acd.exportBatch(b))),
      vector: sampleVectors().map((v, i) => once(`vector ${i}`, acd.exportVector(v, 'v'))),
      raw: sampleRaws().map(([f, r], i) => once(`raw ${i} (${f.type.kind})`, acd.exportRaw(f, r))),
      cpuDevice: batches.map((b, i) => once(`cpu device batch ${i}`, acd.exportDeviceBatch(b), true)),
      device: [],
    };
    // Device memory stays with its export, kept until dispose().
    for (const [i, spec] of (['cuda:1', 'rocm:0', 'webgpu'] as const).entries()) {
      const e = acd.exportDeviceBatch(batches[i]!, { device: spec });
      // Finish the export's pending copies now: the first run to wait on its
      // event would otherwise free their staging memory, made before the baseline.
      acd.syncDeviceArray(e.array);
      this.exports.push(e);
      this.pools.device.push(make(`${spec} device batch ${i}`, e, true));
    }
    this.pools.device.push(...this.pools.cpuDevice);
    this.block = core.alloc(256);
    this.targets = {
      structs: this.all.flatMap((a) => a.nodes.map((n) => n.addr)),
      regions: this.all.flatMap((a) => a.regions),
      ownCallbacks: this.producers.callbacks,
    };
    this.base = this.measure();
  }

  static async create(seed: number, timeoutMs = 5000, collect = false): Promise<Fuzzer> {
    return new Fuzzer(await ArrowCDevice.load(), seed, timeoutMs, collect);
  }

  private measure(): Baseline {
    const rt = streamRuntime(this.core);
    return {
      bytes: this.core.bytesAllocated(),
      slots: this.core.tableSlotsLive(),
      objects: rt.liveObjects(),
      device: this.acd.deviceStats().devices.reduce((n, d) => n + d.bytesAllocated, 0),
      sp: stackPointer(this.core),
    };
  }

  async runOne(run: number): Promise<RunResult> {
    const { route, level, mode } = plan(run);
    const rng = Prng.forRun(this.seed, run);
    const core = this.core;
    const pool = route === 'batch' || route === 'arrayStream' || route === 'foreign' ? this.pools.batch
      : route === 'vector' ? this.pools.vector
        : route === 'raw' ? [...this.pools.raw, ...this.pools.vector]
          : route === 'async' ? this.pools.cpuDevice : this.pools.device;
    const arena = rng.pick(pool);
    const policy: DevicePolicy = rng.pick(['copy', 'copy', 'keep', 'reject']);
    const locations = [...this.locations.get(arena)!];
    const p = this.producers;
    const uncaughtBefore = streamRuntime(core).uncaught.length;
    let stream = 0;
    let producer = 0;
    let task = 0;
    if (route === 'arrayStream' || route === 'deviceStream' || route === 'async') {
      const kind = route === 'arrayStream' ? 'array' : 'device';
      const script: Script = {
        kind, schema: arena, data: arena, batches: 1 + rng.int(2), failAt: rng.chance(0.15) ? rng.int(2) : -1,
        tag: p.runTag(route), next: 0, credit: 0n, cancelled: false, wake: null,
      };
      p.script = script;
      core.bytes.fill(0, this.block, this.block + 256);
      if (route === 'async') {
        producer = this.block;
        task = this.block + 64;
        const s = core.structs;
        core.view.setInt32(producer + s.offsetOf('ArrowAsyncProducer', 'device_type'), 1, true);
        s.setPtr('ArrowAsyncProducer', producer, 'request', p.request);
        s.setPtr('ArrowAsyncProducer', producer, 'cancel', p.cancel);
        s.setPtr('ArrowAsyncProducer', producer, 'private_data', script.tag);
        s.setPtr('ArrowAsyncTask', task, 'extract_data', p.extractData);
        s.setPtr('ArrowAsyncTask', task, 'private_data', script.tag);
        locations.push(...structLocations(core, 'ArrowAsyncProducer', producer, 'producer'), ...structLocations(core, 'ArrowAsyncTask', task, 'task'));
      } else {
        stream = this.block;
        const struct = kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream';
        const s = core.structs;
        if (kind === 'device') core.view.setInt32(stream + s.offsetOf(struct, 'device_type'), arena.deviceType, true);
        s.setPtr(struct, stream, 'get_schema', p.getSchema);
        s.setPtr(struct, stream, 'get_next', p.getNext);
        s.setPtr(struct, stream, 'get_last_error', p.getLastError);
        s.setPtr(struct, stream, 'release', p.streamRelease);
        s.setPtr(struct, stream, 'private_data', script.tag);
        locations.push(...structLocations(core, struct, stream, 'stream'));
        if (script.failAt >= 0) locations.push({ addr: p.messageCell, kind: 'ptr', what: 'get_last_error() result' });
      }
    }
    const mutations: string[] = [];
    const n = rng.chance(0.25) ? 2 + rng.int(2) : 1;
    for (let i = 0; i < n; i++) mutations.push(mutate(core, rng, locations, this.targets));

    const input = {
      acd: this.acd, producers: p, level, mode, arena, policy, stream, producer, task,
      batches: p.script?.batches ?? 1, failAt: p.script?.failAt ?? -1, timeoutMs: this.timeoutMs, foreign: this.foreign,
    };
    const t0 = performance.now();
    let error: unknown = null;
    try {
      if (route === 'async') await runAsync(input);
      else runSync(route, input);
    } catch (e) {
      error = e;
    }
    const elapsed = performance.now() - t0;
    for (const a of this.all) a.restore();
    const result: RunResult = { run, route, level, mode, sample: arena.label, mutations, outcome: 'ok-success', message: '', reload: false };
    const fail = (outcome: Outcome, message: string) => {
      if (result.outcome === 'ok-success' || result.outcome === 'ok-error') {
        result.outcome = outcome;
        result.message = message;
      }
    };
    if (error instanceof WebAssembly.RuntimeError) fail('trap', `${error.name}: ${error.message}`);
    else if (error instanceof HangError) fail('hang', error.message);
    else if (error !== null && !(error instanceof ArrowCDeviceError)) fail('foreign', `${(error as Error)?.name ?? typeof error}: ${(error as Error)?.message ?? String(error)}`);
    else if (error !== null) { result.outcome = 'ok-error'; result.message = (error as Error).message; }
    if (elapsed > this.timeoutMs) fail('hang', `the run took ${Math.round(elapsed)} ms`);

    // Errors the library's own callbacks caught and turned into codes: a foreign type there is one too.
    const hidden = streamRuntime(core).uncaught.slice(uncaughtBefore).find((e) => !(e instanceof ArrowCDeviceError));
    if (hidden !== undefined) {
      fail(hidden instanceof WebAssembly.RuntimeError ? 'trap' : 'foreign',
        `in a callback: ${(hidden as Error)?.name}: ${(hidden as Error)?.message ?? String(hidden)}`);
    }

    const strays = p.strayReleases(arena.tags);
    if (strays.length > 0) fail('release', `structs of earlier runs released during this one (a finalizer of a handle an earlier run left?): ${strays.slice(0, 4).join(', ')}`);
    const doubles = p.doubleReleases();
    if (doubles.length > 0) fail('release', doubles.join('; '));
    const rootReleaseMutated = mutations.some((m) => /^(schema|array|device_array)\.(release|private_data) =/.test(m));
    if (error === null && !rootReleaseMutated && (route === 'batch' || route === 'vector' || route === 'raw' || route === 'device' || route === 'foreign')) {
      const missing = [['schema', arena.schemaTag], ['array', arena.arrayTag]].filter(([, t]) => p.releaseCount(t as number) !== 1);
      if (missing.length > 0) fail('release', `accepted import: ${missing.map(([w, t]) => `${w} root released ${p.releaseCount(t as number)} times`).join(', ')}`);
    }
    if (this.collect) {
      // Handles this run left behind are finalized now, within the run.
      const before = new Map(p.releases);
      (globalThis as { gc?: () => void }).gc?.();
      for (let i = 0; i < 2; i++) await new Promise((r) => setTimeout(r, 0));
      const late = [...p.releases].filter(([t, n]) => n !== (before.get(t) ?? 0)).map(([t]) => p.nameOf(t));
      if (late.length > 0) fail('release', `released by a finalizer after the run: ${late.slice(0, 4).join(', ')}`);
      const doubles = p.doubleReleases();
      if (doubles.length > 0) fail('release', `after a collection: ${doubles.join('; ')}`);
    }
    p.resetRun();
    try {
      await this.checkHealth(fail, result);
    } catch (e) {
      // The checks themselves failed: the instance's memory is corrupted.
      fail('broken', `the health check threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
      result.reload = true;
    }
    return result;
  }

  /** Checks the instance after a run; re-baselines what it reports, so that one failure is reported once. */
  private async checkHealth(fail: (o: Outcome, m: string) => void, result: RunResult): Promise<void> {
    const core = this.core;
    const sp = stackPointer(core);
    if (sp !== this.base.sp) {
      fail('broken', `the stack pointer moved from ${this.base.sp} to ${sp}`);
      restoreStack(core, this.base.sp);
    }
    if (core.stream.asyncPending() !== 0) {
      // Give queued pump work a chance; still pending after that is stuck.
      for (let i = 0; i < 3 && core.stream.asyncPending() !== 0; i++) await new Promise((r) => setTimeout(r, 0));
      if (core.stream.asyncPending() !== 0) { fail('broken', `${core.stream.asyncPending()} async jobs still pending`); result.reload = true; }
    }
    try {
      const e = this.acd.exportVector(this.canary);
      try {
        const h = this.acd.importVector(e.schema, e.array);
        const got = [...h.value.toArray()];
        h.release();
        if (got.join() !== '1,2,3') { fail('broken', `canary round trip gave [${got.join()}]`); result.reload = true; }
      } finally {
        e.release();
      }
    } catch (e) {
      fail('broken', `canary round trip threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
      result.reload = true;
    }
    const now = this.measure();
    const diffs = (['bytes', 'slots', 'objects', 'device'] as const).filter((k) => now[k] !== this.base[k])
      .map((k) => `${k} ${now[k] - this.base[k] > 0 ? '+' : ''}${now[k] - this.base[k]}`);
    if (diffs.length > 0) fail('leak', `not back to the baseline: ${diffs.join(', ')}`);
    this.base = { ...now, sp: this.base.sp };
  }

  dispose(): void {
    for (const a of this.all) a.free();
    for (const e of this.exports) e.release();
    this.core.free(this.block);
    this.producers.free();
  }
}

interface StackFunctions { stackSave?: () => number; stackRestore?: (sp: number) => void }

function asmOf(core: Core): StackFunctions {
  return (core as unknown as { m: { asm: StackFunctions } }).m.asm;
}

/** The wasm stack pointer (0 when the module does not export stackSave). */
export function stackPointer(core: Core): number {
  return asmOf(core).stackSave?.() ?? 0;
}

function restoreStack(core: Core, sp: number): void {
  asmOf(core).stackRestore?.(sp);
}
