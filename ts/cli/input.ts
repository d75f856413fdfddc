// The CLI's untrusted input: what must hold before a file's batches are
// round-tripped, and before apache-arrow (whose reader trusts every length
// and hung or ran out of memory on corrupt files) is given its bytes.

import type * as arrow from 'apache-arrow';
// Only from the library's public entries, as ts/cli/cli.ts.
import { ArrowCDeviceError, compareBatches, fromArrowSchema, toArrowTable, types, type ArrowCDevice, type ExportedArray, type ValidationLevel, type Imported, type RawImport } from '../index.js';
import type { IntegrationFile } from '../json.js';
import { readOwn, type ReaderName } from '../roundtrip.js';

/**
 * Bad usage, a file that cannot be read, or one that is not Arrow data: exit 2.
 * `cause` is the error behind it (the reader's ArrowCDeviceError, the file
 * system's error), whose code, errno and path the --json error carries.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Called after each batch of a long step (the CLI's progress): batches done, of how many, and of which file. */
export type BatchDone = (done: number, total: number, file: IntegrationFile) => void;

/**
 * The first batch of a raw file the C validator refuses at level ('full':
 * every offset, index, run end and UTF-8 sequence), with its error, or null
 * when all are valid. Each batch is exported and imported as a view, then released.
 */
function invalidAt(acd: ArrowCDevice, file: IntegrationFile, level: ValidationLevel,
  onBatch?: BatchDone): { batch: number; error: ArrowCDeviceError } | null {
  const field = types.recordBatchField(file.schema);
  for (let b = 0; b < file.batches.length; b++) {
    let exported: ExportedArray | undefined;
    let imported: Imported<RawImport> | undefined;
    try {
      exported = acd.exportDeviceRaw(field, file.batches[b]!);
      imported = acd.importDeviceRaw(exported.schema, exported.array, { mode: 'view', validate: level });
    } catch (e) {
      if (!(e instanceof ArrowCDeviceError)) throw e;
      return { batch: b, error: e };
    } finally {
      imported?.release();
      exported?.release();
    }
    onBatch?.(b + 1, file.batches.length, file);
  }
  return null;
}

/**
 * A file read by this library's reader (IPC or integration JSON): every
 * message, body, buffer and count bounded by the input's size (ts/io/ipc/), then
 * every batch checked at `level` (the CLI's --validate, 'full' by default;
 * below it, what apache-arrow will read is still bounds-checked by the
 * import). An empty file, one without a schema message, or one with invalid
 * data throws UsageError. `onBatch` follows the check, batch by batch.
 */
export function readChecked(acd: ArrowCDevice, name: string, bytes: Uint8Array, level: ValidationLevel = 'full',
  onBatch?: BatchDone): { file: IntegrationFile; reader: ReaderName } {
  let read: { file: IntegrationFile; reader: ReaderName };
  try {
    read = readOwn(name, bytes, () => new TextDecoder().decode(bytes));
  } catch (e) {
    if (!(e instanceof ArrowCDeviceError)) throw e;
    throw new UsageError(`${name} is not a readable Arrow IPC file, stream or integration JSON: ${e.message}`, { cause: e });
  }
  const invalid = invalidAt(acd, read.file, level, onBatch);
  if (invalid !== null) throw new UsageError(`${name} is not valid Arrow data: batch ${invalid.batch}: ${invalid.error.message}`, { cause: invalid.error });
  return read;
}

const typeList = (fields: readonly types.Field[]) => fields.map((f) => `${f.name}: ${types.typeToString(f.type)}`).join(', ');

/**
 * How apache-arrow's reading of a file differs from this library's (schema,
 * then values batch by batch), or null when they agree; an exception of
 * apache-arrow's while reading values is a disagreement. apache-arrow gives a
 * file without batches one empty batch, so only batches with rows count.
 */
export function readersDisagree(table: arrow.Table, file: IntegrationFile, onBatch?: (done: number, total: number) => void): string | null {
  try {
    const theirs = fromArrowSchema(table.schema);
    const ours = file.schema;
    if (theirs.fields.length !== ours.fields.length || !theirs.fields.every((f, i) => types.fieldsEqual(f, ours.fields[i]!))) {
      return `apache-arrow reads the schema as <${typeList(theirs.fields)}>, this library's reader as <${typeList(ours.fields)}>`;
    }
    if (!types.metadataEqual(theirs.metadata, ours.metadata)) return 'apache-arrow reads other schema metadata than this library\'s reader';
    const a = toArrowTable(file.schema, file.batches).batches.filter((b) => b.numRows > 0);
    const b = table.batches.filter((x) => x.numRows > 0);
    if (a.length !== b.length) return `apache-arrow reads ${b.length} batches with rows, this library's reader ${a.length}`;
    for (let k = 0; k < a.length; k++) {
      const m = compareBatches(a[k]!, b[k]!, k, 1)[0];
      if (m !== undefined) return `batch ${k} column '${m.column}' row ${m.row}: this library's reader ${m.expected}, apache-arrow ${m.found}`;
      onBatch?.(k + 1, a.length);
    }
    return null;
  } catch (e) {
    // apache-arrow's accessors throw on values they cannot hold (a date64 past 2^53 ms: a TypeError).
    if (e instanceof ArrowCDeviceError) return `they cannot be compared: ${e.message}`;
    return `apache-arrow fails reading its values: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
  }
}
