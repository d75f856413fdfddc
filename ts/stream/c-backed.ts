// The C core's stream producers and consumers, from TypeScript: batch lists
// and sources (csrc/stream/source.c), the pull producer and the drain consumer
// (csrc/stream/stream.c), and the async producer and consumer (csrc/stream/async_producer.c,
// csrc/stream/async_consumer.c), which run from the stream runtime's pump.

import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, EIO, ENOMEM } from '../abi/errors.js';
import { Handle } from '../abi/handles.js';
import { checkOptions, optionKeys } from '../abi/option-keys.js';
import { decodeMetadataAt, encodeMetadata } from '../model/metadata.js';
import { streamDevice, type DeviceSpec } from './batches.js';
import { streamRuntime } from './runtime.js';
import { ExportedStream, STREAM_STRUCT, type StreamKind } from './pull.js';
import type { Metadata } from '../model/types.js';

// ---- pull ------------------------------------------------------------------------------

/**
 * A list of batches owned by the C core (what its consumers collect): a schema and ArrowDeviceArrays in the core's memory.
 *
 * Ownership: a list made by `create` is the caller's, to `release()` (which frees the batches still in it); one from `borrow` is someone else's, and its `release()` does nothing.
 */
export class BatchList extends Handle {
  /** The list's address (struct AcdBatchList). */
  readonly ptr: number;

  private constructor(private readonly core: Core, ptr: number, owned: boolean) {
    super(owned ? () => core.stream.listFree(ptr) : () => {});
    this.ptr = ptr;
  }

  /**
   * An empty list.
   *
   * Ownership: the caller owns it and must `release()` it.
   * @param core - the core (`acd.core`).
   */
  static create(core: Core): BatchList {
    const ptr = core.stream.listNew();
    if (ptr === 0) core.checkStream(ENOMEM);
    return new BatchList(core, ptr, true);
  }

  /**
   * A list owned by someone else (a C consumer): its `release()` does nothing.
   *
   * Ownership: borrows; the list stays its owner's.
   * @param core - the core (`acd.core`).
   * @param ptr - the list's address.
   */
  static borrow(core: Core, ptr: number): BatchList {
    return new BatchList(core, ptr, false);
  }

  /** How many batches the list holds. */
  get length(): number {
    return this.core.stream.listLength(this.ptr);
  }

  /** The ArrowDeviceType of its batches. */
  get deviceType(): number {
    return this.core.stream.listDeviceType(this.ptr);
  }

  /** The address of the list's ArrowSchema (released until set). */
  get schema(): number {
    return this.core.stream.listSchema(this.ptr);
  }

  /**
   * The address of batch i's ArrowDeviceArray.
   *
   * Ownership: borrows; the batch stays the list's (a consumer may move it out).
   * @param i - the batch's index.
   * @throws `ArrowCDeviceError` (EINVAL) for an index out of range.
   */
  array(i: number): number {
    const ptr = this.core.stream.listArray(this.ptr, i);
    if (ptr === 0) throw new ArrowCDeviceError(`list: no batch ${i} (length ${this.length})`, EINVAL);
    return ptr;
  }
}

/** Options of the C generator (`CBatchSource.generator`). */
export interface GeneratorOptions {
  /** How many batches (default 3). */
  batches?: number;
  /** Rows in each batch (default 5). */
  rowsPerBatch?: number;
  /** The device type the batches are labelled with ('cpu' by default; their memory stays host memory). */
  device?: DeviceSpec;
  /** get_next fails at this batch with failCode and failMessage. */
  failAt?: number;
  /** The errno `get_next` fails with (default EIO). */
  failCode?: number;
  /** The message `get_last_error` then gives. */
  failMessage?: string;
  /** get_schema fails. */
  failSchema?: boolean;
  /** This batch is labelled ARROW_DEVICE_EXT_DEV (tests of the device type checks). */
  wrongDeviceAt?: number;
}

export const GENERATOR_OPTION_KEYS = optionKeys<GeneratorOptions>()(['batches', 'rowsPerBatch', 'device', 'failAt', 'failCode', 'failMessage', 'failSchema', 'wrongDeviceAt']);

/**
 * A batch source of the C core (struct AcdBatchSource).
 *
 * Ownership: the caller owns it until it is moved into a stream or a producer made from it (`cStream`, `startCAsyncProducer`); `release()` frees what was not moved.
 */
export class CBatchSource extends Handle {
  /** The source's address. */
  readonly ptr: number;

  private constructor(core: Core, ptr: number) {
    super(() => core.stream.sourceFree(ptr));
    this.ptr = ptr;
  }

