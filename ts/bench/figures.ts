// What each measured figure is, and which of this library's figures it is
// compared with (the ratio column: its median ÷ the reference's median).

import type { SetName } from './data.js';

export interface Figure {
  key: string;
  label: string;
  /** This library's figure doing the same job; the ratio is median ÷ reference median. */
  ref: string;
  /** Whether the step moves the buffer bytes (a GB/s figure makes sense). */
  moves: boolean;
  /** The sets it is measured on; every set when absent. */
  sets?: SetName[];
}

/** The sets of issue 14's targets: the foreign-module figures are measured on these. */
export const TARGET_SETS: SetName[] = ['mixed', 'narrow', 'wide', 'batches'];

/** Whether a figure is measured on a set. */
export const measuredOn = (f: Figure, set: SetName): boolean => f.sets === undefined || f.sets.includes(set);

export const FIGURES: Figure[] = [
  { key: 'acd.export', label: 'this library: export (apache-arrow → C structs in wasm)', ref: 'acd.export', moves: true },
  { key: 'floor.memcpyIn', label: 'floor: one TypedArray.set of all buffer bytes into wasm', ref: 'acd.export', moves: true },
  { key: 'floor.buffersIn', label: "floor: the export's copies alone (one set per buffer into new wasm memory)", ref: 'acd.export', moves: true },
  { key: 'ipc.toWasm', label: 'IPC: tableToIPC + copy of the bytes into wasm', ref: 'acd.export', moves: true },
  { key: 'ipc.write', label: 'IPC step: tableToIPC', ref: 'acd.export', moves: true },
  { key: 'ipc.copyIn', label: 'IPC step: copy of the IPC bytes into wasm', ref: 'acd.export', moves: true },
  { key: 'acd.importView', label: 'this library: import, view', ref: 'acd.importView', moves: false },
  { key: 'acd.importViewUnvalidated', label: "this library: import, view, validate 'none'", ref: 'acd.importView', moves: false },
  { key: 'floor.data', label: 'floor: Data/Vector objects over existing views', ref: 'acd.importView', moves: false },
  { key: 'floor.build', label: 'floor: the same, in apache-arrow RecordBatches', ref: 'acd.importView', moves: false },
  { key: 'floor.structs', label: "floor: reading the fresh exports' struct trees (every word, pointer array entry, format and name)", ref: 'acd.importView', moves: false },
  { key: 'ffi.view', label: 'arrow-js-ffi: parseTable, view', ref: 'acd.importView', moves: false },
  { key: 'ipc.read', label: 'IPC: tableFromIPC over the bytes in wasm (views)', ref: 'acd.importView', moves: false },
  { key: 'acd.importCopy', label: 'this library: import, copy', ref: 'acd.importCopy', moves: true },
  { key: 'floor.memcpyOut', label: 'floor: one slice of all buffer bytes out of wasm', ref: 'acd.importCopy', moves: true },
  { key: 'ffi.copy', label: 'arrow-js-ffi: parseTable, copy', ref: 'acd.importCopy', moves: true },
  // Imports { from } a second instance of the core, loaded separately: another
  // wasm module with its own memory and function table, which exported the set.
  { key: 'foreign.importView', label: 'this library: import, view, { from } another module (a second core)', ref: 'acd.importView', moves: false, sets: TARGET_SETS },
  { key: 'foreign.importCopy', label: 'this library: import, copy, { from } another module (a second core)', ref: 'acd.importCopy', moves: true, sets: TARGET_SETS },
  { key: 'floor.foreignMemcpyOut', label: "floor: one slice of all buffer bytes out of the other module's memory", ref: 'foreign.importCopy', moves: true, sets: TARGET_SETS },
  { key: 'acd.roundtripView', label: 'this library: export + import view', ref: 'acd.roundtripView', moves: true },
  { key: 'ipc.total', label: 'IPC: tableToIPC + copy + tableFromIPC', ref: 'acd.roundtripView', moves: true },
  // A stream of a many-batches table, exported lazily (get_next exports the
  // next batch) and drained by importArrayStream in view mode.
  { key: 'acd.streamView', label: 'this library: ArrowArrayStream export + import (view)', ref: 'acd.roundtripView', moves: true, sets: ['batches', 'stream'] },
];

export interface Pending {
  set: SetName;
  key: string;
  label: string;
  reason: string;
}

/** Figures that cannot be measured yet, shown as pending rows (never as numbers); none today. */
export const PENDING: Pending[] = [];
