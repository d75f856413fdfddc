// The runtime smoke test shared by Deno, Bun and the browser: builds one
// table with apache-arrow, exports it as an ArrowDeviceArray, imports it back
// in copy and in view mode, and through a second core seen as another wasm
// module (into it and back from it), checks the values and that the
// allocated bytes return to where they started. Then the core's slot scans
// (wasm SIMD) in this runtime: a list, two unions, string views and 64-bit string offsets long enough
// for their blocks, read back, then refused with one offset, type id or view
// corrupted.
//
// It uses only the two modules it is given (no Node, Deno or DOM APIs), so
// the same file runs in every runtime:
//   const { ok, details, failures } = await smoke(arrow, load);

// The columns: [name, expected type (apache-arrow's toString()), values].
const COLUMNS = [
  ['i32', 'Int32', [1, null, -3, 2147483647, -2147483648, null]],
  ['utf8', 'Utf8', ['alpha', '', null, 'héllo wörld', '日本語 🚀', 'z']],
  ['list_f64', 'List<Float64>', [[1.5, -2.25], [], null, [null, 3e300], [0.1], [4, 5, 6]]],
  ['dict_utf8', 'Dictionary<Int32, Utf8>', ['red', 'green', 'red', null, 'blue', 'green']],
];
const ROWS = COLUMNS[0][2].length;

function buildTable(arrow) {
  const float64 = new arrow.Float64();
  const types = {
    i32: new arrow.Int32(),
    utf8: new arrow.Utf8(),
    list_f64: new arrow.List(new arrow.Field('item', float64, true)),
    dict_utf8: new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()),
  };
  const vectors = {};
  for (const [name, , values] of COLUMNS) vectors[name] = arrow.vectorFromArray(values, types[name]);
  return new arrow.Table(vectors);
}

// A plain, comparable form of a value apache-arrow returns: vectors and typed
// arrays become arrays (null slots stay null), bigints become "123n".
function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v.toJSON === 'function') return plain(v.toJSON());
  if (typeof v[Symbol.iterator] === 'function') return Array.from(v, plain);
  const out = {};
  for (const k of Object.keys(v)) out[k] = plain(v[k]);
  return out;
}

