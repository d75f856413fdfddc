// Fields read from imported ArrowSchema trees, by the tree's key
// (csrc/validate/schema_key.c: formats, names, flags, children, dictionaries,
// metadata). A stream, or a producer exporting batch after batch, sends the
// same schema each time: with the key, the second import of a schema costs
// one call into the core and a comparison instead of reading every node
// again, and it yields the same Field object, on which the apache-arrow types
// built for it are cached too (ts/arrow-js/import.ts). Cached fields are
// frozen: they are shared by every import of that schema.
//
// An import that took the schema also names the id under which the core
// remembers its key as validated (Core.importedKeyId): a table per core finds
// the field by that id without hashing or comparing the key in JavaScript.

import type { Core } from '../abi/core.js';
import { readField } from '../model/schema.js';
import type { DataType, Field } from '../model/types.js';

/** Bounds of the cache: the number of schemas, and the bytes of their keys. */
const MAX_ENTRIES = 256;
const MAX_KEY_BYTES = 16 << 20;
/** A key longer than this is not cached (the schema is read every time). */
const MAX_CACHED_KEY = 1 << 20;

interface Entry {
  /** The key, as 32-bit words: compared in full on every hit (a hash alone could be forged). */
  words: Int32Array;
  field: Field;
}

/** By the key's hash; one entry per hash (a collision replaces). Insertion order is the LRU order. */
const cache = new Map<number, Entry>();
let keyBytes = 0;

/** The entry of the key (words, hash), compared in full, made most recently used; or undefined. */
function lookup(words: Int32Array, hash: number): Entry | undefined {
  const hit = cache.get(hash);
  if (hit === undefined || !sameWords(hit.words, words)) return undefined;
  // Most recently used last: the first entry is the one to evict.
  cache.delete(hash);
  cache.set(hash, hit);
  return hit;
}

/**
 * The field of the validated ArrowSchema at ptr in the core's memory: the
 * cached one when a schema with the same key was read before, else read (and
 * cached, frozen).
 */
export function readSchemaField(core: Core, ptr: number): Field {
  return schemaField(core, ptr, core.schemaKey(ptr, MAX_CACHED_KEY));
}

/** The fields of the keys a core remembers, at their id's slot (id & (BY_ID_SLOTS - 1)). */
interface IdEntry {
  id: number;
  field: Field;
}
const BY_ID_SLOTS = 256;
const byId = new WeakMap<Core, (IdEntry | undefined)[]>();

/**
 * The entry the last import found, checked before the table: a producer
 * sends the same schema batch after batch, and right after a big export the
 * WeakMap and the table are out of the CPU's caches (each costs a fraction of
 * a µs there, issue 14). An id names one key of its core forever, so the
 * entry never goes stale; the core is named by its serial, not held.
 */
const last: { core: number; id: number; field: Field | null } = { core: 0, id: 0, field: null };

function remember(core: Core, entry: IdEntry): Field {
  last.core = core.serial;
  last.id = entry.id;
  last.field = entry.field;
  return entry.field;
}

/**
 * readSchemaField with what the import that moved the schema to ptr left:
 * the id its key is remembered under (core.importedKeyId()), else its key
 * (core.importedKey(): null when it was too long to leave there).
 */
export function importedSchemaField(core: Core, ptr: number): Field {
  const id = core.importedKeyId();
  if (id !== 0 && id === last.id && core.serial === last.core) return last.field!;
  let slots = byId.get(core);
  const slot = id & (BY_ID_SLOTS - 1);
  if (id !== 0 && slots !== undefined) {
    const entry = slots[slot];
    if (entry !== undefined && entry.id === id) return remember(core, entry);
  }
  const field = schemaField(core, ptr, core.importedKey() ?? core.schemaKey(ptr, MAX_CACHED_KEY));
  // Only a cached field is frozen, and shared.
  if (id !== 0 && Object.isFrozen(field)) {
    if (slots === undefined) byId.set(core, (slots = new Array<IdEntry | undefined>(BY_ID_SLOTS)));
    remember(core, (slots[slot] = { id, field }));
  }
  return field;
}

/** The cached field of the schema at ptr whose key is `bytes` (null: uncached), else read and cached. */
function schemaField(core: Core, ptr: number, bytes: Uint8Array | null): Field {
  if (bytes === null || bytes.byteOffset % 4 !== 0) return readField(core.structs, ptr);
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  const hash = hashWords(words);
  const found = lookup(words, hash);
  if (found !== undefined) return found.field;
  const hit = cache.get(hash);
  const field = freezeField(readField(core.structs, ptr));
  if (hit !== undefined) keyBytes -= hit.words.byteLength;
  cache.delete(hash);
  cache.set(hash, { words: words.slice(), field });
  keyBytes += words.byteLength;
  for (const [h, e] of cache) {
    if (cache.size <= MAX_ENTRIES && keyBytes <= MAX_KEY_BYTES) break;
    cache.delete(h);
    keyBytes -= e.words.byteLength;
  }
  return field;
}

function hashWords(words: Int32Array): number {
  let h = words.length | 0;
  for (let i = 0; i < words.length; i++) {
    h = Math.imul(h ^ words[i]!, 0x9e3779b1);
    h ^= h >>> 15;
  }
  return h;
}

function sameWords(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function freezeField(f: Field): Field {
  freezeType(f.type);
  return Object.freeze(f);
}

function freezeType(t: DataType): void {
  for (const value of Object.values(t)) {
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) value.forEach((x) => (isField(x) ? freezeField(x) : undefined));
    else if (isField(value)) freezeField(value);
    else if ('kind' in value) freezeType(value as DataType);
    Object.freeze(value);
  }
  Object.freeze(t);
}

const isField = (x: unknown): x is Field => typeof x === 'object' && x !== null && 'type' in x && 'name' in x;
