// Run with node --expose-gc: handles dropped without release() are freed by
// the FinalizationRegistry backstop, whether they were registered at the end
// of the job that made them (a few) or at once, when one job made more than
// the handles kept pending (ts/abi/handles.ts). Prints the byte counts as JSON.
import * as arrow from 'apache-arrow';
import { load } from '../../dist/index.mjs';

const acd = await load();
const table = new arrow.Table({ a: arrow.vectorFromArray([1, 2, 3], new arrow.Int32()), s: arrow.vectorFromArray(['x', null, 'z']) });

/** Makes `count` exports and view imports in one job, drops them unreleased, and collects until their memory is back. */
async function dropped(count) {
  const start = acd.bytesAllocated();
  (() => {
    for (let i = 0; i < count; i++) {
      const exported = acd.exportDeviceBatch(table.batches[0]);
      acd.importDeviceBatch(exported.schema, exported.array, { mode: 'view' }); // dropped, not released
    }
  })();
  const held = acd.bytesAllocated() - start;
  for (let i = 0; i < 50 && acd.bytesAllocated() !== start; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  return { held, after: acd.bytesAllocated() - start };
}

const few = await dropped(20);
const many = await dropped(1500);
console.log(JSON.stringify({ few, many }));