  /**
   * The C generator: `struct<id: int32 not null, value: double, name: utf8>`; row r of the stream has id r, value r * 0.5 (null when r % 7 == 3), name "r" followed by r (null when r % 5 == 4).
   *
   * Ownership: the caller owns the source, until a stream or producer takes it.
   * @param core - the core (`acd.core`).
   * @param o - how many batches, how big, and the failures to play.
   */
  static generator(core: Core, o: GeneratorOptions = {}): CBatchSource {
    checkOptions('CBatchSource.generator', o, GENERATOR_OPTION_KEYS);
    const device = streamDevice(o.device);
    const failAt = o.failSchema ? -2 : o.failAt ?? -1;
    const ptr = core.stream.generatorSourceNew(o.batches ?? 3, o.rowsPerBatch ?? 5, device.type, device.id, failAt,
      o.failCode ?? EIO, o.failMessage !== undefined, o.failMessage ?? '', o.wrongDeviceAt ?? -1);
    if (ptr === 0) core.checkStream(EINVAL);
    return new CBatchSource(core, ptr);
  }

  /**
   * A source handing out a list's batches; the list is empty afterwards.
   *
   * Ownership: the batches move from the list into the source, which the caller owns.
   * @param core - the core (`acd.core`).
   * @param list - the list, or its address.
   */
  static fromList(core: Core, list: BatchList | number): CBatchSource {
    const ptr = core.stream.listSourceNew(typeof list === 'number' ? list : list.ptr);
    if (ptr === 0) core.checkStream(EINVAL);
    return new CBatchSource(core, ptr);
  }
}

/**
 * The C producer: a stream of the source's batches.
 *
 * Ownership: on success the source is moved into the stream (its handle is released) and the caller owns the returned stream handle; on failure the caller keeps the source.
 * @param core - the core (`acd.core`).
 * @param source - the batches.
 * @param kind - `'device'` (an ArrowDeviceArrayStream, the default) or `'array'`.
 * @returns the stream.
 * @throws `ArrowCDeviceError` with the C producer's code.
 */
export function cStream(core: Core, source: CBatchSource, kind: StreamKind = 'device'): ExportedStream {
  const ptr = core.alloc(core.structs.size(STREAM_STRUCT[kind]));
  const code = kind === 'array' ? core.stream.arrayStreamInitSource(ptr, source.ptr) : core.stream.deviceArrayStreamInitSource(ptr, source.ptr);
  if (code !== 0) {
    core.free(ptr);
    core.checkStream(code);
  }
  source.release(); // the moved-from struct
  return new ExportedStream(core, ptr, kind);
}

/**
 * The C consumer: drains the stream at `ptr` (checking every batch against its schema and device type) into `list`, or releases the batches when there is no list.
 *
 * Ownership: takes ownership of the stream at `ptr` and releases it in every case; the batches go to `list` (its owner's), or are released.
 * @param core - the core (`acd.core`).
 * @param ptr - the stream's address.
 * @param kind - which stream struct it is.
 * @param list - where the batches go.
 * @returns how many batches and rows it read.
 * @throws `ArrowCDeviceError` with the producer's code and message (the list keeps the batches before).
 */
export function drainStream(core: Core, ptr: number, kind: StreamKind, list?: BatchList): { batches: number; rows: number } {
  const totals = core.alloc(16);
  try {
    const code = kind === 'array'
      ? core.stream.arrayStreamDrain(ptr, list?.ptr ?? 0, totals)
      : core.stream.deviceArrayStreamDrain(ptr, list?.ptr ?? 0, totals);
    core.checkStream(code);
    const v = core.view;
    return { batches: Number(v.getBigInt64(totals, true)), rows: Number(v.getBigInt64(totals + 8, true)) };
  } finally {
    core.free(totals);
  }
}

// ---- async ----------------------------------------------------------------------------

/**
 * Starts the C producer (csrc/stream/async_producer.c) on `handler`, with the source's batches and a copy of `additionalMetadata`. It works from the pump, scheduled through the stream runtime, and frees itself after releasing the handler.
 *
 * Ownership: on success the source is moved into the producer (its handle is released); the handler stays its consumer's, released by the producer at the end. On failure nothing was called and the caller keeps the source.
 * @param core - the core (`acd.core`).
 * @param handler - the ArrowAsyncDeviceStreamHandler's address.
 * @param source - the batches.
 * @param additionalMetadata - the producer's additional_metadata.
 * @throws `ArrowCDeviceError` with the C producer's code.
 */
