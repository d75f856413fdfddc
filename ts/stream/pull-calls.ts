// The calls a pull-stream consumer makes on a producer's stream, wherever it
// lives: in the core's memory (the C core's checked calls, csrc/stream/calls.c)
// or in another module's (through its table, checked by the engine at the
// trampoline's call_indirect, ts/foreign/trampoline.ts). StreamReader reads
// both the same way.

import type { StructReader } from '../abi/structs.js';
import type { Core } from '../abi/core.js';
import { ArrowCDeviceError, EINVAL, errnoName } from '../abi/errors.js';
import type { ForeignSource } from '../exchange/options.js';

/**
 * Which pull stream: `'array'`, an ArrowArrayStream (CPU arrays); `'device'`, an ArrowDeviceArrayStream.
 */
export type StreamKind = 'array' | 'device';

export const STREAM_STRUCT = { array: 'ArrowArrayStream', device: 'ArrowDeviceArrayStream' } as const;

/** A consumer's calls on one stream: get_schema / get_next return 0 or a code, whose message is lastError(). */
export interface PullCalls {
  /** Where the stream, its out structs and their addresses live. */
  readonly structs: StructReader;
  /** The module whose memory that is (import options' `from`), or undefined for the core's. */
  readonly from: ForeignSource | undefined;
  alloc(size: number): number;
  free(ptr: number): void;
  /** Moves the stream struct (the source is marked released). */
  move(src: number, dst: number): void;
  getSchema(stream: number, out: number): number;
  getNext(stream: number, out: number): number;
  /** The message of the last failed call, naming it. */
  lastError(): string;
  releaseStream(stream: number): void;
  releaseArray(array: number): void;
}

/** The core's memory: the C core's checked calls. */
export function coreCalls(core: Core, kind: StreamKind): PullCalls {
  const s = core.stream;
  return {
    structs: core.structs,
    from: undefined,
    alloc: (size) => core.alloc(size),
    free: (ptr) => core.free(ptr),
    move: (src, dst) => (kind === 'array' ? s.arrayStreamMove(src, dst) : s.deviceArrayStreamMove(src, dst)),
    getSchema: (stream, out) => (kind === 'array' ? s.arrayStreamGetSchema(stream, out) : s.deviceArrayStreamGetSchema(stream, out)),
    getNext: (stream, out) => (kind === 'array' ? s.arrayStreamGetNext(stream, out) : s.deviceArrayStreamGetNext(stream, out)),
    lastError: () => s.streamLastError(),
    releaseStream: (stream) => { if (kind === 'array') s.arrayStreamRelease(stream); else s.deviceArrayStreamRelease(stream); },
    releaseArray: (array) => { core.arrayRelease(array); },
  };
}

/** A producer's message is read only when it ends within this many bytes (as the C core does). */
const MAX_MESSAGE = 65536;

/**
 * Another module's memory: its allocator holds the moved stream and the out
 * structs, and the stream's callbacks are called through its table.
 */
export function foreignCalls(from: ForeignSource, kind: StreamKind): PullCalls {
  const space = from.space;
  const s = space.structs;
  const struct = STREAM_STRUCT[kind];
  const table = space.table;
  const allocator = space.allocator;
  if (table === null || allocator === null) {
    throw new ArrowCDeviceError(`from: ${from.name} needs a function table and an allocator (malloc and free) for a stream to be read from it: ` +
      'its callbacks are called through the table, and the structs they fill are allocated in its memory', EINVAL);
  }
  let last = '';
  const call = (stream: number, name: 'get_schema' | 'get_next', out: number): number => {
    const code = table.call(s.ptr(struct, stream, name), 'iii', [stream, out], `${from.name}: stream.${name}`) as number;
    if (code !== 0) last = `${name}: ${message(stream, code)}`;
    return code;
  };
  const message = (stream: number, code: number): string => {
    const what = `error ${code} (${errnoName(code)})`;
    const at = table.call(s.ptr(struct, stream, 'get_last_error'), 'ii', [stream], `${from.name}: stream.get_last_error`) as number >>> 0;
    if (at === 0) return `${what}, and get_last_error gave no message`;
    const bytes = space.bytes;
    const end = bytes.subarray(at, at + MAX_MESSAGE).indexOf(0);
    if (at < 0 || at >= bytes.length || end < 0) return `${what}, and get_last_error gave an invalid string (${at}: not NUL-terminated within ${MAX_MESSAGE} bytes of its memory)`;
    return s.cString(at, `${from.name}: the message of get_last_error`);
  };
  return {
    structs: s,
    from,
    alloc: (size) => allocator.alloc(size),
    free: (ptr) => allocator.free(ptr),
    move: (src, dst) => {
      space.bytes.copyWithin(dst, src, src + s.size(struct));
      s.setPtr(struct, src, 'release', 0);
    },
    getSchema: (stream, out) => call(stream, 'get_schema', out),
    getNext: (stream, out) => call(stream, 'get_next', out),
    lastError: () => `${from.name}: ${last}`,
    releaseStream: (stream) => { space.release(struct, stream); },
    releaseArray: (array) => { space.release('ArrowArray', array); },
  };
}

/**
 * The bytes of an out struct a stream's get_schema or get_next writes: room
 * for the largest a callback of that signature writes (an ArrowDeviceArray),
 * so that one in the wrong slot (a get_next as get_schema) cannot write past
 * the allocation. The core's own calls write into such room too
 * (csrc/stream/calls.c); another module's callbacks write here directly.
 */
export function outRoom(s: StructReader): number {
  return Math.max(s.size('ArrowSchema'), s.size('ArrowArray'), s.size('ArrowDeviceArray'));
}
