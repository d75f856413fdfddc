// The core's slot scans (csrc/validate/slots.c): the loops of
// ts/validate/raw-shape.ts over every offset, union slot and binary view, run
// in wasm. A JavaScript loop over a typed array costs 1.5 to 3.6 ns a slot
// here; these run at 0.05 to 0.17 (1.07 a binary view; issue 14: an import of
// the nested set spent nine tenths of its time in those loops). Slots in the
// core's own memory are scanned where they are; slots anywhere else (another
// module's memory, a copy) are copied into the core's scratch area a part at a
// time first: the copy and the scan cost less than the JavaScript loop. The
// scans write their table and scratch area between checks: a buffer of the
// core's memory that overlaps them (no producer owns them) is refused, or the
// bytes apache-arrow reads could differ from the ones checked.

import { ArrowCDeviceError, EINVAL } from './errors.js';

/** The plain wasm exports behind a SlotScan (csrc/validate/bindings.cpp); a linked module may lack them. */
export interface SlotScanExports {
  acd_scan_offsets?: (offsets: number, width: number, from: number, to: number, limit: number) => number;
  acd_scan_union?: (ids: number, offsets: number, from: number, to: number) => number;
  acd_scan_views?: (views: number, validity: number, from: number, to: number, lengths: number, nVariadic: number) => number;
  acd_scan_table_address?: () => number;
  acd_scan_scratch_address?: () => number;
  acd_scan_scratch_bytes?: () => number;
}

/** Scans of slots, wherever their bytes are. The caller checks that the slots it names are in the views it passes. */
export interface SlotScan {
  /**
   * The first slot i in [from, to] of the width-byte offsets that `entries`
   * starts with (entry 0 at its first byte) that is outside [0, limit] or
   * below the one before it; to + 1 when none.
   */
  offsets(entries: ArrayBufferView, width: 4 | 8, from: number, to: number, limit: number): number;
  /**
   * The first slot i in [from, to) of the int8 type ids `ids` starts with
   * that is none of `typeIds` (a later child winning a repeated id), or
   * whose dense offset (`offsets`, int32, not null) is outside its child
   * (`lengths` by child, -1: missing); to when none; null when the union has
   * more than 128 children or an id outside the int8 range (the caller's
   * loop scans it then).
   */
  union(ids: ArrayBufferView, offsets: ArrayBufferView | null, from: number, to: number, typeIds: readonly number[], lengths: readonly number[]): number | null;
  /**
   * The first slot i in [from, to) of the binary views `views` starts with
   * (16 bytes each) whose bytes lie outside its variadic buffer (`lengths`,
   * bytes, by buffer), when it is not inline (over 12 bytes) and its bit of
   * `validity` (null: every slot) is set; to when none; null when there are
   * more than 2,048 variadic buffers (the caller's loop scans it then).
   */
  views(views: ArrayBufferView, validity: ArrayBufferView | null, from: number, to: number, lengths: readonly number[]): number | null;
}

/** The most children a scanned union may have (ACD_SCAN_MAX_CHILDREN in csrc/validate/validate.h). */
const MAX_CHILDREN = 128;
/** sizeof(struct AcdScanTable): the children's lengths (doubles), their type ids, their count. */
const TABLE_BYTES = 9 * MAX_CHILDREN + 4;

