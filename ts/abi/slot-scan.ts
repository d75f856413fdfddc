// The core's slot scans (csrc/validate/slots.c): the loops of
// ts/validate/raw-shape.ts over every offset and union slot, run in wasm over
// buffers in the core's own memory. A JavaScript loop over a typed array costs
// 1.5 to 2 ns a slot here; these run at a fraction of that (issue 14: an import
// of the nested set spent nine tenths of its time in those loops).

/** The plain wasm exports behind a SlotScan (csrc/validate/bindings.cpp); a linked module may lack them. */
export interface SlotScanExports {
  acd_scan_offsets?: (offsets: number, width: number, from: number, to: number, limit: number) => number;
  acd_scan_union?: (ids: number, offsets: number, from: number, to: number) => number;
  acd_scan_table_address?: () => number;
}

/**
 * Scans of slots in one memory. The caller passes only slots that lie in
 * `buffer` and are aligned for their width: nothing here checks them again.
 */
export interface SlotScan {
  /** The memory's bytes now: a view of this buffer is what the scans can read (by its byteOffset). */
  readonly buffer: ArrayBufferLike;
  /**
   * The first slot i in [from, to] of the width-byte offsets at `address`
   * that is outside [0, limit] or below the one before it; to + 1 when none.
   */
  offsets(address: number, width: 4 | 8, from: number, to: number, limit: number): number;
  /**
   * The first slot i in [from, to) of the int8 type ids at `ids` that is none
   * of `typeIds` (a later child winning a repeated id), or whose dense offset
   * (`offsets` not 0) is outside its child (`lengths` by child, -1: missing);
   * to when none; null when the union has more than 128 children or an id
   * outside the int8 range (the caller's loop scans it then).
   */
  union(ids: number, offsets: number, from: number, to: number, typeIds: readonly number[], lengths: readonly number[]): number | null;
}

/** The most children a scanned union may have (ACD_SCAN_MAX_CHILDREN in csrc/validate/validate.h). */
const MAX_CHILDREN = 128;

/** A SlotScan over `memory` through a module's exports, or null when it lacks any of them. */
export function slotScanOf(memory: WebAssembly.Memory, exports: SlotScanExports): SlotScan | null {
  const { acd_scan_offsets: scanOffsets, acd_scan_union: scanUnion, acd_scan_table_address: tableAddress } = exports;
  if (scanOffsets === undefined || scanUnion === undefined || tableAddress === undefined) return null;
  // struct AcdScanTable: double lengths[128], int8_t type_ids[128], int32_t n_children.
  const table = tableAddress();
  return {
    get buffer() {
      return memory.buffer;
    },
    offsets: (address, width, from, to, limit) => scanOffsets(address, width, from, to, limit),
    union(ids, offsets, from, to, typeIds, lengths) {
      const n = typeIds.length;
      if (n > MAX_CHILDREN || lengths.length !== n) return null;
      for (let k = 0; k < n; k++) if (!(typeIds[k]! >= -128 && typeIds[k]! < 128)) return null;
      const buffer = memory.buffer;
      new Float64Array(buffer, table, n).set(lengths);
      new Int8Array(buffer, table + 8 * MAX_CHILDREN, n).set(typeIds);
      new Int32Array(buffer, table + 9 * MAX_CHILDREN, 1)[0] = n;
      const i = scanUnion(ids, offsets, from, to);
      return i < 0 ? null : i;
    },
  };
}
