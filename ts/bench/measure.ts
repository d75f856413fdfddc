// One set measured: every alternative, this library and the floors, on the
// same batches, interleaved in each iteration (so that a change of load on the
// machine hits them all alike). Untimed: setup, the checks that every reader
// read the same values, and releases.

import * as arrow from 'apache-arrow';
import type { ArrowCDevice, ExportedArray, ExportedStream, ForeignModule, Imported, ImportedSchema, ImportMode, StreamReader, ValidationLevel } from '../index.js';
import type { BenchSet } from './data.js';
import { FIGURES, measuredOn } from './figures.js';
import { seeded } from './random.js';
import { bufferPieces, concatBuffers, floorBuilders, Scratch, structReader, type StructReader } from './floors.js';
import { iterate, type Iterations, type Timer, type Timing } from './timing.js';

/** The part of arrow-js-ffi the benchmark uses. */
export interface Ffi {
  parseTable(buffer: ArrayBuffer, arrayPtrs: number[], schemaPtr: number, copy?: boolean): arrow.Table;
}

/**
 * A second instance of the core, loaded separately (its own memory and
 * function table), and the same seen from the first as another module: the
 * producer of the { from } imports.
 */
export interface Foreign {
  core: ArrowCDevice;
  from: ForeignModule;
}

/** `other` as a foreign module of `acd`: its memory, its table and its allocator. */
export function foreignOf(acd: ArrowCDevice, other: ArrowCDevice): Foreign {
  const from = acd.foreign({ memory: other.memory, table: other.core.table, malloc: (n) => other.core.alloc(n), free: (p) => other.core.free(p) }, 'a second core');
  return { core: other, from };
}

/** What else measureSet takes: the second core (its figures are left out without it), and a hook on each iteration. */
export interface MeasureOptions {
  foreign?: Foreign | null;
  /** Follows the iterations (warm-up included). */
  onIteration?: (done: number, total: number) => void;
}

/** A set's figures, and why arrow-js-ffi's were not measured on it (it could not read the set). */
export interface SetMeasure {
  figures: Map<string, Timing>;
  ffiCannotRead: string | null;
}

/**
 * Measures every figure of one set (arrow-js-ffi's only when it is given and
 * can read the set: tried once, untimed, its output checked; the imports
 * { from } another module only when the second core is given); throws if a
 * reader misread it or wasm memory leaked, in either core.
 */
