// The results: one table of medians and ratios, the targets of issue 6
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

export interface Target {
  id: string;
  set: SetName;
  what: string;
  value: number;
  unit: string;
  op: '<=' | '>=';
  limit: number;
  met: boolean;
  /** Set when the figure stands in for one that cannot be measured yet. */
  note?: string;
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
    ipcToWasmOverExport: m('ipc.toWasm') / m('acd.export'),
    importViewOverFloor: m('acd.importView') / m('floor.build'),
    importViewOverFloorData: m('acd.importView') / m('floor.data'),
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
  if (s.unit !== null) {
    const per = (key: string) => (m(key) * 1000) / s.unit!.count;
    d.exportMicrosPerUnit = per('acd.export');
    d.importViewMicrosPerUnit = per('acd.importView');
    d.importCopyMicrosPerUnit = per('acd.importCopy');
    d.floorMicrosPerUnit = per('floor.build');
    d.floorDataMicrosPerUnit = per('floor.data');
    if (ffi) d.ffiViewMicrosPerUnit = per('ffi.view');
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

/** The targets of issue 6, each from ratios of this run. */
export function targets(sets: Partial<Record<SetName, SetReport>>): Target[] {
  const out: Target[] = [];
  const add = (set: SetName, id: string, what: string, key: string, unit: string, op: '<=' | '>=', limit: number, note?: string) => {
    const s = sets[set];
    // Not measured (a skipped optional package): no verdict.
    if (s === undefined || s.derived[key] === undefined) return;
    const value = s.derived[key];
    out.push({ id, set, what, value, unit, op, limit, met: op === '<=' ? value <= limit : value >= limit, ...(note ? { note } : {}) });
  };
  const single: SetName[] = ['mixed', 'narrow', 'wide'];
  const every: SetName[] = ['mixed', 'narrow', 'wide', 'batches'];
  for (const set of single) add(set, 'view-vs-floor', 'import view ÷ floor (Data/Vector + RecordBatch)', 'importViewOverFloor', '×', '<=', 1.5);
  for (const set of single) add(set, 'view-vs-floor-data', 'import view ÷ floor (Data/Vector only)', 'importViewOverFloorData', '×', '<=', 1.5);
  for (const set of single) add(set, 'view-vs-ffi', 'arrow-js-ffi view ÷ import view', 'ffiViewOverImportView', '×', '>=', 5);
  for (const set of every) add(set, 'copy-vs-ffi', 'arrow-js-ffi copy ÷ import copy', 'ffiCopyOverImportCopy', '×', '>=', 1.5);
  for (const set of every) add(set, 'export-vs-memcpy', 'export bandwidth ÷ memcpy bandwidth', 'exportShareOfMemcpy', '×', '>=', 0.5);
  for (const set of every) add(set, 'export-vs-ipc', 'IPC path ÷ export', 'ipcToWasmOverExport', '×', '>=', 5);
  add('wide', 'wide-view-per-column', 'import view per column', 'importViewMicrosPerUnit', 'µs', '<=', 5);
  add('wide', 'wide-copy-per-column', 'import copy per column', 'importCopyMicrosPerUnit', 'µs', '<=', 5);
  add('batches', 'stream-overhead', 'stream overhead per batch: (stream − export and import view one by one) ÷ batches',
    'streamOverheadMicrosPerBatch', 'µs', '<=', 10);
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
    const met = t.note ? `${t.met ? 'yes' : 'no'} (${t.note})` : t.met ? 'yes' : '**no**';
    lines.push(`| ${t.what} | ${t.set} | ${value} | ${limit} | ${met} |`);
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
