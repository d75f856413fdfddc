// Run with node --expose-gc, in a process of its own (issue 9, item 6): a
// CAsyncConsumer dropped before on_schema is collected and its finalizer
// runs, but the handler a producer still holds is not freed with it. In a
// long jest process V8 sometimes never runs a finalization task after a
// collection, so this runs where nothing else has. Prints the outcome as JSON.
import * as arrow from 'apache-arrow';
import { CAsyncConsumer, load, produceAsync, streamRuntime } from '../../dist/index.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const acd = await load();
const start = acd.bytesAllocated();
const rt = streamRuntime(acd.core);
const consumersLive = rt.cAsyncStats().consumersLive;
let open;
const gate = new Promise((r) => { open = r; });
const batches = [0, 1].map((b) => new arrow.RecordBatch({ x: arrow.vectorFromArray([b, b + 1], new arrow.Int32()).data[0] }));
const source = (async function* () { await gate; yield* batches; })();

let finalized = false;
const seen = new FinalizationRegistry(() => { finalized = true; });
let ref;
let p1;
(() => {
  const c1 = new CAsyncConsumer(acd.core);
  seen.register(c1, 0);
  ref = new WeakRef(c1);
  p1 = produceAsync(acd, c1.handler, source); // on_schema waits for the gate
})();
// deref() keeps the target alive until the end of the job: never in the same job as gc().
let collected = false;
for (let i = 0; i < 10 && !collected; i++) {
  globalThis.gc();
  await sleep(0);
  collected = ref.deref() === undefined;
  await sleep(0);
}
for (let i = 0; !finalized && i < 500; i++) await sleep(10);
seen.unregister(ref);
for (let i = 0; i < 5; i++) await sleep(0); // the library's finalizer (same collection) has run too
const heldForProducer = rt.cAsyncStats().consumersLive - consumersLive;
const c2 = new CAsyncConsumer(acd.core);
open();
const stats1 = await p1.done;
const state2 = c2.state();
c2.release();
for (let i = 0; i < 5; i++) await sleep(0);
console.log(JSON.stringify({
  collected, finalized, heldForProducer, producerTasks: stats1.tasks,
  c2: { schemaReceived: state2.schemaReceived, tasks: state2.tasks, errorCode: state2.errorCode },
  consumersLiveAfter: rt.cAsyncStats().consumersLive - consumersLive, bytesLeaked: acd.bytesAllocated() - start,
}));
