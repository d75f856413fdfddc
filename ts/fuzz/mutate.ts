// Mutations of struct trees in wasm memory: a location (a struct field at any
// depth, a pointer array entry, a word or byte of a buffer, string or
// metadata) and a value (random, 0, -1, off by one, huge, int32/int64
// extremes, a pointer to another live struct, a freed block, the middle of a
// buffer, the end of memory, misaligned; for callbacks, indices outside the
// table or of functions of another signature). Every mutation is described
// in one line, so that a reproducer says what it did.

import type { Core } from '../abi/core.js';
import type { StructName } from '../abi/layout-types.js';
import type { Arena } from './arena.js';
import type { Prng } from './prng.js';

export type LocationKind = 'ptr' | 'fnptr' | 'i64' | 'i32' | 'byte' | 'word16' | 'word32' | 'word64';

export interface Location {
  readonly addr: number;
  readonly kind: LocationKind;
  readonly what: string;
  /** Function pointers: the arity of the expected signature. */
  readonly arity?: number;
}

/** Arity of each callback field (the wasm signature's parameter count). */
const CALLBACK_ARITY: Record<string, number> = {
  release: 1, get_schema: 2, get_next: 2, get_last_error: 1, extract_data: 2, request: 2, cancel: 1,
  on_schema: 2, on_next_task: 3, on_error: 4,
};

/** Every field of a struct at addr, as locations ('private_data' of our own producers excluded by the caller). */
export function structLocations(core: Core, struct: StructName, addr: number, path: string, skip: readonly string[] = []): Location[] {
  const out: Location[] = [];
  for (const [name, f] of Object.entries(core.structs.layout.structs[struct].fields)) {
    if (skip.includes(name) || f.kind === 'struct') continue;
    const kind: LocationKind = f.kind === 'fnptr' ? 'fnptr' : f.kind === 'ptr' ? 'ptr' : f.kind === 'i32' ? 'i32' : 'i64';
    out.push({ addr: addr + f.offset, kind, what: `${path}.${name}`, arity: CALLBACK_ARITY[name] });
  }
  return out;
}

/** Every mutable location of an arena. */
export function arenaLocations(core: Core, arena: Arena): Location[] {
  const out: Location[] = [];
  for (const n of arena.nodes) {
    // The embedded ArrowArray of a device array is a node of its own.
    out.push(...structLocations(core, n.struct, n.addr, n.path, n.struct === 'ArrowDeviceArray' ? ['array'] : ['private_data']));
  }
  for (const r of arena.regions) {
    if (r.kind === 'pointers') {
      for (let i = 0; i * 4 < r.size; i++) out.push({ addr: r.addr + i * 4, kind: 'ptr', what: `${r.path}[${i}]` });
    } else if (r.kind === 'string') {
      out.push(withSize({ addr: r.addr, kind: 'byte', what: `${r.path} bytes` }, r.size));
    } else {
      const kind: LocationKind = r.width === 8 ? 'word64' : r.width === 4 ? 'word32' : r.width === 2 ? 'word16' : 'byte';
      out.push(withSize({ addr: r.addr, kind, what: `${r.path} bytes` }, r.size));
    }
  }
  return out;
}

/** What a run's pointer mutations may point at. */
export interface Targets {
  /** Live structs of this run and of other arenas. */
  structs: readonly number[];
  /** Buffers and other byte regions (a mutation points into their middle). */
  regions: readonly { addr: number; size: number }[];
  /** Table indices of the fuzzer's own callbacks (harmless for any struct). */
  ownCallbacks: readonly number[];
}

const INT64_EXTREMES = [0n, -1n, 1n, 0x7fffffffn, -0x80000000n, 0xffffffffn, 0x100000000n, 1n << 53n, 0x7fffffffffffffffn, -0x8000000000000000n];

/** Applies one mutation at a random location; returns its description. */
export function mutate(core: Core, rng: Prng, locations: readonly Location[], targets: Targets): string {
  const loc = rng.pick(locations);
  const v = core.view;
  // Byte regions: a random aligned word or byte inside them.
  if (loc.kind === 'byte' || loc.kind.startsWith('word')) return mutateBytes(core, rng, loc);
  if (loc.kind === 'fnptr') {
    const value = callbackValue(core, rng, loc.arity ?? 1, targets);
    v.setUint32(loc.addr, value.value, true);
    return `${loc.what} = ${value.what}`;
  }
  if (loc.kind === 'ptr') {
    const cur = v.getUint32(loc.addr, true);
    const value = pointerValue(core, rng, cur, targets);
    v.setUint32(loc.addr, value.value >>> 0, true);
    return `${loc.what} = ${value.what}`;
  }
  const cur = loc.kind === 'i64' ? v.getBigInt64(loc.addr, true) : BigInt(v.getInt32(loc.addr, true));
  const choice = rng.int(6);
  let value: bigint;
  let what: string;
  switch (choice) {
    case 0: value = cur + 1n; what = 'off by +1'; break;
    case 1: value = cur - 1n; what = 'off by -1'; break;
    case 2: value = rng.pick(INT64_EXTREMES); what = `${value}`; break;
    case 3: value = rng.i64(); what = 'random'; break;
    case 4: value = cur * BigInt(2 + rng.int(1000)); what = 'multiplied'; break;
    default: value = BigInt(rng.int(64)); what = 'small'; break;
  }
  if (loc.kind === 'i64') v.setBigInt64(loc.addr, BigInt.asIntN(64, value), true);
  else v.setInt32(loc.addr, Number(BigInt.asIntN(32, value)), true);
  return `${loc.what} = ${loc.kind === 'i64' ? BigInt.asIntN(64, value) : BigInt.asIntN(32, value)} (${what}, was ${cur})`;
}

