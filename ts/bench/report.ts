// The results: one table of medians and ratios, the targets of issue 14
// checked against ratios of the same run, and the JSON document.

import type { SetName } from './data.js';
import { FIGURES, measuredOn, type Pending } from './figures.js';
import type { Bundles } from './bundles.js';
import type { Sizes } from './sizes.js';
import type { Timing } from './timing.js';

export interface SetReport {
  shape: string;
  rows: number;
  columns: number;
  batches: number;
  bytes: number;
  unit: { name: 'column' | 'batch'; count: number } | null;
  figures: Record<string, Timing>;
  /** Why arrow-js-ffi's figures are absent on this set although it was imported: it threw on or misread the set. */
  ffiCannotRead?: string;
  /** Ratios and rates computed from the medians above. */
  derived: Record<string, number>;
}

/** A target and the limit it sets on each set it applies to. */
export interface TargetSpec {
  /** Stable: the same id in every report. */
  id: string;
  what: string;
  /** The derived figure it checks. */
  key: string;
  unit: '×' | 'µs';
  op: '<=' | '>=';
  limits: Partial<Record<SetName, number>>;
  /** The issue that set it: 14, or 6 for an earlier target still worth reporting. */
  issue: 14 | 6;
}

/** A target's verdict on one set: measured, never assumed. */
export interface Target {
  id: string;
  set: SetName;
  what: string;
  value: number;
  unit: string;
  op: '<=' | '>=';
  limit: number;
  met: boolean;
  issue: 14 | 6;
}

/** An optional package that could not be imported, and the figures left out with it. */
export interface Skipped {
  package: string;
  /** Why the import failed (its error's first line). */
  reason: string;
  figures: string[];
}

export interface Report {
  tool: string;
  date: string;
  options: { quick: boolean; scale: number; warmup: number; samples: number; gcBetweenSets: boolean; seed: number };
  /** Wall-clock time of the whole run. */
  seconds: number;
  machine: Record<string, string | number>;
  sizes: Sizes;
  /** A user's bundle of each entry (./bundles.ts). */
  bundles: Bundles;
  sets: Partial<Record<SetName, SetReport>>;
  targets: Target[];
  pending: Pending[];
  /** Optional packages absent: their rows and targets are not in this report. */
  skipped: Skipped[];
}

const median = (s: SetReport, key: string) => {
  const t = s.figures[key];
  if (t === undefined) throw new Error(`no figure ${key}`);
  return t.median;
};

/** Rates and ratios of one set, from its medians (without the ratios of a skipped figure). */
export function derive(s: SetReport): Record<string, number> {
  const m = (key: string) => median(s, key);
  const ffi = s.figures['ffi.view'] !== undefined && s.figures['ffi.copy'] !== undefined;
  const gbps = (key: string) => s.bytes / (m(key) * 1e6);
  const d: Record<string, number> = {
    exportGBps: gbps('acd.export'),
    memcpyInGBps: gbps('floor.memcpyIn'),
    importCopyGBps: gbps('acd.importCopy'),
    memcpyOutGBps: gbps('floor.memcpyOut'),
    exportShareOfMemcpy: m('floor.memcpyIn') / m('acd.export'),
    // How much of an export is its copies (one set per buffer into new memory, as it makes them).
    buffersInShareOfExport: m('floor.buffersIn') / m('acd.export'),
    importCopyOverMemcpyOut: m('acd.importCopy') / m('floor.memcpyOut'),
    ipcToWasmOverExport: m('ipc.toWasm') / m('acd.export'),
    importViewOverFloor: m('acd.importView') / m('floor.build'),
    importViewOverFloorData: m('acd.importView') / m('floor.data'),
    // Against what any importer does at least: read the structs, then build the Data objects.
    importViewOverStructsAndData: m('acd.importView') / (m('floor.structs') + m('floor.data')),
    ipcReadOverImportView: m('ipc.read') / m('acd.importView'),
    ipcTotalOverRoundtripView: m('ipc.total') / m('acd.roundtripView'),
  };
  if (ffi) {
    // The best ratios any importer building the same apache-arrow objects could reach:
    d.ffiViewOverFloor = m('ffi.view') / m('floor.build');
    d.ffiCopyOverMemcpyOut = m('ffi.copy') / m('floor.memcpyOut');
    d.ffiViewOverImportView = m('ffi.view') / m('acd.importView');
    d.ffiCopyOverImportCopy = m('ffi.copy') / m('acd.importCopy');
  }
  if (s.figures['foreign.importView'] !== undefined) {
    // Imports { from } a second core: against the same import of this core's own memory,
    // and the copy against one slice of the bytes out of the other module's memory.
    d.foreignViewOverImportView = m('foreign.importView') / m('acd.importView');
    d.foreignCopyOverImportCopy = m('foreign.importCopy') / m('acd.importCopy');
    d.foreignCopyOverForeignMemcpyOut = m('foreign.importCopy') / m('floor.foreignMemcpyOut');
    d.foreignCopyGBps = gbps('foreign.importCopy');
    d.foreignMemcpyOutGBps = gbps('floor.foreignMemcpyOut');
  }
  if (s.unit !== null) {
    const per = (key: string) => (m(key) * 1000) / s.unit!.count;
    d.exportMicrosPerUnit = per('acd.export');
    d.buffersInMicrosPerUnit = per('floor.buffersIn');
    d.importViewMicrosPerUnit = per('acd.importView');
    d.importCopyMicrosPerUnit = per('acd.importCopy');
    d.floorMicrosPerUnit = per('floor.build');
    d.floorDataMicrosPerUnit = per('floor.data');
    if (ffi) d.ffiViewMicrosPerUnit = per('ffi.view');
    if (s.figures['foreign.importView'] !== undefined) d.foreignViewMicrosPerUnit = per('foreign.importView');
  }
  if (s.figures['acd.streamView'] !== undefined) {
    // What the stream adds per batch to exporting and importing the same batches
    // one by one (negative when the stream is the cheaper path).
    d.streamViewOverRoundtripView = m('acd.streamView') / m('acd.roundtripView');
    d.streamOverheadMicrosPerBatch = ((m('acd.streamView') - m('acd.roundtripView')) * 1000) / s.batches;
  }
  return d;
}

