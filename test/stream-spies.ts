// Spies for the rule tests: one counterpart for each side of each protocol,
// which records how the side under test uses it and scribbles over whatever
// the spec says is only valid during a call.
//   SpyStream: a pull stream producer, for the rules consumers must follow.
//   SpyHandler: an async handler, for the rules producers must follow.
//   SpyProducer: an async producer driven step by step, for the consumers' rules.
// Longer than 400 lines because the three spies share the recording and
// scribbling machinery; each is one protocol's counterpart.
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { writeArray } from '../ts/arrow-js/export.js';
import { writeSchema } from '../ts/model/schema.js';
import { encodeMetadata } from '../ts/model/metadata.js';
import { freeProducer, makeHandler, makeProducer } from '../ts/stream/async.js';
import { batchField, markEnd, writeDeviceBatch, CPU } from '../ts/stream/batches.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import type { StreamKind } from '../ts/stream/pull.js';
import { tick } from './stream-helpers.js';

const scribble = (acd: ArrowCDevice, ptr: number, size: number) => acd.core.bytes.fill(0xee, ptr, ptr + size);

/** Polls until cond holds (the async work runs from microtasks and timers). */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

// ---- pull ----------------------------------------------------------------------------

export interface SpyStreamScript {
  batches: arrow.RecordBatch[];
  /** get_next fails at this call (0-based) with code and message (null: get_last_error gives NULL). */
  failAt?: number;
  code?: number;
  message?: string | null;
  /** This batch is labelled with another device type (CUDA). */
  wrongDeviceAt?: number;
  /** This batch does not have the stream's schema. */
  badAt?: number;
}

/** A stream that records every call a consumer makes. */
export class SpyStream {
  readonly ptr: number;
  readonly calls: string[] = [];
  readonly violations: string[] = [];
  released = false;
  private lastFailed = false;
  private index = 0;
  private message = 0;
  private messageSize = 0;
  private readonly field;

  constructor(private readonly acd: ArrowCDevice, readonly kind: StreamKind, private readonly script: SpyStreamScript) {
    const core = acd.core;
    const struct = kind === 'array' ? 'ArrowArrayStream' : 'ArrowDeviceArrayStream';
    this.field = batchField(script.batches[0]!);
    this.ptr = core.alloc(core.structs.size(struct));
    if (kind === 'device') core.view.setInt32(this.ptr + core.structs.offsetOf('ArrowDeviceArrayStream', 'device_type'), CPU.type, true);
    streamRuntime(core).register(kind === 'array' ? 'arrayStream' : 'deviceArrayStream', this.ptr, {
      getSchema: (out) => this.getSchema(out),
      getNext: (out) => this.getNext(out),
      getLastError: () => this.getLastError(),
      release: () => this.release(),
    });
  }

  private enter(op: string): void {
    if (this.released) this.violations.push(`${op} after release`);
    this.calls.push(op);
  }

  /** The message of the last failure is only valid until the next call. */
  private dropMessage(): void {
    if (this.message === 0) return;
    scribble(this.acd, this.message, this.messageSize);
    this.acd.core.free(this.message);
    this.message = 0;
  }

  private getSchema(out: number): number {
    this.enter('get_schema');
    this.dropMessage();
    this.lastFailed = false;
    writeSchema(this.acd.core, out, this.field);
    return 0;
  }

  private getNext(out: number): number {
    this.enter('get_next');
    this.dropMessage();
    const i = this.index++;
    const s = this.script;
    const device = this.kind === 'device';
    if (i === s.failAt) {
      this.lastFailed = true;
      if (s.message !== null) {
        const text = s.message ?? 'the spy failed';
        this.message = streamRuntime(this.acd.core).cString(text);
        this.messageSize = new TextEncoder().encode(text).length + 1;
      }
      return s.code ?? 5;
    }
    this.lastFailed = false;
    const batch = i === s.badAt ? new arrow.Table({ x: arrow.vectorFromArray([1.5], new arrow.Float64()) }).batches[0]! : s.batches[i];
    if (batch === undefined) {
      markEnd(this.acd, out, device);
      return 0;
    }
    const core = this.acd.core;
    if (device) {
      writeDeviceBatch(this.acd, out, batch, batchField(batch), CPU);
      if (i === s.wrongDeviceAt) core.view.setInt32(out + core.structs.offsetOf('ArrowDeviceArray', 'device_type'), 2, true);
    } else {
      writeArray(core, out, batch.data, batchField(batch).type);
    }
    return 0;
  }

