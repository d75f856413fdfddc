// A pull stream exported into another wasm module's memory ({ into }): the
// stream struct is allocated there by its allocator, and its four callbacks
// are wasm functions put into its table (ts/foreign/callbacks.ts), so that
// its own code pulls the batches. Each schema and batch is written into the
// out struct the consumer passes, in its memory (ts/exchange/into.ts), CPU
// arrays only; get_last_error's message is a string there too.

import { ArrowCDeviceError, ENOSYS } from '../abi/errors.js';
import { constants } from '../abi/generated/layout.js';
import type { Device } from '../device/device.js';
import { writeArrayInto, writeSchemaInto } from '../exchange/into.js';
import type { ForeignModule } from '../foreign/module.js';
import type { StreamItem } from './batches.js';
import type { PullSink } from './producer.js';
import type { PullCallbacks } from './runtime.js';
import { STREAM_STRUCT, type StreamKind } from './pull-calls.js';

/** Another module's memory as a PullSink. */
export function intoSink(into: ForeignModule, kind: StreamKind): PullSink {
  const space = into.space;
  const s = space.structs;
  const arrayOf = (out: number) => (kind === 'device' ? out + s.offsetOf('ArrowDeviceArray', 'array') : out);
  return {
    writeSchema: (out, field) => writeSchemaInto(into, out, field),
    writeBatch: (out: number, item: StreamItem) => {
      writeArrayInto(into, arrayOf(out), item.raw());
      if (kind === 'device') {
        s.setI64('ArrowDeviceArray', out, 'device_id', -1);
        space.view.setInt32(out + s.offsetOf('ArrowDeviceArray', 'device_type'), constants.ARROW_DEVICE_CPU, true);
        s.setPtr('ArrowDeviceArray', out, 'sync_event', 0);
      }
    },
    markEnd: (out) => s.setPtr('ArrowArray', arrayOf(out), 'release', 0),
    cString: (message) => {
      const bytes = new TextEncoder().encode(`${message}\0`);
      const at = space.allocator!.alloc(bytes.length);
      space.bytes.set(bytes, at);
      return at;
    },
    free: (ptr) => space.allocator!.free(ptr),
  };
}

/**
 * Makes the stream struct in the module's memory over producer and returns
 * its address; the callbacks' table slots are freed by its release.
 */
export function exportStreamInto(into: ForeignModule, kind: StreamKind, device: Device, producer: PullCallbacks): number {
  if (device.type !== constants.ARROW_DEVICE_CPU) {
    throw new ArrowCDeviceError(`device: ${device.name}: a stream into ${into.name} carries CPU arrays in its memory; the simulated devices are the core's`, ENOSYS);
  }
  const struct = STREAM_STRUCT[kind];
  const space = into.space;
  const s = space.structs;
  if (space.allocator === null) throw new ArrowCDeviceError(`into: ${into.name} has no allocator (malloc and free), so nothing can be exported into it`, ENOSYS);
  const ptr = space.allocator.alloc(s.size(struct));
  const installed: { uninstall(): void }[] = [];
  const uninstall = () => { for (const c of installed.splice(0)) c.uninstall(); };
  try {
    const install = (field: string, fn: (...args: never[]) => unknown, signature: string) => {
      const c = into.install(fn, signature);
      installed.push(c);
      s.setPtr(struct, ptr, field, c.index);
    };
    // A wasm caller's i32 arguments arrive signed: an address at or above 2 GiB is negative.
    install('get_schema', (_stream: number, out: number) => producer.getSchema(out >>> 0), 'iii');
    install('get_next', (_stream: number, out: number) => producer.getNext(out >>> 0), 'iii');
    install('get_last_error', () => producer.getLastError(), 'ii');
    install('release', (stream: number) => {
      producer.release();
      s.setPtr(struct, stream >>> 0, 'release', 0);
      uninstall(); // its slots are free for reuse: nothing can call them any more
    }, 'vi');
    if (kind === 'device') space.view.setInt32(ptr + s.offsetOf('ArrowDeviceArrayStream', 'device_type'), constants.ARROW_DEVICE_CPU, true);
  } catch (e) {
    uninstall();
    space.allocator.free(ptr);
    throw e;
  }
  return ptr;
}