// JSON.stringify that accepts bigints (and typed arrays/vectors via plain()).
function stringify(v) {
  return JSON.stringify(plain(v), (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

// Every difference between a record batch and the expected columns.
function checkBatch(arrow, batch, source, label) {
  const errs = [];
  const fail = (msg) => errs.push(`${label}: ${msg}`);
  if (!(batch instanceof arrow.RecordBatch)) {
    fail(`value is not an apache-arrow RecordBatch of the given module (got ${batch?.constructor?.name})`);
    if (!batch || typeof batch.getChild !== 'function') return errs;
  }
  if (batch.numRows !== ROWS) fail(`numRows ${batch.numRows}, expected ${ROWS}`);
  const names = batch.schema.fields.map((f) => f.name);
  const want = COLUMNS.map(([n]) => n);
  if (stringify(names) !== stringify(want)) fail(`columns ${stringify(names)}, expected ${stringify(want)}`);
  for (const [name, typeName, values] of COLUMNS) {
    const col = batch.getChild(name);
    if (!col) { fail(`column ${name} missing`); continue; }
    const field = batch.schema.fields.find((f) => f.name === name);
    if (String(col.type) !== typeName) fail(`${name}: type ${String(col.type)}, expected ${typeName}`);
    if (field && field.nullable !== true) fail(`${name}: field not nullable`);
    const nulls = values.filter((x) => x === null).length;
    if (col.nullCount !== nulls) fail(`${name}: nullCount ${col.nullCount}, expected ${nulls}`);
    for (let i = 0; i < ROWS; i++) {
      const got = stringify(col.get(i));
      const exp = stringify(values[i]);
      if (got !== exp) fail(`${name}[${i}]: got ${got}, expected ${exp}`);
    }
    const all = stringify([...col]);
    if (all !== stringify(values)) fail(`${name}: iterated ${all}, expected ${stringify(values)}`);
  }
  const dict = batch.getChild('dict_utf8');
  if (dict && !(dict.data.length > 0 && dict.data.every((d) => d.dictionary instanceof arrow.Vector))) {
    fail('dict_utf8: a chunk has no dictionary Vector');
  }
  // Rows as JSON, against the source batch's rows.
  const gotRows = stringify(batch.toArray());
  const srcRows = stringify(source.toArray());
  if (gotRows !== srcRows) fail(`rows ${gotRows}, expected ${srcRows}`);
  return errs;
}

/**
 * Round-trips one table through exportDeviceBatch/importDeviceBatch in copy
 * and view mode. Returns { ok, details, failures }; never throws.
 */
export async function smoke(arrow, load) {
  const failures = [];
  const notes = [];
  let acd;
  try {
    acd = await load();
  } catch (e) {
    return { ok: false, details: `load() failed: ${e?.stack ?? e}`, failures: [`load: ${e?.message ?? e}`] };
  }
  let table;
  try {
    table = buildTable(arrow);
    if (table.batches.length !== 1) throw new Error(`expected one batch, the table has ${table.batches.length}`);
    // The source itself must read back as expected, or the test is wrong.
    failures.push(...checkBatch(arrow, table.batches[0], table.batches[0], 'source'));
  } catch (e) {
    return { ok: false, details: `building the table failed: ${e?.stack ?? e}`, failures: [String(e)] };
  }
  const source = table.batches[0];
  const start = acd.bytesAllocated();

  for (const mode of ['copy', 'view']) {
    let exp = null;
    let imp = null;
    const before = failures.length;
    try {
      exp = acd.exportDeviceBatch(source);
      if (!(Number.isInteger(exp.schema) && exp.schema > 0 && Number.isInteger(exp.array) && exp.array > 0)) {
        failures.push(`${mode}: export handle has schema=${exp.schema} array=${exp.array}, expected wasm addresses`);
      }
      const during = acd.bytesAllocated();
      if (!(during > start)) failures.push(`${mode}: bytesAllocated ${during} after export, expected more than ${start}`);
      imp = acd.importDeviceBatch(exp.schema, exp.array, { mode });
      // The import moved the structs out; releasing the export must not free
      // what the import now owns (the view reads it below).
      exp.release();
      exp = null;
      const batch = imp.value;
      failures.push(...checkBatch(arrow, batch, source, mode));
      imp.release();
      imp = null;
      if (mode === 'copy') {
        // A copy owns nothing in wasm memory: still readable after release().
        failures.push(...checkBatch(arrow, batch, source, 'copy after release'));
      }
      const end = acd.bytesAllocated();
      if (end !== start) failures.push(`${mode}: bytesAllocated ${end} after release, expected ${start} (start)`);
      if (failures.length === before) notes.push(`${mode} ok (peak +${during - start} B)`);
    } catch (e) {
      failures.push(`${mode}: threw ${e?.stack ?? e}`);
    } finally {
      try { imp?.release(); } catch (e) { failures.push(`${mode}: import release threw ${e}`); }
      try { exp?.release(); } catch (e) { failures.push(`${mode}: export release threw ${e}`); }
    }
  }
  // Another wasm module: a second core, its memory, table and allocator seen
  // as a foreign module's. The batch is exported into it ({ into }: its
  // allocator, our callbacks as wasm functions in its table) and imported
  // back from it ({ from }: the trampoline checks each call).
  try {
    const other = await load();
    const into = acd.foreign({ name: 'another core', memory: other.memory, table: other.core.table,
      malloc: (n) => other.core.alloc(n), free: (p) => other.core.free(p) });
    const exp = acd.exportBatch(source, { into });
    const imp = acd.importBatch(exp.schema, exp.array, { from: into, validate: 'full' });
    const before = failures.length;
    failures.push(...checkBatch(arrow, imp.value, source, 'foreign'));
    imp.release();
    exp.release();
    if (into.bytesAllocated() !== 0) failures.push(`foreign: ${into.bytesAllocated()} bytes left in the other core`);
    if (other.bytesAllocated() !== 0) failures.push(`foreign: the other core counts ${other.bytesAllocated()} bytes`);
    if (failures.length === before) notes.push('into another core and back ok');
  } catch (e) {
    failures.push(`foreign: threw ${e?.stack ?? e}`);
  }
  try {
    const before = failures.length;
    failures.push(...scans(arrow, acd));
    if (failures.length === before) notes.push('slot scans ok');
  } catch (e) {
    failures.push(`scans: threw ${e?.stack ?? e}`);
  }
  const end = acd.bytesAllocated();
  const summary = `${ROWS} rows x ${COLUMNS.length} columns (${COLUMNS.map(([, t]) => t).join(', ')}); `
    + `${notes.join(', ') || 'no mode passed'}; bytesAllocated ${start} -> ${end}`;
  if (failures.length === 0) return { ok: true, details: summary, failures };
  const shown = failures.slice(0, 20).concat(failures.length > 20 ? [`... and ${failures.length - 20} more`] : []);
  return { ok: false, details: `${summary}; ${failures.length} failure(s):\n  ${shown.join('\n  ')}`, failures };
}

// A batch of 100 rows: list<int32> (0 to 2 items a row), a dense union of
// int32 and utf8, a sparse union of int32 and float64 (type ids 3 and 7),
// utf8_view over two buffers, large_utf8.
function scanBatch(arrow) {
  const n = 100;
  const offsets = Int32Array.from({ length: n + 1 }, (_, i) => i + (i >> 1));
  const items = arrow.makeData({ type: new arrow.Int32(), length: offsets[n], data: Int32Array.from({ length: offsets[n] }, (_, i) => i * 7) });
  const list = arrow.makeData({ type: new arrow.List(new arrow.Field('item', new arrow.Int32(), true)), length: n, nullCount: 0, valueOffsets: offsets, child: items });
  const ids = Int8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 7 : 3));
  const counts = [0, 0];
  const denseOffsets = Int32Array.from(ids, (id) => counts[id === 3 ? 0 : 1]++);
  const ints = arrow.makeData({ type: new arrow.Int32(), length: counts[0], data: Int32Array.from({ length: counts[0] }, (_, i) => -i) });
  const words = arrow.vectorFromArray(Array.from({ length: counts[1] }, (_, i) => `w${i}`), new arrow.Utf8()).data[0];
  const intField = new arrow.Field('i', new arrow.Int32(), true);
  const dense = arrow.makeData({ type: new arrow.DenseUnion([3, 7], [intField, new arrow.Field('s', new arrow.Utf8(), true)]), length: n, nullCount: 0,
    typeIds: ids, valueOffsets: denseOffsets, children: [ints, words] });
  const sparseInts = arrow.makeData({ type: new arrow.Int32(), length: n, data: Int32Array.from({ length: n }, (_, i) => i) });
  const sparseFloats = arrow.makeData({ type: new arrow.Float64(), length: n, data: Float64Array.from({ length: n }, (_, i) => i / 4) });
  const sparse = arrow.makeData({ type: new arrow.SparseUnion([3, 7], [intField, new arrow.Field('f', new arrow.Float64(), true)]), length: n, nullCount: 0,
    typeIds: ids, children: [sparseInts, sparseFloats] });
  // utf8_view: 20-byte strings (not inline), alternating between two variadic buffers.
  const views = new Int32Array(4 * n);
  const variadic = [new Uint8Array(10 * n), new Uint8Array(10 * n)];
  for (let i = 0; i < n; i++) {
    const bytes = new TextEncoder().encode(`string number ${String(i).padStart(6, '0')}`);
    variadic[i % 2].set(bytes, (i >> 1) * 20);
    views.set([20, bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24), i % 2, (i >> 1) * 20], 4 * i);
  }
  const strings = arrow.makeData({ type: new arrow.Utf8View(), length: n, nullCount: 0, views: new Uint8Array(views.buffer), variadicBuffers: variadic });
  // large_utf8: 64-bit offsets.
  const large = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `large ${i}`), new arrow.LargeUtf8()).data[0];
  const fields = [new arrow.Field('list', list.type, true), new arrow.Field('dense', dense.type, true), new arrow.Field('sparse', sparse.type, true),
    new arrow.Field('strings', strings.type, true), new arrow.Field('large', large.type, true)];
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children: [list, dense, sparse, strings, large] });
  return new arrow.RecordBatch(new arrow.Schema(fields), data);
}