  private getLastError(): number {
    this.enter('get_last_error');
    if (!this.lastFailed) this.violations.push('get_last_error after a call that did not fail');
    return this.message;
  }

  private release(): void {
    this.enter('release');
    this.dropMessage();
    this.released = true;
  }

  /** Frees the struct (releasing the stream when no consumer did). */
  dispose(): void {
    const s = this.acd.core.stream;
    if (this.kind === 'array') s.arrayStreamRelease(this.ptr);
    else s.deviceArrayStreamRelease(this.ptr);
    this.acd.core.free(this.ptr);
  }
}

// ---- async: a handler for the producers' rules ---------------------------------------------

export interface SpyHandlerScript {
  /** request(n) from inside on_schema (0: none). */
  requestInSchema?: number;
  /** request(n) from inside each on_next_task (0: none). */
  requestPerTask?: number;
  /** cancel (twice) after this many tasks, then request(5), which must be a NOP. */
  cancelAfter?: number;
  /** on_schema returns this. */
  returnInSchema?: number;
  /** on_next_task returns EINVAL at this task (after extracting it with NULL). */
  failTaskAt?: number;
  /** Extract every task with NULL (the data is not wanted). */
  extractNull?: boolean;
}

/** A handler that records the producer's calls and checks the protocol as they come. */
export class SpyHandler {
  readonly ptr: number;
  readonly log: string[] = [];
  readonly violations: string[] = [];
  readonly errors: { code: number; message: string }[] = [];
  /** ArrowDeviceArrays extracted (owned by the spy until dispose). */
  readonly arrays: number[] = [];
  /** Return codes of a second extract_data on the same task. */
  readonly secondExtracts: number[] = [];
  requested = 0n;
  delivered = 0;
  producer = 0;
  deviceType = 0;
  metadataAtSchema: Uint8Array | null = null;
  metadataAtRelease: Uint8Array | null = null;
  released = false;
  private schema = 0;
  private inCallback = false;
  private inProducer = false;
  private readonly privateData: number;

  constructor(private readonly acd: ArrowCDevice, private readonly script: SpyHandlerScript = {}) {
    this.ptr = makeHandler(acd.core, {
      onSchema: (schema) => this.call('S', () => this.onSchema(schema)),
      onNextTask: (task) => this.call(task === 0 ? 'N' : 'T', () => this.onNextTask(task)),
      onError: (code, message) => { this.call('X', () => { this.errors.push({ code, message: message === 0 ? '' : acd.core.structs.cString(message, 'message') }); return 0; }); },
      release: () => { this.call('R', () => this.onRelease()); },
    });
    this.privateData = acd.core.structs.ptr('ArrowAsyncDeviceStreamHandler', this.ptr, 'private_data');
  }

  private call(c: string, f: () => number): number {
    if (this.inCallback) this.violations.push(`${c} while another handler callback runs`);
    if (this.inProducer) this.violations.push(`${c} from inside request or cancel`);
    if (this.released) this.violations.push(`${c} after release`);
    if (this.acd.core.structs.ptr('ArrowAsyncDeviceStreamHandler', this.ptr, 'private_data') !== this.privateData) {
      this.violations.push('the handler\'s private_data was changed');
    }
    this.log.push(c);
    this.inCallback = true;
    try {
      return f();
    } finally {
      this.inCallback = false;
    }
  }

  request(n: number): void {
    if (n > 0) this.requested += BigInt(n);
    this.inProducer = true;
    try {
      this.acd.core.stream.asyncProducerCallRequest(this.producer, n);
    } finally {
      this.inProducer = false;
    }
  }

  cancel(): void {
    this.inProducer = true;
    try {
      this.acd.core.stream.asyncProducerCallCancel(this.producer);
    } finally {
      this.inProducer = false;
    }
  }