/** A SlotScan over `memory` through a module's exports, or null when it lacks any of them. */
export function slotScanOf(memory: WebAssembly.Memory, exports: SlotScanExports): SlotScan | null {
  const { acd_scan_offsets: scanOffsets, acd_scan_union: scanUnion, acd_scan_views: scanViews, acd_scan_table_address: tableAddress,
    acd_scan_scratch_address: scratchAddress, acd_scan_scratch_bytes: scratchBytes } = exports;
  if (scanOffsets === undefined || scanUnion === undefined || scanViews === undefined || tableAddress === undefined || scratchAddress === undefined
    || scratchBytes === undefined) {
    return null;
  }
  // struct AcdScanTable: double lengths[128], int8_t type_ids[128], int32_t n_children.
  const table = tableAddress();
  const scratch = scratchAddress();
  const room = scratchBytes();
  let bytes = new Uint8Array(0);
  /** The memory's bytes (a new view after it grew). */
  const heap = () => (bytes.buffer === memory.buffer ? bytes : (bytes = new Uint8Array(memory.buffer)));
  /** Throws when a view of the memory overlaps the scans' table or scratch area, which the scans write. */
  const guard = (v: ArrayBufferView | null) => {
    if (v === null || v.buffer !== memory.buffer) return;
    const start = v.byteOffset;
    const end = start + v.byteLength;
    if ((start < table + TABLE_BYTES && end > table) || (start < scratch + room && end > scratch)) {
      throw new ArrowCDeviceError(`slot scan: a buffer at bytes [${start}, ${end}) of the core's memory overlaps its scan area `
        + `(table at ${table}, scratch at ${scratch}, ${room} bytes), which no producer owns`, EINVAL);
    }
  };
  /** Whether v's bytes are in the memory, at an address `align` divides: scanned where they are. */
  const here = (v: ArrayBufferView, align: number) => v.buffer === memory.buffer && v.byteOffset % align === 0;
  /** Bytes [from, to) of v copied to the scratch area at `at` (never past its end: the core's data follows it). */
  const copy = (v: ArrayBufferView, from: number, to: number, at: number) => {
    if (at + to - from > room) throw new Error(`slot scan: ${to - from} bytes at ${at} do not fit the ${room}-byte scratch area`);
    heap().set(new Uint8Array(v.buffer, v.byteOffset + from, to - from), scratch + at);
  };

  return {
    offsets(entries, width, from, to, limit) {
      guard(entries);
      if (here(entries, width)) return scanOffsets(entries.byteOffset, width, from, to, limit);
      // Parts of `per` entries; each after the first starts with the last entry of the one before
      // (checked already), so that the scan compares every entry with the one before it.
      const per = Math.floor(room / width);
      for (let start = from; ;) {
        const end = Math.min(to, start + per - 1);
        copy(entries, start * width, (end + 1) * width, 0);
        const i = scanOffsets(scratch, width, 0, end - start, limit);
        if (i <= end - start) return start + i;
        if (end === to) return to + 1;
        start = end;
      }
    },
    union(ids, offsets, from, to, typeIds, lengths) {
      const n = typeIds.length;
      if (n > MAX_CHILDREN || lengths.length !== n) return null;
      guard(ids);
      guard(offsets);
      for (let k = 0; k < n; k++) if (!(typeIds[k]! >= -128 && typeIds[k]! < 128)) return null;
      const buffer = memory.buffer;
      new Float64Array(buffer, table, n).set(lengths);
      new Int8Array(buffer, table + 8 * MAX_CHILDREN, n).set(typeIds);
      new Int32Array(buffer, table + 9 * MAX_CHILDREN, 1)[0] = n;
      if (here(ids, 1) && (offsets === null || here(offsets, 4))) {
        const i = scanUnion(ids.byteOffset, offsets === null ? 0 : offsets.byteOffset, from, to);
        return i < 0 ? null : i;
      }
      // Parts of `per` slots: their ids, then (dense) their offsets at a 16-byte boundary.
      const per = offsets === null ? room : Math.floor(room / 5 / 16) * 16;
      for (let start = from; start < to; start += per) {
        const end = Math.min(to, start + per);
        copy(ids, start, end, 0);
        if (offsets !== null) copy(offsets, 4 * start, 4 * end, per);
        const i = scanUnion(scratch, offsets === null ? 0 : scratch + per, 0, end - start);
        if (i < 0) return null;
        if (i < end - start) return start + i;
      }
      return to;
    },
    views(views, validity, from, to, lengths) {
      const n = lengths.length;
      if (n > MAX_VARIADIC) return null;
      guard(views);
      guard(validity);
      // The buffers' lengths first in the scratch area, as doubles; in parts, then the views and their validity bytes.
      new Float64Array(memory.buffer, scratch, n).set(lengths);
      const bitmap = validity === null ? 0 : 1;
      if (here(views, 4) && (validity === null || here(validity, 1))) {
        return scanViews(views.byteOffset, validity === null ? 0 : validity.byteOffset, from, to, scratch, n);
      }
      // Parts of VIEWS_PER_PART slots from a multiple of 8, so that a part's validity starts on a byte.
      const at = 8 * MAX_VARIADIC;
      for (let start = from - (from % 8); start < to; start += VIEWS_PER_PART) {
        const end = Math.min(to, start + VIEWS_PER_PART);
        copy(views, 16 * start, 16 * end, at);
        if (validity !== null) copy(validity, start >> 3, (end + 7) >> 3, at + 16 * VIEWS_PER_PART);
        const i = scanViews(scratch + at, bitmap * (scratch + at + 16 * VIEWS_PER_PART), Math.max(from, start) - start, end - start, scratch, n);
        if (i < end - start) return start + i;
      }
      return to;
    },
  };
}

/** The most variadic buffers a scan of binary views takes (their lengths, 16 KB of the scratch area). */
const MAX_VARIADIC = 2048;
/** Binary views in one part of the scratch area (32 KB of them, and their 256 validity bytes, after the lengths). */
const VIEWS_PER_PART = 2048;
