// The workload of the CSP test (test/csp.test.ts), as a user's page would
// run it: bundled by esbuild from the package's own entry ('arrow-c-device',
// resolved through package.json "exports", apache-arrow's browser build
// beside it) and loaded under `script-src 'self' 'wasm-unsafe-eval'`.
// apache-arrow's data is made with makeData from typed arrays: its builders
// (vectorFromArray, tableFromArrays of plain arrays) compile their null check
// with new Function, which that policy refuses.
// Sets window.__csp = { ok, steps, failures }.
import * as arrow from 'apache-arrow';
import { ArrowCDeviceError, load, types as t } from 'arrow-c-device';
import { batchTree, demoTable, samples, treeText } from 'arrow-c-device/inspect';

const utf8 = (strings) => {
  const bytes = new TextEncoder().encode(strings.join(''));
  const offsets = [0];
  for (const s of strings) offsets.push(offsets.at(-1) + new TextEncoder().encode(s).length);
  return { valueOffsets: Int32Array.from(offsets), data: bytes };
};

function batchOfSeveralTypes() {
  const i32 = arrow.makeData({ type: new arrow.Int32(), length: 4, nullCount: 1, nullBitmap: Uint8Array.of(0b1011), data: Int32Array.of(1, -2, 0, 4) });
  const f64 = arrow.makeData({ type: new arrow.Float64(), length: 4, data: Float64Array.of(1.5, 2.5, -0, 1e300) });
  const s = arrow.makeData({ type: new arrow.Utf8(), length: 4, ...utf8(['alpha', '', 'héllo', '日本']) });
  const item = new arrow.Field('item', new arrow.Float64(), true);
  const list = arrow.makeData({ type: new arrow.List(item), length: 4, valueOffsets: Int32Array.of(0, 2, 2, 3, 5),
    child: arrow.makeData({ type: new arrow.Float64(), length: 5, data: Float64Array.of(1, 2, 3, 4, 5) }) });
  const dictValues = arrow.makeVector(arrow.makeData({ type: new arrow.Utf8(), length: 2, ...utf8(['red', 'blue']) }));
  const dict = arrow.makeData({ type: new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()), length: 4, data: Int32Array.of(0, 1, 1, 0), dictionary: dictValues });
  const ts = arrow.makeData({ type: new arrow.TimestampMillisecond(), length: 4, data: BigInt64Array.of(0n, 1n, 1700000000000n, -1n) });
  const bools = arrow.makeData({ type: new arrow.Bool(), length: 4, data: Uint8Array.of(0b0101) });
  const struct = arrow.makeData({ type: new arrow.Struct([new arrow.Field('x', new arrow.Int32(), true)]), length: 4,
    children: [arrow.makeData({ type: new arrow.Int32(), length: 4, data: Int32Array.of(7, 8, 9, 10) })] });
  const table = new arrow.Table({
    i32: arrow.makeVector(i32), f64: arrow.makeVector(f64), s: arrow.makeVector(s), list: arrow.makeVector(list),
    dict: arrow.makeVector(dict), ts: arrow.makeVector(ts), bools: arrow.makeVector(bools), struct: arrow.makeVector(struct),
  });
  return table.batches[0];
}

const rows = (batch) => JSON.stringify(batch.toArray(), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));

async function run() {
  const steps = [];
  const failures = [];
  const check = (what, got, want) => { if (got !== want) failures.push(`${what}: got ${got}, expected ${want}`); };
  const step = async (name, f) => {
    try {
      await f();
      steps.push(name);
    } catch (e) {
      failures.push(`${name}: ${(e && e.stack) || e}`);
    }
  };
  let acd;
  await step('load', async () => { acd = await load(); });
  if (acd === undefined) return { ok: false, steps, failures };
  const batch = batchOfSeveralTypes();
  const want = rows(batch);
  for (const mode of ['copy', 'view']) {
    await step(`export and import a batch of 8 types (${mode})`, () => {
      const e = acd.exportBatch(batch);
      const imp = acd.importBatch(e.schema, e.array, { mode, validate: 'full' });
      check(`${mode} rows`, rows(imp.value), want);
      imp.release();
      e.release();
    });
  }
  await step('device batch', () => {
    const e = acd.exportDeviceBatch(batch);
    const imp = acd.importDeviceBatch(e.schema, e.array);
    check('device rows', rows(imp.value), want);
    imp.release();
    e.release();
  });
  await step('a stream of two batches', () => {
    const e = acd.exportArrayStream([batch, batch]);
    const reader = acd.importArrayStream(e.ptr);
    const got = reader.readAll().map(rows);
    check('stream', JSON.stringify(got), JSON.stringify([want, want]));
    reader.release();
    e.release();
  });
  await step('run-end encoded, imported with convert', () => {
    const u8 = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const type = t.runEndEncoded(t.int32(), t.int32());
    const raw = { type, length: 5, nullCount: 0, offset: 0, buffers: [], dictionary: null, children: [
      { type: t.int32(), length: 3, nullCount: 0, offset: 0, buffers: [null, u8(Int32Array.of(2, 3, 5))], children: [], dictionary: null },
      { type: t.int32(), length: 3, nullCount: 1, offset: 0, buffers: [Uint8Array.of(0b101), u8(Int32Array.of(1, 0, 3))], children: [], dictionary: null },
    ] };
    const e = acd.exportRaw(t.field('r', type), raw);
    const imp = acd.importVector(e.schema, e.array, { convert: ['run_end_encoded'] });
    check('run-end encoded', JSON.stringify([...imp.value]), JSON.stringify([1, 1, null, 3, 3]));
    imp.release();
    e.release();
  });
  await step('into another core and back (foreign module: addFunction, trampoline)', async () => {
    const other = await load();
    const into = acd.foreign({ name: 'another core', memory: other.memory, table: other.core.table,
      malloc: (n) => other.core.alloc(n), free: (p) => other.core.free(p) });
    const e = acd.exportBatch(batch, { into });
    const imp = acd.importBatch(e.schema, e.array, { from: into, validate: 'full' });
    check('foreign rows', rows(imp.value), want);
    imp.release();
    e.release();
    check('bytes left in the other module', into.bytesAllocated(), 0);
  });
  await step('the inspector: the demo table and the samples, their struct trees in both layouts', () => {
    const demo = demoTable();
    check('demo rows', demo.numRows, 4);
    const all = samples();
    for (const s of all.slice(0, 8)) {
      for (const layout of ['wasm32', 'lp64']) {
        const { tree, addresses } = batchTree(acd, t.recordBatchField(s.schema), s.batch, layout);
        if (treeText(tree, addresses).length < 3) failures.push(`${s.name} (${layout}): a tree of fewer than 3 lines`);
      }
    }
  });
  await step('a refused import is an ArrowCDeviceError', () => {
    try {
      acd.importBatch(8, 16);
      failures.push('importing addresses 8 and 16 did not throw');
    } catch (e) {
      if (!(e instanceof ArrowCDeviceError)) throw e;
    }
  });
  check('bytes left', acd.bytesAllocated(), 0);
  return { ok: failures.length === 0, steps, failures };
}

window.__csp = await run().catch((e) => ({ ok: false, steps: [], failures: [`the page failed: ${(e && e.stack) || e}`] }));