/**
 * What one more batch costs, from the many-batches set and the mixed set (the
 * same rows and schema in one batch): (t_many − t_one) / (batches − 1), in µs.
 */
export function perBatchOverhead(many: SetReport, one: SetReport): Record<string, number> {
  const n = many.batches;
  const over = (key: string) => ((median(many, key) - median(one, key)) * 1000) / (n - 1);
  return {
    exportOverheadMicrosPerBatch: over('acd.export'),
    importViewOverheadMicrosPerBatch: over('acd.importView'),
    importCopyOverheadMicrosPerBatch: over('acd.importCopy'),
    roundtripViewOverheadMicrosPerBatch: over('acd.roundtripView'),
  };
}

const every = (limit: number): Partial<Record<SetName, number>> => ({ mixed: limit, narrow: limit, wide: limit, batches: limit });

/**
 * The targets of issue 14 on its four sets (ratios of medians of one run),
 * and one of issue 6 still meaningful. A node of the wide set is one int32
 * column: its ArrowSchema and ArrowArray (the root struct's share is spread
 * over the columns, so the figure is the time ÷ the number of columns).
 */
export const TARGETS: TargetSpec[] = [
  { id: 'ffi-view-over-import-view', what: 'arrow-js-ffi view ÷ import view', key: 'ffiViewOverImportView', unit: '×', op: '>=', limits: every(1.5), issue: 14 },
  { id: 'import-view-over-floor-data', what: 'import view ÷ Data/Vector floor', key: 'importViewOverFloorData', unit: '×', op: '<=', limits: every(3), issue: 14 },
  { id: 'ffi-copy-over-import-copy', what: 'arrow-js-ffi copy ÷ import copy', key: 'ffiCopyOverImportCopy', unit: '×', op: '>=', limits: every(1.2), issue: 14 },
  { id: 'import-copy-over-memcpy-out', what: 'import copy ÷ copy-out floor', key: 'importCopyOverMemcpyOut', unit: '×', op: '<=', limits: { mixed: 1.1, narrow: 1.1 }, issue: 14 },
  { id: 'export-share-of-memcpy', what: 'export bandwidth ÷ memcpy bandwidth (memcpy-in floor ÷ export)', key: 'exportShareOfMemcpy', unit: '×', op: '>=',
    limits: { mixed: 0.7, narrow: 0.7, wide: 0.3, batches: 0.5 }, issue: 14 },
  { id: 'ipc-over-export', what: 'IPC path (tableToIPC + copy into wasm) ÷ export', key: 'ipcToWasmOverExport', unit: '×', op: '>=', limits: every(5), issue: 14 },
  { id: 'import-view-per-node', what: "import view per node (a node: one column's ArrowSchema + ArrowArray; time ÷ columns, the root's share included)", key: 'importViewMicrosPerUnit', unit: 'µs', op: '<=',
    limits: { wide: 1 }, issue: 14 },
  { id: 'export-per-node', what: "export per node (a node: one column's ArrowSchema + ArrowArray; time ÷ columns, the root's share included)", key: 'exportMicrosPerUnit', unit: 'µs', op: '<=',
    limits: { wide: 0.6 }, issue: 14 },
  { id: 'foreign-view-over-import-view', what: 'import view { from } another module ÷ import view of own memory', key: 'foreignViewOverImportView', unit: '×', op: '<=',
    limits: every(1.2), issue: 14 },
  { id: 'foreign-copy-over-memcpy-out', what: "import copy { from } another module ÷ its copy-out floor (a slice out of that module's memory)",
    key: 'foreignCopyOverForeignMemcpyOut', unit: '×', op: '<=', limits: every(1.2), issue: 14 },
  { id: 'stream-overhead', what: 'stream overhead per batch: (stream − export and import view one by one) ÷ batches', key: 'streamOverheadMicrosPerBatch', unit: 'µs', op: '<=',
    limits: { batches: 10 }, issue: 6 },
];

