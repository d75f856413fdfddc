// Helpers of the stream tests: sample batches, the values of the C generator,
// and the leak check every stream test ends with (bytes, function table
// slots, live stream objects in TypeScript and in C).
import { expect } from '@jest/globals';
import * as arrow from 'apache-arrow';
import type { ArrowCDevice } from '../ts/api.js';
import { streamRuntime } from '../ts/stream/runtime.js';
import { values } from './helpers.js';

/** n batches of `rows` rows: ints with nulls, strings, a list and a dictionary column. */
export function sampleBatches(n: number, rows = 4): arrow.RecordBatch[] {
  const out: arrow.RecordBatch[] = [];
  for (let b = 0; b < n; b++) {
    const base = b * rows;
    const ids = Array.from({ length: rows }, (_, i) => (i % 3 === 1 ? null : base + i));
    const names = Array.from({ length: rows }, (_, i) => (i % 4 === 2 ? null : `n${base + i}`));
    const lists = Array.from({ length: rows }, (_, i) => (i % 5 === 3 ? null : Array.from({ length: i % 3 }, (_, k) => base + k)));
    const colors = Array.from({ length: rows }, (_, i) => ['red', 'green', 'blue'][(base + i) % 3]!);
    out.push(new arrow.Table({
      id: arrow.vectorFromArray(ids, new arrow.Int32()),
      name: arrow.vectorFromArray(names, new arrow.Utf8()),
      list: arrow.vectorFromArray(lists, new arrow.List(new arrow.Field('item', new arrow.Int16(), true))),
      color: arrow.vectorFromArray(colors, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int8())),
    }).batches[0]!);
  }
  if (n === 0) return out;
  // One schema object for all, as a table's batches have.
  const schema = out[0]!.schema;
  return out.map((b) => new arrow.RecordBatch(schema, b.data));
}

/** The plain rows of a batch, for toEqual. */
export function rowsOf(batch: arrow.RecordBatch): Record<string, unknown>[] {
  const columns = batch.schema.fields.map((f, i) => [f.name, values(batch.getChildAt(i)!)] as const);
  return Array.from({ length: batch.numRows }, (_, r) => Object.fromEntries(columns.map(([name, v]) => [name, v[r]])));
}

/** What the C generator puts in batch b (csrc/stream/source.c). */
export function generatedRows(b: number, rows: number): Record<string, unknown>[] {
  return Array.from({ length: rows }, (_, i) => {
    const r = b * rows + i;
    return { id: r, value: r % 7 === 3 ? null : r * 0.5, name: r % 5 === 4 ? null : `r${r}` };
  });
}

export interface LeakGuard {
  /** Waits for pending async work, then expects everything back where it started. */
  check(): Promise<void>;
}

/** Captures the live bytes, table slots and stream objects (TS and C). */
export function leakGuard(acd: ArrowCDevice): LeakGuard {
  const rt = streamRuntime(acd.core);
  const snapshot = () => {
    const c = rt.cAsyncStats();
    const devices = acd.deviceStats().devices;
    return {
      bytes: acd.bytesAllocated(),
      deviceBytes: devices.reduce((n, d) => n + d.bytesAllocated, 0),
      deviceAllocations: devices.reduce((n, d) => n + d.allocations, 0),
      tableSlots: acd.core.tableSlotsLive(),
      tsObjects: rt.liveObjects(),
      cProducers: c.producersLive,
      cConsumers: c.consumersLive,
      cTasks: c.tasksLive,
      pumpPending: acd.core.stream.asyncPending(),
      uncaught: rt.uncaught.length,
    };
  };
  const start = snapshot();
  return {
    async check() {
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
      const now = snapshot();
      if (now.uncaught !== start.uncaught) {
        const errors = rt.uncaught.slice(start.uncaught);
        expect(errors.map((e) => String(e))).toEqual([]);
      }
      expect(now).toEqual(start);
    },
  };
}

export function isReleased(acd: ArrowCDevice, struct: 'ArrowArrayStream' | 'ArrowDeviceArrayStream' | 'ArrowSchema' | 'ArrowArray', ptr: number): boolean {
  return acd.core.structs.ptr(struct, ptr, 'release') === 0;
}

/** Resolves after the current microtasks and one macrotask. */
export function tick(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}
