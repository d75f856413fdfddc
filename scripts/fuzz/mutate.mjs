// Seeded mutations of a file's bytes, for the CLI fuzzer (cli-fuzz.mjs).
// Each variant applies 1 to 3 operations; every choice comes from the PRNG,
// so (seed, file, variant) names one input exactly.

/** mulberry32: small, fast and good enough to pick mutations. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from any strings and numbers (FNV-1a). */
export function seedOf(...parts) {
  let h = 0x811c9dc5;
  for (const c of parts.join('\u0000')) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

const INTERESTING = [0x00, 0xff, 0x7f, 0x80];
// Little-endian 32-bit values for length fields: huge, negative, zero, off by a little.
const LENGTHS32 = [0x7fffffff, 0xffffffff, 0x80000000, 0xfffffff8, 0x40000000, 0x00010000, 0, 1, 8];
const LENGTHS64 = [0x7fffffffffffffffn, -1n, -0x8000000000000000n, 1n << 40n, 1n << 31n, 1n << 53n, 0n];

/**
 * Where length fields are likely: after each continuation marker (the
 * message length), the footer length, and 8-aligned positions (flatbuffer
 * fields, buffer offsets and lengths, field node lengths).
 */
function lengthSites(bytes) {
  const sites = [];
  for (let i = 0; i + 8 <= bytes.length; i++) {
    if (bytes[i] === 0xff && bytes[i + 1] === 0xff && bytes[i + 2] === 0xff && bytes[i + 3] === 0xff) sites.push(i + 4);
  }
  if (bytes.length >= 10) sites.push(bytes.length - 10);
  return sites;
}

const OPS = ['bitflip', 'byte', 'truncate', 'extend', 'duplicate', 'remove', 'length32', 'length64'];
// Integration JSON: the byte operations, and numbers (counts, offsets, lengths) set to extremes.
const JSON_OPS = ['bitflip', 'byte', 'truncate', 'duplicate', 'remove', 'number', 'number', 'number'];
const NUMBERS = ['99999999999', '-1', '2147483648', '1e308', '9007199254740993', '0', '-2147483649', '4294967296'];

/** Applies one operation; returns the new bytes and a short description. */
function apply(op, bytes, rand) {
  const pick = (n) => Math.floor(rand() * n);
  const n = bytes.length;
  switch (op) {
    case 'bitflip': {
      if (n === 0) return [bytes, 'bitflip (empty)'];
      const out = bytes.slice();
      const at = pick(n);
      const bit = pick(8);
      out[at] ^= 1 << bit;
      return [out, `bitflip ${at}:${bit}`];
    }
    case 'byte': {
      if (n === 0) return [bytes, 'byte (empty)'];
      const out = bytes.slice();
      const at = pick(n);
      out[at] = INTERESTING[pick(INTERESTING.length)];
      return [out, `byte ${at}=0x${out[at].toString(16)}`];
    }
    case 'truncate': {
      // Often very short: empty, 1, 6 or 8 bytes are classic false-"ok" inputs.
      const at = rand() < 0.25 ? [0, 1, 6, 8][pick(4)] : pick(n + 1);
      return [bytes.subarray(0, Math.min(at, n)), `truncate ${at}`];
    }
    case 'extend': {
      const k = 1 + pick(64);
      const fill = rand() < 0.5 ? 0 : -1;
      const tail = Uint8Array.from({ length: k }, () => (fill === 0 ? 0 : pick(256)));
      const out = new Uint8Array(n + k);
      out.set(bytes);
      out.set(tail, n);
      return [out, `extend ${k} ${fill === 0 ? 'zeros' : 'random'}`];
    }
    case 'duplicate': {
      if (n === 0) return [bytes, 'duplicate (empty)'];
      const from = pick(n);
      const len = 1 + pick(Math.min(256, n - from));
      const to = pick(n + 1);
      const out = new Uint8Array(n + len);
      out.set(bytes.subarray(0, to));
      out.set(bytes.subarray(from, from + len), to);
      out.set(bytes.subarray(to), to + len);
      return [out, `duplicate ${from}+${len}@${to}`];
    }
    case 'remove': {
      if (n === 0) return [bytes, 'remove (empty)'];
      const from = pick(n);
      const len = 1 + pick(Math.min(256, n - from));
      const out = new Uint8Array(n - len);
      out.set(bytes.subarray(0, from));
      out.set(bytes.subarray(from + len), from);
      return [out, `remove ${from}+${len}`];
    }
    case 'length32': case 'length64': {
      const width = op === 'length32' ? 4 : 8;
      if (n < width) return [bytes, `${op} (too short)`];
      const sites = lengthSites(bytes).filter((s) => s + width <= n);
      const at = sites.length > 0 && rand() < 0.5 ? sites[pick(sites.length)] : Math.min(pick(n >> 3) * 8, n - width);
      const out = bytes.slice();
      const dv = new DataView(out.buffer, out.byteOffset, out.byteLength);
      if (width === 4) {
        const v = LENGTHS32[pick(LENGTHS32.length)];
        dv.setUint32(at, v, true);
        return [out, `length32 ${at}=0x${v.toString(16)}`];
      }
      const v = LENGTHS64[pick(LENGTHS64.length)];
      dv.setBigInt64(at, v, true);
      return [out, `length64 ${at}=${v}`];
    }
    case 'number': {
      const text = new TextDecoder().decode(bytes);
      const runs = [...text.matchAll(/-?\d+/g)];
      if (runs.length === 0) return [bytes, 'number (none)'];
      const m = runs[pick(runs.length)];
      const v = NUMBERS[pick(NUMBERS.length)];
      const out = text.slice(0, m.index) + v + text.slice(m.index + m[0].length);
      return [new TextEncoder().encode(out), `number ${m.index}=${v}`];
    }
    default:
      throw new Error(`unknown mutation ${op}`);
  }
}

/**
 * Variant `k` of `bytes` for `seed` and `name`: { bytes, ops } (ops describe
 * what was done). `json`: the bytes are integration JSON text.
 */
export function mutate(bytes, seed, name, k, json = false) {
  const rand = prng(seedOf(seed, name, k));
  const count = 1 + Math.floor(rand() * 3);
  const ops = [];
  let out = bytes;
  for (let i = 0; i < count; i++) {
    const menu = json ? JSON_OPS : OPS;
    const op = menu[Math.floor(rand() * menu.length)];
    const [next, what] = apply(op, out, rand);
    out = next;
    ops.push(what);
  }
  return { bytes: out, ops };
}