/** Every target's verdict on every set it applies to, from the derived figures of this run. */
export function targets(sets: Partial<Record<SetName, SetReport>>): Target[] {
  const out: Target[] = [];
  for (const spec of TARGETS) {
    for (const [set, limit] of Object.entries(spec.limits) as [SetName, number][]) {
      const value = sets[set]?.derived[spec.key];
      // Not measured (a skipped optional package, or a set not run): no verdict.
      if (value === undefined) continue;
      const { id, what, unit, op, issue } = spec;
      out.push({ id, set, what, value, unit, op, limit, met: op === '<=' ? value <= limit : value >= limit, issue });
    }
  }
  return out;
}

// ---- text ---------------------------------------------------------------------

const SET_ORDER: SetName[] = ['mixed', 'narrow', 'wide', 'batches', 'nested', 'stream'];

/** The table: every figure of every set, its median, rate and ratio to this library. */
export function resultTable(r: Report): string[] {
  const lines = [
    '| Set | Operation | Median | GB/s | Per unit | ÷ this library |',
    '|---|---|--:|--:|--:|--:|',
  ];
  for (const name of SET_ORDER) {
    const s = r.sets[name];
    if (s === undefined) continue;
    for (const f of FIGURES) {
      if (!measuredOn(f, name)) continue;
      const skip = r.skipped.find((x) => x.figures.includes(f.key));
      if (skip !== undefined) {
        lines.push(`| ${name} | ${f.label} | — | | | skipped: ${skip.package} could not be imported (see the note) |`);
        continue;
      }
      if (f.key.startsWith('ffi.') && s.ffiCannotRead !== undefined) {
        lines.push(`| ${name} | ${f.label} | — | | | skipped: arrow-js-ffi cannot read this set (${s.ffiCannotRead.split('|').join('\\|')}) |`);
        continue;
      }
      const t = s.figures[f.key];
      const ref = s.figures[f.ref];
      const ratio = f.key === f.ref ? '1' : `${fixed(t.median / ref.median)}×`;
      const gbps = f.moves ? fixed(s.bytes / (t.median * 1e6)) : '';
      const unit = s.unit === null ? '' : `${fixed((t.median * 1000) / s.unit.count)} µs/${s.unit.name}`;
      lines.push(`| ${name} | ${f.label} | ${ms(t.median)} | ${gbps} | ${unit} | ${ratio} |`);
    }
    for (const p of r.pending.filter((x) => x.set === name)) lines.push(`| ${name} | ${p.label} | — | | | ${p.reason} |`);
  }
  return lines;
}

export function setsTable(r: Report): string[] {
  const lines = ['| Set | Shape | Batches | Buffer bytes |', '|---|---|--:|--:|'];
  for (const name of SET_ORDER) {
    const s = r.sets[name];
    if (s !== undefined) lines.push(`| ${name} | ${s.shape} | ${s.batches} | ${(s.bytes / 1e6).toFixed(1)} MB |`);
  }
  return lines;
}

export function targetTable(r: Report): string[] {
  const lines = ['| Target | Set | Measured | Required | Met |', '|---|---|--:|--:|---|'];
  for (const t of r.targets) {
    const value = t.unit === 'µs' ? `${fixed(t.value)} µs` : `${fixed(t.value)}×`;
    const limit = `${t.op === '<=' ? '≤' : '≥'} ${t.limit}${t.unit === 'µs' ? ' µs' : '×'}`;
    const what = t.issue === 14 ? t.what : `${t.what} (issue ${t.issue}'s; not an issue-14 target)`;
    lines.push(`| ${what} | ${t.set} | ${value} | ${limit} | ${t.met ? 'yes' : '**no**'} |`);
  }
  return lines;
}

export function sizeTable(sizes: Sizes): string[] {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const row = (what: string, s: { raw: number; gzip: number } | null) =>
    `| ${what} | ${s === null ? 'n/a (no build/core/core.mjs)' : kb(s.raw)} | ${s === null ? '' : kb(s.gzip)} |`;
  return [
    '| Built file | Raw | Gzipped |',
    '|---|--:|--:|',
    row('wasm core (decoded from the bundle)', sizes.wasm),
    row('Emscripten glue (build/core/core.mjs without the wasm)', sizes.glue),
    row('dist/index.mjs and its chunks without the wasm (glue + facade)', sizes.js),
    row('dist/index.mjs and its chunks as shipped (wasm embedded as base64)', sizes.bundle),
  ];
}

function ms(x: number): string {
  if (x >= 100) return `${x.toFixed(0)} ms`;
  if (x >= 1) return `${x.toFixed(2)} ms`;
  return `${(x * 1000).toFixed(x >= 0.1 ? 0 : 1)} µs`;
}

function fixed(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
}
