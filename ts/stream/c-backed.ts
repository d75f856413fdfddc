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

/** A list of batches owned by the C core (what its consumers collect). */
export class BatchList extends Handle {
  private constructor(private readonly core: Core, readonly ptr: number, owned: boolean) {
    super(owned ? () => core.stream.listFree(ptr) : () => {});
  }

  static create(core: Core): BatchList {
    const ptr = core.stream.listNew();
    if (ptr === 0) core.checkStream(ENOMEM);
    return new BatchList(core, ptr, true);
  }

  /** A list owned by someone else (a C consumer): release() does nothing. */
  static borrow(core: Core, ptr: number): BatchList {
    return new BatchList(core, ptr, false);
  }

  get length(): number {
    return this.core.stream.listLength(this.ptr);
  }

  get deviceType(): number {
    return this.core.stream.listDeviceType(this.ptr);
  }

  /** The address of the list's ArrowSchema (released until set). */
  get schema(): number {
    return this.core.stream.listSchema(this.ptr);
  }

  /** The address of batch i's ArrowDeviceArray. */
  array(i: number): number {
    const ptr = this.core.stream.listArray(this.ptr, i);
    if (ptr === 0) throw new ArrowCDeviceError(`list: no batch ${i} (length ${this.length})`, EINVAL);
    return ptr;
  }
}

export interface GeneratorOptions {
  batches?: number;
  rowsPerBatch?: number;
  /** The device type the batches are labelled with ('cpu' by default; their memory stays host memory). */
  device?: DeviceSpec;
  /** get_next fails at this batch with failCode and failMessage. */
  failAt?: number;
  failCode?: number;
  failMessage?: string;
  /** get_schema fails. */
  failSchema?: boolean;
  /** This batch is labelled ARROW_DEVICE_EXT_DEV (tests of the device type checks). */
  wrongDeviceAt?: number;
}

export const GENERATOR_OPTION_KEYS = optionKeys<GeneratorOptions>()(['batches', 'rowsPerBatch', 'device', 'failAt', 'failCode', 'failMessage', 'failSchema', 'wrongDeviceAt']);

/**
 * A batch source of the C core (struct AcdBatchSource), moved into the
 * stream or producer made from it; release() frees what was not moved.
 */
export class CBatchSource extends Handle {
  private constructor(core: Core, readonly ptr: number) {
    super(() => core.stream.sourceFree(ptr));
  }

  /**
   * The C generator: struct<id: int32 not null, value: double, name: utf8>;
   * row r of the stream has id r, value r * 0.5 (null when r % 7 == 3), name
   * "r<r>" (null when r % 5 == 4).
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

  /** A source handing out a list's batches; the list is empty afterwards. */
  static fromList(core: Core, list: BatchList | number): CBatchSource {
    const ptr = core.stream.listSourceNew(typeof list === 'number' ? list : list.ptr);
    if (ptr === 0) core.checkStream(EINVAL);
    return new CBatchSource(core, ptr);
  }
}

/**
 * The C producer: a stream of the source's batches. On success the source is
 * moved into the stream (its handle then only frees the struct); on failure
 * the caller keeps it.
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
 * The C consumer: drains the stream at ptr (checking every batch against its
 * schema and device type) into list, or releases the batches when there is no
 * list. The stream is released in every case; on failure, throws with the
 * producer's code and message (the list keeps the batches before).
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
 * Starts the C producer (csrc/stream/async_producer.c) on handler, with the source's
 * batches (moved into it) and a copy of additionalMetadata. It works from the
 * pump, scheduled through the stream runtime; it frees itself after releasing
 * the handler. On failure nothing was called and the caller keeps source.
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

export interface CAsyncConsumerOptions {
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

/** The C consumer (csrc/stream/async_consumer.c): collects the stream into a list. */
export class CAsyncConsumer extends Handle {
  readonly handler: number;
  readonly ptr: number;
  private readonly core: Core;

  /**
   * release() frees it; when a producer still holds the handler, it is
   * cancelled and the consumer goes with its release.
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

  /** Resolves once the producer released the handler (rejects after timeoutMs). */
  async whenReleased(timeoutMs = 30_000): Promise<void> {
    const start = Date.now();
    while (!this.state().released) {
      if (Date.now() - start > timeoutMs) throw new ArrowCDeviceError(`the producer did not release the handler within ${timeoutMs} ms`, EIO);
      await new Promise((r) => setTimeout(r, 0));
    }
  }
}
