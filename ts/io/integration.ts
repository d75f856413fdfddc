// Arrow's C Data integration protocol (shared/spec/NOTES.md): the five entry
// points Arrow's cross-implementation harness calls in each implementation,
// here against this library's structs in wasm memory. Each returns null on
// success or an error message; BytesAllocated must return to its earlier
// value once an export was released. The JSON files come through `load`, so
// the protocol runs wherever a loader can be given (Node: a file reader).

import type { Core, CoreRef } from '../abi/core.js';
import { readField, writeSchema } from '../model/schema.js';
import { readIntegrationJson, type IntegrationFile } from './json/read.js';
import { readRaw, writeRaw } from '../model/raw.js';
import { compareRaw } from '../model/raw-values.js';
import { fieldsEqual, recordBatchField, typeToString } from '../model/types.js';

/** The validation level the protocol imports at: everything, contents included. */
const FULL = 3;

/**
 * Arrow's C Data integration protocol (the five entry points its harness calls) over this library's structs, with a loader for the JSON files so that it runs outside Node too. Each entry point returns null on success or an error message.
 *
 * Ownership: as the protocol says: an export writes into a struct the caller allocated and then owns (it releases it, or a consumer does); an import takes ownership of the struct it is given and releases it.
 */
export class CDataIntegration {
  private readonly files = new Map<string, IntegrationFile>();
  private readonly core: Core;

  /**
   * Binds the protocol to an instance.
   *
   * Ownership: borrows the instance; nothing to release.
   * @param acd - the instance (an `ArrowCDevice`).
   * @param load - returns the text of an integration JSON file by its path.
   */
  constructor(acd: CoreRef, private readonly load: (path: string) => string) {
    this.core = acd.core;
  }

  private file(path: string): IntegrationFile {
    let file = this.files.get(path);
    if (file === undefined) {
      file = readIntegrationJson(this.load(path));
      this.files.set(path, file);
    }
    return file;
  }

  /**
   * The number of batches of the file (reads and caches it).
   *
   * Ownership: the parsed file is cached in JS memory; nothing to release.
   * @param path - the JSON file.
   */
  batchCount(path: string): number {
    return this.file(path).batches.length;
  }

  private batch(path: string, n: number): IntegrationFile['batches'][number] {
    const { batches } = this.file(path);
    if (!Number.isInteger(n) || n < 0 || n >= batches.length) {
      throw new Error(`batch ${n}: ${path} has ${batches.length} batches`);
    }
    return batches[n];
  }

  /**
   * Writes the file's schema into the (caller-allocated, uninitialized) ArrowSchema at out.
   *
   * Ownership: the caller owns the struct at `out` afterwards and must release it (or hand it to a consumer).
   * @param jsonPath - the file.
   * @param out - an ArrowSchema the caller allocated.
   * @returns null, or the error message.
   */
  CDataIntegration_ExportSchemaFromJson(jsonPath: string, out: number): string | null {
    return attempt(() => writeSchema(this.core, out, recordBatchField(this.file(jsonPath).schema)));
  }

  /**
   * Takes ownership of the ArrowSchema at schema (releases it) and compares it with the file's.
   *
   * Ownership: takes ownership of the struct at `schema`, released in every case.
   * @param jsonPath - the file.
   * @param schema - the ArrowSchema's address.
   * @returns null when equal, else what differs or the error.
   */
  CDataIntegration_ImportSchemaAndCompareToJson(jsonPath: string, schema: number): string | null {
    return attempt(() => {
      try {
        this.core.schemaValidate(schema);
        const found = readField(this.core.structs, schema);
        const expected = recordBatchField(this.file(jsonPath).schema);
        if (!fieldsEqual({ ...found, name: '' }, expected)) {
          throw new Error(`schema: expected ${typeToString(expected.type)}, found ${typeToString(found.type)} ` +
            '(or their names, nullability or metadata differ)');
        }
      } finally {
        this.core.schemaRelease(schema);
      }
    });
  }

  /**
   * Writes batch numBatch of the file into the (caller-allocated, uninitialized) ArrowArray at out.
   *
   * Ownership: the caller owns the struct at `out` afterwards and must release it (or hand it to a consumer).
   * @param jsonPath - the file.
   * @param numBatch - the batch's index.
   * @param out - an ArrowArray the caller allocated.
   * @returns null, or the error message.
   */
  CDataIntegration_ExportBatchFromJson(jsonPath: string, numBatch: number, out: number): string | null {
    return attempt(() => writeRaw(this.core, out, this.batch(jsonPath, numBatch)));
  }

