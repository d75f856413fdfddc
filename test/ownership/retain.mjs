// Run with node --expose-gc: the backstop's registration waits for the end of
// the job that made a handle (ts/abi/handles.ts); until then it must not keep
// what a released handle held. Imports 20 copies of an 8 MB batch in one job,
// releasing each, collects within the same job, and prints the bytes of
// ArrayBuffers still held (as JSON).
import * as arrow from 'apache-arrow';
import { load } from '../../dist/index.mjs';

const acd = await load();
const rows = 1_000_000;
const batch = new arrow.Table({ v: arrow.makeVector(new Float64Array(rows).fill(1.5)) }).batches[0];
const once = () => {
  const exported = acd.exportBatch(batch);
  const imported = acd.importBatch(exported.schema, exported.array, { mode: 'copy' });
  if (imported.value.numRows !== rows) throw new Error(`read ${imported.value.numRows} rows`);
  imported.release();
  exported.release();
};
// Wasm memory grown to what the loop needs, outside the count.
once();
await new Promise((r) => setTimeout(r, 10));
globalThis.gc();
const before = process.memoryUsage().arrayBuffers;
(() => {
  for (let i = 0; i < 20; i++) once();
  // Twice: the second completes the sweep of the first (V8 frees array buffers' memory concurrently).
  globalThis.gc();
  globalThis.gc();
  console.log(JSON.stringify({ batchBytes: rows * 8, held: process.memoryUsage().arrayBuffers - before }));
})();
