// The CLI fuzzer's judge of an exit 0: is the file really Arrow data that
// round-trips? Run as `node scripts/fuzz/oracle.mjs FILE READER` (READER:
// the reader the CLI's summary named) in its own process, under the fuzzer's
// timeout. Exit 0 when it is; exit 3 with one line saying why not.
//
// Really Arrow data that round-trips, here:
//   - this library's reader (IPC or integration JSON) reads it;
//   - every batch, exported and imported back at validate 'full' (every
//     offset, index and run end checked by the C validator), compares equal;
//   - when the CLI read it with apache-arrow: apache-arrow reads the same
//     schema and the same values, batch by batch (two independent readers agree).

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import * as arrow from 'apache-arrow';

const dist = (entry) => new URL(`../../dist/${entry}.mjs`, import.meta.url).href;
const { load, toArrowTable, compareBatches, fromArrowSchema, types } = await import(dist('index'));
const { readOwn, roundtripRaw } = await import(dist('roundtrip'));

function judge(file, reader) {
  let bytes = readFileSync(file);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  const read = readOwn(file, bytes, () => new TextDecoder().decode(bytes));
  return load().then((acd) => {
    const full = roundtripRaw(acd, read.file, file, { validate: 'full' }, read.reader);
    if (!full.ok) return `at validate 'full' it does not round-trip: ${full.errors[0] ?? `${full.mismatches.length} mismatches`}`;
    if (reader !== 'apache-arrow') return null;
    const theirs = arrow.tableFromIPC(bytes);
    const schema = fromArrowSchema(theirs.schema);
    const own = read.file.schema;
    if (schema.fields.length !== own.fields.length || !schema.fields.every((f, i) => types.fieldsEqual(f, own.fields[i]))) {
      return `the readers disagree on the schema: own reader ${own.fields.map((f) => types.typeToString(f.type))}, apache-arrow ${schema.fields.map((f) => types.typeToString(f.type))}`;
    }
    if (!types.metadataEqual(schema.metadata, own.metadata)) return 'the readers disagree on the schema metadata';
    // apache-arrow gives a table without batches one empty batch: compare the batches that have rows.
    const ours = toArrowTable(read.file.schema, read.file.batches).batches.filter((b) => b.numRows > 0);
    const their = theirs.batches.filter((b) => b.numRows > 0);
    if (their.length !== ours.length) return `apache-arrow reads ${their.length} batches with rows, the own reader ${ours.length}`;
    for (let b = 0; b < ours.length; b++) {
      const m = compareBatches(ours[b], their[b], b, 1)[0];
      if (m !== undefined) return `the readers disagree: batch ${b} column '${m.column}' row ${m.row}: own reader ${m.expected}, apache-arrow ${m.found}`;
    }
    return null;
  });
}

const [file, reader] = process.argv.slice(2);
try {
  const why = await judge(file, reader);
  if (why !== null) {
    console.log(why);
    process.exitCode = 3;
  }
} catch (e) {
  console.log(`not Arrow data: ${e.message.split('\n')[0]}`);
  process.exitCode = 3;
}