  /**
   * Takes ownership of the ArrowArray at batch (releases it), validates it fully
   * against the file's schema and compares it with batch numBatch of the file.
   *
   * Ownership: takes ownership of the struct at `batch`, released in every case.
   * @param jsonPath - the file.
   * @param numBatch - the batch's index.
   * @param batch - the ArrowArray's address.
   * @returns null when equal, else what differs or the error.
   */
  CDataIntegration_ImportBatchAndCompareToJson(jsonPath: string, numBatch: number, batch: number): string | null {
    return attempt(() => {
      const core = this.core;
      const schemaPtr = core.alloc(core.structs.size('ArrowSchema'));
      try {
        const expected = this.batch(jsonPath, numBatch);
        writeSchema(core, schemaPtr, recordBatchField(this.file(jsonPath).schema));
        core.arrayValidate(schemaPtr, batch, FULL);
        const found = readRaw(core, batch, expected.type, 'copy');
        const differences = compareRaw(expected, found, `batch ${numBatch}`);
        if (differences.length > 0) throw new Error(differences.join('; '));
      } finally {
        core.arrayRelease(batch);
        core.schemaRelease(schemaPtr);
        core.free(schemaPtr);
      }
    });
  }

  /**
   * Live bytes allocated by the core.
   *
   * Ownership: reads a counter; nothing to release.
   */
  BytesAllocated(): number {
    return this.core.bytesAllocated();
  }
}

function attempt(f: () => void): string | null {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** What `runIntegration` found. */
export interface IntegrationSummary {
  /** Whether every step held and nothing leaked. */
  ok: boolean;
  /** The file's name. */
  file: string;
  /** How many batches went through. */
  batches: number;
  /** Live bytes left after the run (0 when nothing leaked). */
  bytesLeaked: number;
  /** What failed, one message each. */
  errors: string[];
}

/**
 * Runs the protocol the way Arrow's harness does, with this library as both
 * producer and consumer: the schema and every batch exported from the JSON
 * and imported back, compared to the JSON, with the byte count checked.
 * `onBatch` is called after each batch (the CLI's progress).
 *
 * Ownership: every struct it makes is released before it returns; nothing to release.
 * @param acd - the instance (an `ArrowCDevice`).
 * @param path - the JSON file.
 * @param load - returns a file's text.
 * @param onBatch - called after each batch with how many are done and the total.
 */
export function runIntegration(acd: CoreRef, path: string, load: (path: string) => string,
  onBatch?: (done: number, total: number) => void): IntegrationSummary {
  const core = acd.core;
  const protocol = new CDataIntegration(acd, load);
  const errors: string[] = [];
  const start = protocol.BytesAllocated();
  const step = (what: string, exportTo: (out: number) => string | null, importFrom: (ptr: number) => string | null, struct: 'ArrowSchema' | 'ArrowArray') => {
    const ptr = core.alloc(core.structs.size(struct));
    try {
      const exported = exportTo(ptr);
      if (exported !== null) errors.push(`${what}: export: ${exported}`);
      else {
        const imported = importFrom(ptr);
        if (imported !== null) errors.push(`${what}: import: ${imported}`);
      }
    } finally {
      core.free(ptr);
    }
  };
  let batches = 0;
  try {
    batches = protocol.batchCount(path);
  } catch (e) {
    errors.push(`${path}: ${(e as Error).message}`);
  }
  if (errors.length === 0) {
    step('schema', (out) => protocol.CDataIntegration_ExportSchemaFromJson(path, out),
      (ptr) => protocol.CDataIntegration_ImportSchemaAndCompareToJson(path, ptr), 'ArrowSchema');
    for (let i = 0; i < batches; i++) {
      step(`batch ${i}`, (out) => protocol.CDataIntegration_ExportBatchFromJson(path, i, out),
        (ptr) => protocol.CDataIntegration_ImportBatchAndCompareToJson(path, i, ptr), 'ArrowArray');
      onBatch?.(i + 1, batches);
    }
  }
  const bytesLeaked = protocol.BytesAllocated() - start;
  return { ok: errors.length === 0 && bytesLeaked === 0, file: path, batches, bytesLeaked, errors };
}
