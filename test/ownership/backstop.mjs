// Run with node --expose-gc: handles dropped without release() are freed by
// the FinalizationRegistry backstop. Prints the byte counts as JSON.
import * as arrow from 'apache-arrow';
import { load } from '../../dist/index.mjs';

const acd = await load();
const start = acd.bytesAllocated();
const table = new arrow.Table({ a: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()), s: arrow.vectorFromArray(['x', null, 'z']) });
(() => {
  for (let i = 0; i < 20; i++) {
    const exported = acd.exportDeviceBatch(table.batches[0]);
    acd.importDeviceBatch(exported.schema, exported.array, { mode: 'view' }); // dropped, not released
  }
})();
const held = acd.bytesAllocated() - start;
for (let i = 0; i < 50 && acd.bytesAllocated() !== start; i++) {
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 10));
}
console.log(JSON.stringify({ held, after: acd.bytesAllocated() - start }));