function mutateBytes(core: Core, rng: Prng, loc: Location): string {
  const region = regionSize(loc);
  const width = loc.kind === 'word64' ? 8 : loc.kind === 'word32' ? 4 : loc.kind === 'word16' ? 2 : 1;
  const slots = Math.max(1, Math.floor(region / width));
  const i = rng.int(slots);
  const at = loc.addr + i * width;
  const v = core.view;
  const cur = width === 8 ? v.getBigInt64(at, true) : width === 4 ? BigInt(v.getInt32(at, true)) : width === 2 ? BigInt(v.getInt16(at, true)) : BigInt(v.getUint8(at));
  const pick = rng.int(5);
  const value = pick === 0 ? cur + 1n : pick === 1 ? cur - 1n : pick === 2 ? rng.pick(INT64_EXTREMES) : pick === 3 ? rng.i64() : BigInt(rng.int(256)) - 128n;
  if (width === 8) v.setBigInt64(at, BigInt.asIntN(64, value), true);
  else if (width === 4) v.setInt32(at, Number(BigInt.asIntN(32, value)), true);
  else if (width === 2) v.setInt16(at, Number(BigInt.asIntN(16, value)), true);
  else v.setUint8(at, Number(BigInt.asUintN(8, value)));
  return `${loc.what}[${i}] (${width}-byte word) = ${width === 1 ? BigInt.asUintN(8, value) : BigInt.asIntN(width * 8, value)} (was ${cur})`;
}

// Byte locations carry their region size in the registry below (set by regionLocations).
const sizes = new WeakMap<Location, number>();
function regionSize(loc: Location): number {
  return sizes.get(loc) ?? 1;
}

/** Byte-region locations with their sizes (buffers, strings, metadata, messages). */
export function withSize(loc: Location, size: number): Location {
  sizes.set(loc, size);
  return loc;
}

function pointerValue(core: Core, rng: Prng, cur: number, targets: Targets): { value: number; what: string } {
  const memSize = core.memory.buffer.byteLength;
  switch (rng.int(10)) {
    case 0: return { value: 0, what: 'NULL' };
    case 1: return { value: 0xffffffff, what: '-1' };
    case 2: { const d = rng.pick([1, 2, 3, 4, 8, -1, -4, -8]); return { value: cur + d, what: `${d > 0 ? '+' : ''}${d} (misaligned or next)` }; }
    case 3: { const k = rng.pick([0, 1, 4, 8, 16, 48]); return { value: memSize - k, what: `memory end - ${k}` }; }
    case 4: { const s = rng.pick(targets.structs); return { value: s, what: 'another live struct' }; }
    case 5: {
      // A block freed just now: the import's own allocations may reuse it.
      const p = core.alloc(16 + rng.int(64));
      core.free(p);
      return { value: p, what: 'a freed block' };
    }
    case 6: {
      const r = rng.pick(targets.regions);
      return { value: r.addr + Math.floor(r.size / 2) + rng.int(2), what: 'the middle of another buffer' };
    }
    case 7: return { value: rng.pick([0x80000000, 0xfffffff0, memSize, memSize + 4096]), what: 'huge' };
    case 8: return { value: 1 + rng.int(1024), what: 'a low address' };
    default: return { value: rng.u32(), what: 'random' };
  }
}

/** A table index that is not a function of the expected signature, or one of the fuzzer's own (harmless) callbacks. */
function callbackValue(core: Core, rng: Prng, arity: number, targets: Targets): { value: number; what: string } {
  const table = tableOf(core);
  switch (rng.int(7)) {
    case 0: return { value: 0, what: 'NULL' };
    case 1: return { value: 0xffffffff, what: '-1' };
    case 2: return { value: table.length + rng.int(4), what: 'past the table end' };
    case 3: return { value: rng.pick(targets.ownCallbacks), what: "another struct's callback" };
    case 4: return { value: 0x80000000 + rng.int(1000), what: 'huge' };
    default: {
      // A function of another arity (the call would be a signature mismatch), or an empty slot.
      for (let tries = 0; tries < 20; tries++) {
        const i = 1 + rng.int(table.length - 1);
        const f = table.get(i) as ((...a: unknown[]) => unknown) | null;
        if (f === null || f.length !== arity) return { value: i, what: `table[${i}] (${f === null ? 'empty' : `a function of ${f.length} arguments`})` };
      }
      return { value: table.length, what: 'past the table end' };
    }
  }
}

/** The core's function table (the fuzzer reaches into the module; the library never does this). */
export function tableOf(core: Core): WebAssembly.Table {
  return (core as unknown as { m: { asm: { __indirect_function_table: WebAssembly.Table } } }).m.asm.__indirect_function_table;
}