export function measureSet(acd: ArrowCDevice, ffiGiven: Ffi | null, set: BenchSet, it: Iterations, o: MeasureOptions = {}): SetMeasure {
  const foreign = o.foreign !== undefined && o.foreign !== null && FIGURES.some((f) => f.key.startsWith('foreign.') && measuredOn(f, set.name))
    ? o.foreign : null;
  const start = acd.bytesAllocated();
  const foreignStart = foreign === null ? 0 : foreign.core.bytesAllocated();
  const scratch = new Scratch(acd);
  const foreignScratch = foreign === null ? null : new Scratch(foreign.core);
  const pieces = bufferPieces(set);
  const all = concatBuffers(pieces);
  const floor = floorBuilders(set);
  const readStructs = structReader(acd);
  // One export for the untimed check of whether arrow-js-ffi can read the set (it takes no ownership).
  const forFfi = ffiGiven === null ? [] : set.batches.map((b) => acd.exportBatch(b));
  let failed = true;
  try {
    // A type arrow-js-ffi does not read (it throws or misreads) skips its rows on this set, with the reason.
    const ffiCannotRead = ffiGiven === null ? null : cannotRead(acd, ffiGiven, set, forFfi);
    const ffi = ffiCannotRead === null ? ffiGiven : null;
    const view = () => acd.memory.buffer as ArrayBuffer;
    let ipc: Uint8Array = new Uint8Array(0);
    let ipcAt = 0;
    // Groups of steps, run in a new (seeded) order in each iteration after the first: the
    // collections that big allocations force (V8's external memory pressure)
    // land on whichever step crosses the threshold, and in a fixed cycle of
    // allocations that is the same step every time.
    const groups: ((t: Timer, check: boolean) => void)[] = [
      (t) => {
        // The memcpy floors: all buffer bytes into wasm memory, and out into a new ArrayBuffer.
        const at = scratch.get('memcpy', all.length);
        t.repeat('floor.memcpyIn', () => acd.core.bytes.set(all, at));
        // The copies are kept until the step ends, as an import's are (a dropped one's memory would be reused by the next).
        const kept: ArrayBuffer[] = [];
        t.repeat('floor.memcpyOut', () => kept.push(view().slice(at, at + all.length)));
      },
      (t) => {
        // The copies an export makes, and nothing else of it: every buffer by one set
        // into new wasm memory (64-byte aligned places), kept, as many times as an
        // export runs in a sample (each export its own memory; allocation untimed).
        const reps = t.reps('acd.importView');
        const n = reps + (reps > 1 ? 1 : 0);
        const regions: number[] = [];
        try {
          for (let r = 0; r < n; r++) regions.push(acd.core.alloc(pieces.bytes));
          const bytes = acd.core.bytes;
          t.run('floor.buffersIn', () => {
            for (const region of regions) {
              for (let i = 0; i < pieces.list.length; i++) bytes.set(pieces.list[i]!, region + pieces.at[i]!);
            }
          }, n);
        } finally {
          regions.forEach((r) => acd.core.free(r));
        }
      },
      ...(foreign === null ? [] : [
        (t: Timer) => {
          // The same slice out of the other module's memory: the floor of a copy { from } it.
          const there = foreignScratch!.get('memcpy', all.length);
          foreign.core.core.bytes.set(all, there);
          const kept: ArrayBuffer[] = [];
          t.repeat('floor.foreignMemcpyOut', () => kept.push((foreign.core.memory.buffer as ArrayBuffer).slice(there, there + all.length)));
        },
      ]),
      (t) => {
        // IPC: serialize, copy the bytes into wasm memory...
        ipc = t.repeat('ipc.write', () => arrow.tableToIPC(set.table, 'stream'));
        ipcAt = scratch.get('ipc', ipc.length);
        t.repeat('ipc.copyIn', () => acd.core.bytes.set(ipc, ipcAt));
        t.add('ipc.toWasm', t.latest('ipc.write') + t.latest('ipc.copyIn'));
      },
      (t, check) => {
        // ...and read them there: a group of its own, so that the collection of
        // the serialized bytes' garbage does not always land in it.
        const fromIpc = t.repeat('ipc.read', () => arrow.tableFromIPC(new Uint8Array(view(), ipcAt, ipc.length)));
        t.add('ipc.total', t.latest('ipc.toWasm') + t.latest('ipc.read'));
        if (check) checkSame(set, fromIpc.batches, 'IPC');
      },
      (t) => {
        t.repeat('floor.data', floor.data);
        t.repeat('floor.build', floor.batches);
      },
      (t) => structsFloor(acd, set, t, readStructs),
      ...(ffi === null ? [] : [
        (t: Timer, check: boolean) => ffiFresh(acd, ffi, set, t, false, 'ffi.view', check),
        (t: Timer, check: boolean) => ffiFresh(acd, ffi, set, t, true, 'ffi.copy', check),
      ]),
      // This library: fresh exports for the imports (an import moves the structs).
      (t, check) => {
        roundtrip(acd, set, t, 'view', 'default', 'acd.importView', check);
        t.add('acd.roundtripView', t.latest('acd.export') + t.latest('acd.importView'));
      },
      (t, check) => roundtrip(acd, set, t, 'copy', 'default', 'acd.importCopy', check),
      (t, check) => roundtrip(acd, set, t, 'view', 'none', 'acd.importViewUnvalidated', check),
      // Imports { from } the second core, of fresh exports it made (untimed: not this core's export).
      ...(foreign === null ? [] : [
        (t: Timer, check: boolean) => roundtrip(acd, set, t, 'view', 'default', 'foreign.importView', check, foreign),
        (t: Timer, check: boolean) => roundtrip(acd, set, t, 'copy', 'default', 'foreign.importCopy', check, foreign),
      ]),
    ];
    // Streams: on the many-batches sets, the table exported as an ArrowArrayStream
    // and drained by importArrayStream in view mode.
    if (FIGURES.some((f) => f.key === 'acd.streamView' && measuredOn(f, set.name))) {
      groups.push((t, check) => streamView(acd, set, t, check));
    }
    // Every step gets at most as many repetitions as this library's imports can
    // (each needs its own export), so that all are measured equally hot or cold.
    const reps = Math.min(it.maxReps, Math.max(1, Math.floor(LIVE_EXPORT_BYTES / set.bytes) - 1));
    const next = seeded(ORDER_SEED);
    const figures = iterate({ ...it, maxReps: reps, sameReps: [COPIES_OUT, VIEWS_OF_FRESH_EXPORTS], atLeastTwice: { when: 'acd.importView', names: VIEWS_OF_FRESH_EXPORTS } }, (t, i) => {
      // The first iteration (warm-up, which checks every reader) in the written order:
      // a group reading another's latest result (IPC read, its bytes) then finds one.
      const order = i === 0 ? groups.map((_, g) => g) : shuffled(groups.length, next);
      for (const g of order) groups[g](t, i === 0);
      o.onIteration?.(i + 1, it.warmup + it.samples);
    });
    failed = false;
    return { figures, ffiCannotRead };
  } finally {
    forFfi.forEach((e) => e.release());
    scratch.release();
    foreignScratch?.release();
    const leaked = acd.bytesAllocated() - start;
    const leakedThere = foreign === null ? 0 : foreign.core.bytesAllocated() - foreignStart;
    // Not over an error already on its way: that one says what went wrong first.
    if (leaked !== 0 && !failed) throw new Error(`${set.name}: ${leaked} bytes of wasm memory still allocated after the set`);
    if (leakedThere !== 0 && !failed) throw new Error(`${set.name}: ${leakedThere} bytes of the second core's memory still allocated after the set`);
  }
}