export function startCAsyncProducer(core: Core, handler: number, source: CBatchSource, additionalMetadata: Metadata | null = null): void {
  const rt = streamRuntime(core);
  const metadata = rt.bytesCopy(encodeMetadata(additionalMetadata));
  try {
    core.checkStream(core.stream.asyncProducerStart(handler, source.ptr, metadata));
  } finally {
    if (metadata !== 0) core.free(metadata);
  }
  source.release(); // frees the moved-from struct
}

/** Options of the C async consumer. */
export interface CAsyncConsumerOptions {
  /** The credit it requests ahead (default 4). */
  window?: number;
  /** Copy each task and extract it later in the pump (default: inside on_next_task). */
  extractLater?: boolean;
  /** Cancel once this many batches were taken (later tasks are extracted with NULL). */
  cancelAfter?: number;
  /** on_next_task fails at this task. */
  failTaskAt?: number;
  /** on_schema fails. */
  failSchema?: boolean;
}

export const C_ASYNC_CONSUMER_OPTION_KEYS = optionKeys<CAsyncConsumerOptions>()(['window', 'extractLater', 'cancelAfter', 'failTaskAt', 'failSchema']);

/**
 * The C consumer of the async stream (csrc/stream/async_consumer.c): collects the stream into a list.
 *
 * Ownership: the caller owns it and must `release()` it; when a producer still holds the handler, it is cancelled and the consumer is freed with the handler's release.
 */
export class CAsyncConsumer extends Handle {
  /** The ArrowAsyncDeviceStreamHandler's address, to give to a producer. */
  readonly handler: number;
  /** The consumer's address. */
  readonly ptr: number;
  private readonly core: Core;

  /**
   * Makes a C consumer.
   *
   * Ownership: the caller owns it and must `release()` it.
   * @param core - the core (`acd.core`).
   * @param o - the window, and the failures to play.
   * @throws `ArrowCDeviceError` (EINVAL) for options the C consumer refuses.
   */
  constructor(core: Core, o: CAsyncConsumerOptions = {}) {
    checkOptions('CAsyncConsumer', o, C_ASYNC_CONSUMER_OPTION_KEYS);
    streamRuntime(core); // the pump's scheduler is installed
    const ptr = core.stream.asyncConsumerNew(o.window ?? 4, o.extractLater ?? false, o.cancelAfter ?? -1, o.failTaskAt ?? -1, o.failSchema ?? false);
    if (ptr === 0) core.checkStream(EINVAL);
    super(() => core.stream.asyncConsumerFree(ptr));
    this.core = core;
    this.ptr = ptr;
    this.handler = core.stream.asyncConsumerHandler(ptr);
  }

  /**
   * What it has seen so far: the schema, the end, the release, an error, the tasks and the credit it gave.
   *
   * Ownership: a snapshot in JS memory; nothing to release.
   */
  state(): { schemaReceived: boolean; ended: boolean; released: boolean; errorCode: number; errorMessage: string; tasks: number; requested: number; additionalMetadata: Metadata | null } {
    const s = this.core.stream;
    const flags = s.asyncConsumerFlags(this.ptr);
    const metadata = s.asyncConsumerMetadata(this.ptr);
    return {
      schemaReceived: (flags & 1) !== 0,
      ended: (flags & 2) !== 0,
      released: (flags & 4) !== 0,
      errorCode: s.asyncConsumerErrorCode(this.ptr),
      errorMessage: s.asyncConsumerErrorMessage(this.ptr),
      tasks: s.asyncConsumerTasks(this.ptr),
      requested: s.asyncConsumerRequested(this.ptr),
      additionalMetadata: metadata === 0 ? null : decodeMetadataAt(this.core, metadata, 'producer.additional_metadata'),
    };
  }

  /** The schema and batches collected so far (owned by the consumer). */
  get list(): BatchList {
    return BatchList.borrow(this.core, this.core.stream.asyncConsumerList(this.ptr));
  }

  /**
   * Resolves once the producer released the handler (rejects after timeoutMs).
   *
   * Ownership: nothing changes hands.
   * @param timeoutMs - how long to wait.
   * @throws `ArrowCDeviceError` (EIO) after `timeoutMs`.
   */
  async whenReleased(timeoutMs = 30_000): Promise<void> {
    const start = Date.now();
    while (!this.state().released) {
      if (Date.now() - start > timeoutMs) throw new ArrowCDeviceError(`the producer did not release the handler within ${timeoutMs} ms`, EIO);
      await new Promise((r) => setTimeout(r, 0));
    }
  }
}
