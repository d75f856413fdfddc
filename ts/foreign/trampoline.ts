// Calling a function pointer of another wasm module, checked by the engine.
// JS cannot tell the signature of a function in a foreign table (no type
// reflection in Node 20), and calling it from JS with the wrong arguments
// would run it anyway. So the call goes through a tiny module built here at
// run time, which imports that table and does call_indirect with the
// expected type: an index that is out of range, empty or of another
// signature traps at the call_indirect, before any foreign code runs, and
// the trap is in this module, not in the foreign one.

import { ArrowCDeviceError, EINVAL, EIO } from '../abi/errors.js';

/**
 * A signature in Emscripten's notation: the result ('v' none, 'i' i32, 'j'
 * i64), then the parameters ('i' i32, 'j' i64, a BigInt in JS).
 */
export type Signature = string;

const VALUE_TYPE: Readonly<Record<string, number>> = { i: 0x7f, j: 0x7e };

function valueTypes(letters: string, what: string): number[] {
  return [...letters].map((c) => {
    const t = VALUE_TYPE[c];
    if (t === undefined) throw new Error(`signature ${what}: '${c}' is not i or j`);
    return t;
  });
}

/** LEB128 of an unsigned integer. */
function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => { const b = [...new TextEncoder().encode(s)]; return [...uleb(b.length), ...b]; };
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

/**
 * The binary of a module that imports env.table (funcref) and exports, for
 * each signature s, a function s(fn, ...args) that calls table[fn] as s.
 */
/** The function type of a signature, with `extra` i32 parameters first. */
function funcType(s: Signature, extra = 0): number[] {
  const result = s[0] === 'v' ? [] : valueTypes(s[0], s);
  const params = [...new Array<number>(extra).fill(0x7f), ...valueTypes(s.slice(1), s)];
  return [0x60, ...vec(params.map((p) => [p])), ...vec(result.map((r) => [r]))];
}

/** The encoders, for the other run-time modules (ts/foreign/callbacks.ts). */
export const trampolineBinaryParts = { type: funcType, uleb, name, section, vec };

export function trampolineBinary(signatures: readonly Signature[]): Uint8Array<ArrayBuffer> {
  const types: number[][] = [];
  const code: number[][] = [];
  signatures.forEach((s, k) => {
    const params = valueTypes(s.slice(1), s);
    types.push(funcType(s));     // target: 2k
    types.push(funcType(s, 1));  // trampoline: 2k + 1 (fn first)
    const body = [0x00];                                            // no locals
    for (let i = 0; i < params.length; i++) body.push(0x20, ...uleb(i + 1)); // local.get each argument
    body.push(0x20, 0x00);                                          // local.get fn
    body.push(0x11, ...uleb(2 * k), 0x00);                          // call_indirect (type 2k) table 0
    body.push(0x0b);                                                // end
    code.push([...uleb(body.length), ...body]);
  });
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...section(2, vec([[...name('env'), ...name('table'), 0x01, 0x70, 0x00, 0x00]])), // table funcref, min 0
    ...section(3, vec(signatures.map((_, k) => uleb(2 * k + 1)))),
    ...section(7, vec(signatures.map((s, k) => [...name(s), 0x00, ...uleb(k)]))),
    ...section(10, vec(code)),
    // The name section: frames of this module say "acd-trampoline" in a stack trace.
    ...section(0, [...name('name'), ...section(0, name(MODULE_NAME)),
      ...section(1, vec(signatures.map((s, k) => [...uleb(k), ...name(s)])))]),
  ];
  return new Uint8Array(bytes);
}

const MODULE_NAME = 'acd-trampoline';

/**
 * Whether a trap happened at the trampoline's own call_indirect (the engine
 * refused the call: nothing ran) rather than inside the callee: the top wasm
 * frame of its stack is the trampoline's.
 */
function refusedHere(e: Error): boolean {
  const top = (e.stack ?? '').split('\n').find((l) => l.includes('wasm://') || l.includes('wasm-function'));
  return top !== undefined && top.includes(MODULE_NAME);
}

/** Checked calls into one table, one trampoline module per table. */
export class Trampolines {
  readonly #exports: Record<string, (...args: (number | bigint)[]) => unknown>;

  constructor(readonly table: WebAssembly.Table, readonly signatures: readonly Signature[]) {
    const module = new WebAssembly.Module(trampolineBinary(signatures));
    const instance = new WebAssembly.Instance(module, { env: { table } });
    this.#exports = instance.exports as unknown as Record<string, (...args: (number | bigint)[]) => unknown>;
  }

  /**
   * Calls table[index] as `signature` with args. A call the engine refuses
   * (no such slot, an empty one, another signature) is EINVAL and ran
   * nothing; a trap inside the callee is EIO (the other module may be
   * broken after it; this library's core is not).
   */
  call(index: number, signature: Signature, args: readonly (number | bigint)[], what: string, owner: string): unknown {
    const f = this.#exports[signature];
    if (f === undefined) throw new Error(`trampolines: no signature ${signature} (have ${this.signatures.join(', ')})`);
    if (!Number.isInteger(index) || index <= 0 || index >= this.table.length || this.table.get(index) === null) {
      throw new ArrowCDeviceError(`${what}: ${index} is not a function in ${owner}'s table of ${this.table.length} slots`, EINVAL);
    }
    try {
      return f(index, ...args);
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      if (refusedHere(e)) {
        throw new ArrowCDeviceError(`${what}: function pointer ${index} is not a function of signature '${signature}' in ${owner}'s table`, EINVAL);
      }
      throw new ArrowCDeviceError(`${what}: the callback trapped in ${owner} (${e.message})`, EIO);
    }
  }
}