const ORDER_SEED = 0x0de5;

/** The steps that copy every buffer byte out of wasm memory into new ArrayBuffers: compared, so repeated alike. */
const COPIES_OUT = ['floor.memcpyOut', 'floor.foreignMemcpyOut', 'acd.importCopy', 'foreign.importCopy', 'ffi.copy'];
/**
 * The zero-copy readers of fresh exports, one per repetition, and the
 * object-building floors they are compared with: repeated alike (more
 * repetitions mean more live exports, colder memory; for a floor, which
 * builds over the same typed arrays each time, hotter ones).
 */
const VIEWS_OF_FRESH_EXPORTS = ['acd.importView', 'acd.importViewUnvalidated', 'ffi.view', 'foreign.importView', 'floor.data', 'floor.build', 'floor.structs'];

/** 0 … n − 1 in a random order (Fisher–Yates). */
function shuffled(n: number, next: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** Why arrow-js-ffi cannot read the set (parseTable threw, or read other values), or null: tried untimed, view and copy. */
function cannotRead(acd: ArrowCDevice, ffi: Ffi, set: BenchSet, exported: ExportedArray[]): string | null {
  try {
    for (const copy of [false, true]) {
      const table = ffi.parseTable(acd.memory.buffer as ArrayBuffer, exported.map((e) => e.array), exported[0].schema, copy);
      checkSame(set, table.batches, `arrow-js-ffi (${copy ? 'copy' : 'view'})`);
    }
    return null;
  } catch (e) {
    return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
  }
}

/** Wasm memory the live exports of one sample may take: it bounds their repetitions. */
const LIVE_EXPORT_BYTES = 256e6;

/**
 * arrow-js-ffi's parseTable over fresh exports of the set, one per
 * repetition, as this library's imports get (untimed exports; the structs
 * and buffers a reader reads are then as cold or warm as for this library:
 * reading one export again and again would keep them in the CPU's caches,
 * a state no program reading a new batch is in). parseTable does not take
 * ownership: the exports are released afterwards, untimed. As in repeat(),
 * a repeated step first runs once untimed.
 */
function ffiFresh(acd: ArrowCDevice, ffi: Ffi, set: BenchSet, t: Timer, copy: boolean, name: string, check: boolean): void {
  const reps = t.reps(name);
  const warm = reps > 1 ? 1 : 0;
  const exported: ExportedArray[][] = [];
  try {
    for (let r = 0; r < reps + warm; r++) exported.push(set.batches.map((b) => acd.exportBatch(b)));
    const parse = (e: ExportedArray[]) => ffi.parseTable(acd.memory.buffer as ArrayBuffer, e.map((x) => x.array), e[0].schema, copy);
    if (warm) parse(exported[0]);
    // Every table kept until the end, as this library's imports are (a reader keeps what it read;
    // dropping each at once would let the collector reuse its memory for the next).
    const tables: arrow.Table[] = [];
    t.run(name, () => {
      for (let r = warm; r < exported.length; r++) tables.push(parse(exported[r]));
    }, reps);
    if (check) checkSame(set, tables[0]!.batches, `arrow-js-ffi (${copy ? 'copy' : 'view'})`);
  } finally {
    exported.flat().forEach((e) => e.release());
  }
}

/**
 * The struct-reading floor (floors.ts structReader) over fresh exports of the
 * set, one per repetition, as this library's imports get them (untimed
 * exports, made just before, as roundtrip() makes them): the schema tree
 * once per repetition (an import of several batches imports it once) and
 * every batch's array tree. As in repeat(), a repeated step first runs once
 * untimed.
 */
function structsFloor(acd: ArrowCDevice, set: BenchSet, t: Timer, read: StructReader): void {
  const reps = t.reps('floor.structs');
  const warm = reps > 1 ? 1 : 0;
  const exported: ExportedArray[][] = [];
  const readAll = (e: ExportedArray[]) => {
    let s = read.schema(e[0]!.schema);
    for (const x of e) s = (s + read.array(x.array)) | 0;
    return s;
  };
  try {
    for (let r = 0; r < reps + warm; r++) exported.push(set.batches.map((b) => acd.exportBatch(b)));
    let sum = warm ? readAll(exported[0]!) : 0;
    t.run('floor.structs', () => {
      for (let r = warm; r < exported.length; r++) sum = (sum + readAll(exported[r]!)) | 0;
    }, reps);
    structsRead = sum;
  } finally {
    exported.flat().forEach((e) => e.release());
  }
}

/** The last struct-reading floor's sum: kept, so that no engine can drop the reads. */
let structsRead = 0;

/**
 * Exports the set (timed), imports every export (timed), checks once, releases
 * everything (untimed). When the import is repeated, one more export is
 * imported first, untimed, as repeat() does for the other steps. With
 * `foreign`, the second core exports (untimed) and the imports are { from } it.
 */
function roundtrip(acd: ArrowCDevice, set: BenchSet, t: Timer, mode: ImportMode, validate: ValidationLevel, name: string, check: boolean,
  foreign: Foreign | null = null): void {
  const exporter = foreign === null ? acd : foreign.core;
  const from = foreign === null ? {} : { from: foreign.from };
  const reps = t.reps(name);
  const warm = reps > 1 ? 1 : 0;
  const exported: ExportedArray[][] = [];
  const imported: Imported<arrow.RecordBatch>[] = [];
  const schemas: ImportedSchema[] = [];
  const importAll = (batches: ExportedArray[]) => {
    if (batches.length === 1) {
      imported.push(acd.importBatch(batches[0].schema, batches[0].array, { mode, validate, ...from }));
      return;
    }
    // Several batches of one schema: the schema is imported once, as a stream's consumer would.
    const schema = acd.importSchema(batches[0].schema, from);
    schemas.push(schema);
    for (const e of batches) imported.push(acd.importBatch(schema, e.array, { mode, validate, ...from }));
  };
  const exportAll = () => {
    for (let r = 0; r < reps + warm; r++) exported.push(set.batches.map((b) => exporter.exportBatch(b)));
  };
  try {
    if (foreign === null) t.run('acd.export', exportAll, reps + warm);
    else exportAll();
    if (warm) importAll(exported[0]);
    t.run(name, () => {
      for (let r = warm; r < exported.length; r++) importAll(exported[r]);
    }, reps);
    if (check) checkSame(set, imported.slice(0, set.batches.length).map((i) => i.value), `this library (${mode}, validate ${validate}${foreign === null ? '' : ', { from } another module'})`);
  } finally {
    imported.forEach((i) => i.release());
    schemas.forEach((s) => s.release());
    exported.flat().forEach((e) => e.release());
  }
}

/**
 * Exports set.table as an ArrowArrayStream and reads it to the end with
 * importArrayStream in view mode (timed: every get_next exports one batch,
 * every batch is imported); checks once; releases the readers (and with them
 * every batch) and the moved-from stream structs (untimed). As in roundtrip(),
 * a repeated step first runs once untimed.
 */
function streamView(acd: ArrowCDevice, set: BenchSet, t: Timer, check: boolean): void {
  const reps = t.reps('acd.streamView');
  const streams: ExportedStream[] = [];
  const readers: StreamReader[] = [];
  const once = () => {
    const stream = acd.exportArrayStream(set.table);
    streams.push(stream);
    const reader = acd.importArrayStream(stream.ptr, { mode: 'view' });
    readers.push(reader);
    return reader.readAll();
  };
  try {
    if (reps > 1) once();
    const batches = t.run('acd.streamView', () => {
      let got = once();
      for (let r = 1; r < reps; r++) got = once();
      return got;
    }, reps);
    if (check) checkSame(set, batches, 'this library (ArrowArrayStream, view)');
  } finally {
    readers.forEach((r) => r.release());
    streams.forEach((s) => s.release());
  }
}

/**
 * A value as text, nested values (lists, structs, maps: anything iterable)
 * element by element, so that a misread child shows.
 */
function show(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'object' && Symbol.iterator in v) return `[${[...(v as Iterable<unknown>)].map(show).join(',')}]`;
  return String(v);
}

/**
 * A cheap check that an alternative read the same data: the row count, and
 * each column's value at its first, middle and last row of every batch.
 */
function checkSame(set: BenchSet, got: arrow.RecordBatch[], who: string): void {
  const rows = got.reduce((n, b) => n + b.numRows, 0);
  if (rows !== set.rows || got.length !== set.batches.length) {
    throw new Error(`${set.name}: ${who} read ${got.length} batches of ${rows} rows, expected ${set.batches.length} of ${set.rows}`);
  }
  set.batches.forEach((expected, b) => {
    for (let c = 0; c < expected.numCols; c++) {
      for (const row of [0, expected.numRows >> 1, expected.numRows - 1]) {
        const want = show(expected.getChildAt(c)?.get(row));
        const found = show(got[b].getChildAt(c)?.get(row));
        if (want !== found) {
          throw new Error(`${set.name}: ${who} read batch ${b} column ${expected.schema.fields[c].name} row ${row} as ${found}, expected ${want}`);
        }
      }
    }
  });
}