// Every difference the scans make: the batch read back in view mode, then
// one slot at a time made wrong (in the middle of a block and in the last
// slots) and the import's error naming it.
function scans(arrow, acd) {
  const errs = [];
  const source = scanBatch(arrow);
  const start = acd.bytesAllocated();
  const want = stringify(source.toArray());
  const exported = acd.exportBatch(source);
  const imported = acd.importBatch(exported.schema, exported.array, { mode: 'view' });
  exported.release();
  const got = stringify(imported.value.toArray());
  if (got !== want) errs.push(`scans: rows read back ${got.slice(0, 200)}, expected ${want.slice(0, 200)}`);
  imported.release();
  // wasm32 ArrowArray: buffers at byte 40, children at 44.
  const word = (at) => new DataView(acd.memory.buffer).getUint32(at, true);
  const bufferOf = (array, child, k) => word(word(word(word(array + 44) + 4 * child) + 40) + 4 * k);
  const cases = [
    // [column, buffer, slot, width, value, what the message must say]
    [0, 1, 50, 4, 1, 'offset 1 at slot 50 is less than the offset before it'],
    [0, 1, 97, 4, 100000, 'offset 100000 at slot 97 is outside'],
    [1, 0, 40, 1, 5, 'slot 40 has type id 5'],
    [1, 1, 41, 4, 100, 'offset 100 at slot 41 is outside'],
    [1, 1, 98, 4, -1, 'offset -1 at slot 98 is outside'],
    [2, 0, 33, 1, 16, 'slot 33 has type id 16'],
    [2, 0, 99, 1, -1, 'slot 99 has type id -1'],
    // A view's buffer index (word 2) or offset (word 3).
    [3, 1, 4 * 45 + 3, 4, 990, 'view 45 reads bytes [990, 1010)'],
    [3, 1, 4 * 86 + 2, 4, 2, 'view 86 names buffer 2'],
    [4, 1, 60, 8, 3, 'offset 3 at slot 60 is less than the offset before it'],
    [4, 1, 99, 8, 1e9, 'offset 1000000000 at slot 99 is outside'],
  ];
  for (const [column, buffer, slot, width, value, message] of cases) {
    const e = acd.exportBatch(source);
    const at = bufferOf(e.array, column, buffer) + slot * width;
    const view = new DataView(acd.memory.buffer);
    if (width === 1) view.setInt8(at, value);
    else if (width === 4) view.setInt32(at, value, true);
    else view.setBigInt64(at, BigInt(value), true);
    let error = null;
    try {
      acd.importBatch(e.schema, e.array, { mode: 'view' }).release();
    } catch (x) {
      error = x;
    }
    if (error === null) errs.push(`scans: column ${column} buffer ${buffer} slot ${slot} = ${value}: imported, expected an error`);
    else if (!String(error.message).includes(message)) errs.push(`scans: column ${column} slot ${slot}: error "${error.message}", expected "${message}"`);
    e.release();
  }
  const end = acd.bytesAllocated();
  if (end !== start) errs.push(`scans: bytesAllocated ${end} after, expected ${start}`);
  return errs;
}