  private metadataBytes(): Uint8Array | null {
    const s = this.acd.core.structs;
    const at = s.ptr('ArrowAsyncProducer', this.producer, 'additional_metadata');
    if (at === 0) return null;
    const n = s.view.getInt32(at, true);
    let end = at + 4;
    for (let i = 0; i < 2 * n; i++) end += 4 + s.view.getInt32(end, true);
    return this.acd.core.bytes.slice(at, end);
  }

  private onSchema(schema: number): number {
    const core = this.acd.core;
    this.producer = core.structs.ptr('ArrowAsyncDeviceStreamHandler', this.ptr, 'producer');
    if (this.producer === 0) {
      this.violations.push('on_schema before the producer member was set');
      return 22;
    }
    this.deviceType = core.structs.i32('ArrowAsyncProducer', this.producer, 'device_type');
    this.metadataAtSchema = this.metadataBytes();
    this.schema = core.alloc(core.structs.size('ArrowSchema'));
    core.schemaMove(schema, this.schema);
    if (this.script.returnInSchema) return this.script.returnInSchema;
    if (this.script.requestInSchema) this.request(this.script.requestInSchema);
    return 0;
  }

  private onNextTask(task: number): number {
    const core = this.acd.core;
    this.delivered++;
    if (BigInt(this.delivered) > this.requested) this.violations.push(`on_next_task #${this.delivered} beyond the ${this.requested} requested`);
    if (task === 0) return 0;
    const k = this.delivered - 1;
    if (k === this.script.failTaskAt) {
      core.stream.asyncTaskCallExtractData(task, 0);
      return 22;
    }
    if (this.script.extractNull) {
      core.stream.asyncTaskCallExtractData(task, 0);
    } else {
      const out = core.alloc(core.structs.size('ArrowDeviceArray'));
      const code = core.stream.asyncTaskCallExtractData(task, out);
      if (code !== 0) this.violations.push(`extract_data returned ${code}`);
      this.secondExtracts.push(core.stream.asyncTaskCallExtractData(task, out));
      const type = core.structs.i32('ArrowDeviceArray', out, 'device_type');
      if (type !== this.deviceType) this.violations.push(`a batch on device type ${type}, the producer's is ${this.deviceType}`);
      this.arrays.push(out);
    }
    if (this.script.cancelAfter !== undefined && k + 1 === this.script.cancelAfter) {
      this.cancel();
      this.cancel();
      this.request(5);
      this.requested -= 5n; // a NOP after cancel: no credit
    } else if (this.script.requestPerTask) {
      this.request(this.script.requestPerTask);
    }
    return 0;
  }

  private onRelease(): number {
    // The producer struct stays valid until release: read it once more.
    const core = this.acd.core;
    if (this.producer !== 0) {
      if (core.structs.i32('ArrowAsyncProducer', this.producer, 'device_type') !== this.deviceType) {
        this.violations.push('the producer struct changed before release');
      }
      this.metadataAtRelease = this.metadataBytes();
    }
    this.released = true;
    return 0;
  }

  async whenReleased(): Promise<void> {
    await until(() => this.released, 'the handler\'s release');
  }

  /** The lengths of the extracted batches; frees everything the spy holds. */
  dispose(): number[] {
    const core = this.acd.core;
    const lengths = this.arrays.map((a) => core.structs.i64('ArrowArray', a + core.structs.offsetOf('ArrowDeviceArray', 'array'), 'length'));
    for (const a of this.arrays.splice(0)) {
      core.arrayRelease(a + core.structs.offsetOf('ArrowDeviceArray', 'array'));
      core.free(a);
    }
    if (this.schema !== 0) {
      core.schemaRelease(this.schema);
      core.free(this.schema);
      this.schema = 0;
    }
    return lengths;
  }
}

// ---- async: a producer driven by hand, for the consumers' rules ------------------------------

/** A producer whose every step the test makes; it records what the consumer calls. */
export class SpyProducer {
  readonly ptr: number;
  readonly calls: string[] = [];
  readonly violations: string[] = [];
  /** Per task: how many times extract_data came, and with NULL how many. */
  readonly extracts: { calls: number; nulls: number }[] = [];
  requested = 0n;
  private where = '';

