// Reads a wasm binary far enough to know the type of every function that its
// element segments put into the function table, so that a callback index read
// from a C struct can be checked (index in the table, a function, the exact
// signature) before C calls it: a call_indirect of the wrong type traps.
// Used by build.sh on the embedded core (ts/abi/generated/wasm-table.ts), by
// Core.load on a wasmBinary the caller supplies and by Core.attach on the
// binary of a module that linked the core (also its export names and its
// memory and table limits): one parser for all.

/**
 * Each table slot's signature in Emscripten's notation (result, then
 * parameters: 'v' void, 'i' i32, 'j' i64, 'f' f32, 'd' f64; 'vi' is
 * void(i32)), '' for a slot no element segment fills. Slot 0 is NULL.
 */
export type TableSignatures = string[];

const VALTYPE: Record<number, string> = { 0x7f: 'i', 0x7e: 'j', 0x7d: 'f', 0x7c: 'd', 0x7b: 'V', 0x70: 'r', 0x6f: 'r' };

class Reader {
  at = 0;
  constructor(private readonly b: Uint8Array, readonly end = b.length) {}

  byte(): number {
    if (this.at >= this.end) throw new Error(`wasm: unexpected end at byte ${this.at}`);
    return this.b[this.at++];
  }

  /** An unsigned LEB128 of up to 32 bits (the parser reads nothing wider). */
  u32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new Error(`wasm: LEB128 too long at byte ${this.at}`);
  }

  /** A signed LEB128 (i32.const). */
  s32(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = this.byte();
      result |= (b & 0x7f) << shift;
      shift += 7;
    } while ((b & 0x80) !== 0 && shift < 35);
    if (shift < 32 && (b & 0x40) !== 0) result |= -1 << shift;
    return result;
  }

  skip(n: number): void {
    if (this.at + n > this.end) throw new Error(`wasm: unexpected end at byte ${this.at}`);
    this.at += n;
  }

  name(): void {
    this.skip(this.u32());
  }

  /** Limits: the maximum, or null when there is none. */
  limits(): number | null {
    const flags = this.byte();
    this.u32();
    return flags & 1 ? this.u32() : null;
  }

  /** A constant offset expression: i32.const n; end. */
  offset(): number {
    const op = this.byte();
    if (op !== 0x41) throw new Error(`wasm: element offset: expected i32.const, found opcode 0x${op.toString(16)}`);
    const n = this.s32();
    if (this.byte() !== 0x0b) throw new Error('wasm: element offset: expected end');
    return n;
  }

  /** An element expression: ref.func i (the index) or ref.null t (-1). */
  elementExpr(): number {
    const op = this.byte();
    let index = -1;
    if (op === 0xd2) index = this.u32();
    else if (op === 0xd0) this.byte();
    else throw new Error(`wasm: element expression: unsupported opcode 0x${op.toString(16)}`);
    if (this.byte() !== 0x0b) throw new Error('wasm: element expression: expected end');
    return index;
  }
}

/** What Core.attach needs to know of a module's binary besides its table's slots. */
export interface WasmFacts {
  slots: TableSignatures;
  /** The names of its exports. */
  exports: string[];
  /** Memory 0's maximum in 64 KiB pages (null: none declared); undefined when it has no memory. */
  memoryMaximum: number | null | undefined;
  /** Table 0's maximum (null: none declared, so it can grow); undefined when it has no table. */
  tableMaximum: number | null | undefined;
}

/** The signatures of the table slots that a wasm binary's active element segments fill (table 0). */
export function parseTableSignatures(bytes: Uint8Array): TableSignatures {
  return parseWasm(bytes).slots;
}

/** The table's slots, the export names and the limits of a wasm binary. */
export function parseWasm(bytes: Uint8Array): WasmFacts {
  const r = new Reader(bytes);
  if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error('wasm: not a wasm binary (bad magic)');
  r.at = 8;
  const types: string[] = [];
  const funcTypes: number[] = []; // imported functions first, then defined ones
  const slots: TableSignatures = [];
  const exports: string[] = [];
  let memoryMaximum: number | null | undefined;
  let tableMaximum: number | null | undefined;
  while (r.at < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    if (r.at + size > bytes.length) throw new Error(`wasm: unexpected end in section ${id} at byte ${r.at}`);
    const s = new Reader(bytes, r.at + size);
    s.at = r.at;
    if (id === 1) {
      for (let n = s.u32(), i = 0; i < n; i++) {
        if (s.byte() !== 0x60) throw new Error('wasm: type section: expected a function type');
        const params: string[] = [];
        for (let k = s.u32(), j = 0; j < k; j++) params.push(VALTYPE[s.byte()] ?? '?');
        const results: string[] = [];
        for (let k = s.u32(), j = 0; j < k; j++) results.push(VALTYPE[s.byte()] ?? '?');
        types.push((results.length === 0 ? 'v' : results.join('')) + params.join(''));
      }
    } else if (id === 2) {
      for (let n = s.u32(), i = 0; i < n; i++) {
        s.name();
        s.name();
        const kind = s.byte();
        if (kind === 0) funcTypes.push(s.u32());
        else if (kind === 1) { s.byte(); const max = s.limits(); tableMaximum ??= max; }
        else if (kind === 2) { const max = s.limits(); memoryMaximum ??= max; }
        else if (kind === 3) s.skip(2);
        else if (kind === 4) { s.byte(); s.u32(); }
        else throw new Error(`wasm: import section: unknown kind ${kind}`);
      }
    } else if (id === 3) {
      for (let n = s.u32(), i = 0; i < n; i++) funcTypes.push(s.u32());
    } else if (id === 4) {
      for (let n = s.u32(), i = 0; i < n; i++) { s.byte(); const max = s.limits(); tableMaximum ??= max; }
    } else if (id === 5) {
      for (let n = s.u32(), i = 0; i < n; i++) { const max = s.limits(); memoryMaximum ??= max; }
    } else if (id === 7) {
      for (let n = s.u32(), i = 0; i < n; i++) {
        const length = s.u32();
        exports.push(new TextDecoder().decode(bytes.subarray(s.at, s.at + length)));
        s.skip(length);
        s.byte();
        s.u32();
      }
    } else if (id === 9) {
      for (let n = s.u32(), i = 0; i < n; i++) {
        const flags = s.u32();
        const active = (flags & 1) === 0;
        if (flags & 2 && active) s.u32(); // table index (only table 0 exists here)
        const offset = active ? s.offset() : 0;
        if (!active || flags & 2) s.byte(); // elemkind or reftype
        const usesExprs = (flags & 4) !== 0;
        for (let k = s.u32(), j = 0; j < k; j++) {
          const f = usesExprs ? s.elementExpr() : s.u32();
          if (!active) continue;
          const type = f >= 0 ? types[funcTypes[f]] : undefined;
          slots[offset + j] = type ?? '';
        }
      }
    }
    r.at += size;
  }
  for (let i = 0; i < slots.length; i++) slots[i] ??= '';
  return { slots, exports, memoryMaximum, tableMaximum };
}

/** The one place that extracts the binary that Emscripten's SINGLE_FILE glue embeds (base64). */
export function embeddedWasm(glue: string): Uint8Array {
  const marker = 'data:application/octet-stream;base64,';
  const start = glue.indexOf(marker + 'AGFzbQ'); // the binary's magic, not the prefix constant
  if (start < 0) throw new Error('the glue embeds no wasm binary (built without -sSINGLE_FILE?)');
  const end = glue.indexOf(glue[start - 1], start);
  const text = atob(glue.slice(start + marker.length, end));
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