  constructor(private readonly acd: ArrowCDevice, readonly handler: number, deviceType = CPU.type, metadata: ReadonlyMap<string, string> | null = null) {
    this.ptr = makeProducer(acd.core, deviceType, metadata, {
      request: (n) => {
        this.calls.push(`request ${n}`);
        if (this.where !== '') this.violations.push(`request inside ${this.where}`);
        this.requested += n;
      },
      cancel: () => {
        this.calls.push('cancel');
        if (this.where !== '') this.violations.push(`cancel inside ${this.where}`);
      },
    });
  }

  get cancelled(): boolean {
    return this.calls.includes('cancel');
  }

  private inside<T>(where: string, f: () => T): T {
    this.where = where;
    try {
      return f();
    } finally {
      this.where = '';
    }
  }

  /** Sets handler->producer, then calls on_schema; checks the schema was moved, then scribbles over it. */
  schema(batch: arrow.RecordBatch): number {
    const core = this.acd.core;
    core.structs.setPtr('ArrowAsyncDeviceStreamHandler', this.handler, 'producer', this.ptr);
    const size = core.structs.size('ArrowSchema');
    const schema = core.alloc(size);
    writeSchema(core, schema, batchField(batch));
    const code = core.stream.asyncHandlerCallOnSchema(this.handler, schema);
    if (core.structs.ptr('ArrowSchema', schema, 'release') !== 0) {
      this.violations.push('on_schema left the schema in the producer\'s struct');
      core.schemaRelease(schema);
    }
    scribble(this.acd, schema, size); // the pointer must not have been kept
    core.free(schema);
    return code;
  }

  /** One task (a CPU batch, or one labelled deviceType); the task struct and metadata are scribbled over after the call. */
  task(batch: arrow.RecordBatch, options: { metadata?: ReadonlyMap<string, string>; extractCode?: number; deviceType?: number } = {}): number {
    const core = this.acd.core;
    const rt = streamRuntime(core);
    const data = core.alloc(core.structs.size('ArrowDeviceArray'));
    writeDeviceBatch(this.acd, data, batch, batchField(batch), CPU);
    if (options.deviceType !== undefined) core.view.setInt32(data + core.structs.offsetOf('ArrowDeviceArray', 'device_type'), options.deviceType, true);
    const record = { calls: 0, nulls: 0 };
    this.extracts.push(record);
    const size = core.structs.size('ArrowAsyncTask');
    const task = core.alloc(size);
    rt.register('task', task, {
      extract: (out) => {
        record.calls++;
        if (out === 0) record.nulls++;
        if (options.extractCode) {
          core.arrayRelease(data + core.structs.offsetOf('ArrowDeviceArray', 'array'));
          core.free(data);
          return options.extractCode;
        }
        if (out !== 0) core.deviceArrayMove(data, out);
        else core.arrayRelease(data + core.structs.offsetOf('ArrowDeviceArray', 'array'));
        core.free(data);
        return 0;
      },
    });
    const encoded = encodeMetadata(options.metadata ?? null);
    const md = rt.bytesCopy(encoded);
    const code = core.stream.asyncHandlerCallOnNextTask(this.handler, task, md);
    scribble(this.acd, task, size); // only valid during the call
    core.free(task);
    if (md !== 0) {
      scribble(this.acd, md, encoded!.length);
      core.free(md);
    }
    return code;
  }

  end(): number {
    return this.acd.core.stream.asyncHandlerCallOnNextTask(this.handler, 0, 0);
  }

  /** on_error with a message that is scribbled over once the call returned. */
  error(code: number, message: string): void {
    const rt = streamRuntime(this.acd.core);
    const ptr = rt.cString(message);
    this.inside('on_error', () => this.acd.core.stream.asyncHandlerCallOnError(this.handler, code, ptr, 0));
    scribble(this.acd, ptr, new TextEncoder().encode(message).length + 1);
    this.acd.core.free(ptr);
  }

  /** release, then the producer struct goes (it was valid until then). */
  release(): void {
    this.inside('release', () => this.acd.core.stream.asyncHandlerCallRelease(this.handler));
    freeProducer(this.acd.core, this.ptr);
  }
}
