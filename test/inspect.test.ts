// The struct tree (ts/inspect/): every field of every struct as the core's
// own reader reads it, names for flags and device types, buffers with their
// roles and sizes, both layouts, broken structs shown rather than thrown;
// and the `inspect` command as a user runs it.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lp64 } from '../ts/abi/generated/layout.js';
import type { StructReader } from '../ts/abi/structs.js';
import { ArrowCDevice } from '../ts/api.js';
import { batchTree, deviceTree } from '../ts/inspect/batch.js';
import { samples, sample } from '../ts/inspect/samples.js';
import { treeText } from '../ts/inspect/text.js';
import { bufferRole, flagNames, hex, structTree, type StructTree, type TreeNode } from '../ts/inspect/tree.js';
import { readRaw, type RawArray } from '../ts/model/raw.js';
import * as t from '../ts/model/types.js';
import { GOLD } from './helpers.js';

let acd: ArrowCDevice;
beforeAll(async () => { acd = await ArrowCDevice.load(); });

/** Every field of every node equals what the StructReader reads at its offset; children are the pointed-at structs. */
function checkNode(s: StructReader, node: TreeNode, out: string[]): void {
  const layout = s.layout.structs[node.struct];
  if (node.size !== layout.size) out.push(`${node.id}: size ${node.size}, expected ${layout.size}`);
  expectFields: for (const f of node.fields) {
    const l = layout.fields[f.name];
    if (l === undefined || l.offset !== f.offset || l.size !== f.size || l.kind !== f.kind) {
      out.push(`${node.id}.${f.name}: offset/size/kind differ from the layout`);
      continue expectFields;
    }
    const at = node.address + f.offset;
    const want = f.kind === 'i64' ? s.view.getBigInt64(at, true).toString() : f.kind === 'i32' ? String(s.view.getInt32(at, true))
      : f.kind === 'i64x3' ? [0, 1, 2].map((k) => s.view.getBigInt64(at + 8 * k, true)).join(', ')
        : f.kind === 'struct' ? '(embedded)' : s.ptrAt(at) === 0 ? 'NULL' : hex(s.ptrAt(at));
    if (f.value !== want) out.push(`${node.id}.${f.name}: ${f.value}, the reader reads ${want}`);
  }
  for (const c of node.children) {
    const name = c.id.slice(node.id.length + 1);
    const m = /^children\[(\d+)\]$/.exec(name);
    const struct = node.struct === 'ArrowDeviceArray' ? null : node.struct;
    const expected = struct === null ? node.address + s.offsetOf('ArrowDeviceArray', 'array')
      : m !== null ? s.ptrAt(s.ptr(struct, node.address, 'children') + Number(m[1]) * s.layout.pointerSize)
        : s.ptr(struct, node.address, 'dictionary');
    if (c.address !== expected) out.push(`${c.id}: at ${c.address}, its parent points at ${expected}`);
    checkNode(s, c, out);
  }
  if (node.struct === 'ArrowArray') {
    const n = s.i64('ArrowArray', node.address, 'n_buffers');
    if (node.buffers.length !== n) out.push(`${node.id}: ${node.buffers.length} buffers shown, n_buffers ${n}`);
    node.buffers.forEach((b, i) => {
      const p = s.ptrAt(s.ptr('ArrowArray', node.address, 'buffers') + i * s.layout.pointerSize);
      if (b.address !== p) out.push(`${b.id}: address ${b.address}, the pointer holds ${p}`);
    });
  }
}

/** Buffer sizes are the bytes readRaw takes, node by node. */
function checkSizes(node: TreeNode, raw: RawArray, out: string[]): void {
  node.buffers.forEach((b, i) => {
    const want = raw.buffers[i] === null ? 0 : raw.buffers[i]!.length;
    if (b.size !== want) out.push(`${b.id}: size ${b.size}, readRaw takes ${want}`);
  });
  const kids = node.children.filter((c) => /children\[\d+\]$/.test(c.id));
  kids.forEach((c, i) => checkSizes(c, raw.children[i]!, out));
  const dictionary = node.children.find((c) => c.id.endsWith('.dictionary'));
  if (dictionary !== undefined && raw.dictionary !== null) checkSizes(dictionary, raw.dictionary, out);
}

const arrayOf = (tree: StructTree) => tree.roots[1]!.children[0]!;

describe('the tree of an export in the core', () => {
  test.each(samples().map((s) => [s.name] as [string]))('%s: every field as the reader reads it, every buffer sized, nothing left allocated', (name) => {
    const start = acd.bytesAllocated();
    const s = sample(name);
    const field = t.recordBatchField(s.schema);
    const exported = acd.exportDeviceRaw(field, s.batch);
    try {
      const tree = structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
      const out: string[] = [];
      tree.roots.forEach((r) => checkNode(acd.core.structs, r, out));
      const arrayAt = exported.array + acd.core.structs.offsetOf('ArrowDeviceArray', 'array');
      checkSizes(arrayOf(tree), readRaw(acd.core, arrayAt, field.type, 'copy'), out);
      expect(out).toEqual([]);
      expect(tree.roots.map((r) => r.problem)).toEqual([null, null]);
      // Every buffer, string and pointer array is a region of its own: no two overlap.
      const own = tree.regions.filter((r) => r.kind !== 'struct');
      own.forEach((r, i) => {
        if (i > 0) expect({ id: r.id, after: own[i - 1]!.address + own[i - 1]!.size <= r.address }).toEqual({ id: r.id, after: true });
      });
    } finally {
      exported.release();
    }
    expect(acd.bytesAllocated()).toBe(start);
  });

  test('names: flags, device types, strings, metadata; buffer roles', () => {
    const tree = batchTree(acd, t.recordBatchField(sample('demo').schema), sample('demo').batch, 'wasm32').tree;
    const text = treeText(tree, 'the core').join('\n');
    expect(text).toMatch(/\+16 +flags +2 +ARROW_FLAG_NULLABLE/);
    expect(text).toMatch(/device_type +1 +ARROW_DEVICE_CPU \(cpu\)/);
    expect(text).toMatch(/format +0x[0-9a-f]{8} +"\+l"/);
    expect(text).toMatch(/buffers\[1\] offsets \(int32\) @ 0x[0-9a-f]{8}, 20 bytes: 00 00 00 00 02 00 00 00 02 00 00 00 02 00 00 00 \.\.\./);
    expect(text).toMatch(/buffers\[1\] indices \(int8\) @ 0x[0-9a-f]{8}, 4 bytes: 00 01 ff 02|buffers\[1\] indices \(int8\) @ 0x[0-9a-f]{8}, 4 bytes/);
    expect(flagNames(7)).toBe('ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED');
    expect(flagNames(0x12)).toBe('ARROW_FLAG_NULLABLE | unknown bits 0x10');
    expect(bufferRole(t.utf8View(), 3, 5)).toBe('variadic data 1');
    expect(bufferRole(t.largeListView(t.field('x', t.int32())), 2, 3)).toBe('sizes (int64)');
    const md = sample('metadata-non-utf8');
    const mdText = treeText(batchTree(acd, t.recordBatchField(md.schema), md.batch, 'wasm32').tree, 'the core').join('\n');
    expect(mdText).toMatch(/metadata +0x[0-9a-f]{8} +"/);
  });

  test('an array on cuda:1: its event named, its bytes read only after waiting on it', () => {
    const s = sample('int32');
    const exported = acd.exportDeviceRaw(t.recordBatchField(s.schema), s.batch, { device: 'cuda:1' });
    try {
      const blind = structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
      const device = blind.roots[1]!;
      expect(device.title).toBe('on cuda:1');
      expect(device.fields.find((f) => f.name === 'device_type')!.meaning).toBe('ARROW_DEVICE_CUDA (cuda:1)');
      expect(device.fields.find((f) => f.name === 'sync_event')!.meaning).toBe('a cudaEvent_t*');
      const buffers = arrayOf(blind).children[0]!.buffers;
      expect(buffers[1]).toMatchObject({ onDevice: true, first: null, size: null });
      const waited = acd.deviceStats().eventsWaited;
      const seen = deviceTree(acd, exported.schema, exported.array);
      expect(acd.deviceStats().eventsWaited).toBe(waited + 1);
      expect(arrayOf(seen).children[0]!.buffers[1]!.first).toMatch(/^[0-9a-f]{2}( [0-9a-f]{2})*$/);
    } finally {
      exported.release();
    }
  });

  test('a broken struct is shown with its problem, not thrown', () => {
    const s = sample('struct');
    const exported = acd.exportDeviceRaw(t.recordBatchField(s.schema), s.batch);
    const st = acd.core.structs;
    const array = exported.array + st.offsetOf('ArrowDeviceArray', 'array');
    const children = st.ptr('ArrowArray', array, 'children');
    const saved = st.ptrAt(children);
    try {
      st.setPtr('ArrowArray', array, 'children', 0x7ffffff0); // past the end of the memory
      const tree = structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
      expect(arrayOf(tree).problem).toMatch(/children/);
      expect(tree.roots[1]!.problem).toMatch(/^buffer sizes unknown: array\.children: address 2147483632/);
      expect(tree.roots[0]!.problem).toBeNull();
      st.setPtr('ArrowArray', array, 'children', children);
      acd.core.view.setUint32(children, 12, true); // a child struct at a misaligned, overlapping address
      const odd = structTree(acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
      expect(odd.roots[1]!.problem).toMatch(/^buffer sizes unknown: /);
    } finally {
      acd.core.view.setUint32(children, saved, true);
      st.setPtr('ArrowArray', array, 'children', children);
      exported.release();
    }
  });
});

describe('the LP64 layout, from a fixture image', () => {
  test('the same batch with LP64 offsets and sizes; release fields filled by the loader', () => {
    const s = sample('dictionary');
    const { tree, addresses } = batchTree(acd, t.recordBatchField(s.schema), s.batch, 'lp64');
    expect(tree.layout).toBe('lp64');
    expect(addresses).toMatch(/LP64 fixture image/);
    const [schema, device] = tree.roots;
    expect([schema!.size, device!.size, arrayOf(tree).size]).toEqual([72, 128, 80]);
    for (const node of [schema!, device!, arrayOf(tree)]) {
      for (const f of node.fields) expect([node.struct, f.name, f.offset]).toEqual([node.struct, f.name, lp64.structs[node.struct].fields[f.name]!.offset]);
    }
    expect(arrayOf(tree).fields.find((f) => f.name === 'release')!.meaning).toMatch(/the loader installs its function here/);
    const wasm = batchTree(acd, t.recordBatchField(s.schema), s.batch, 'wasm32').tree;
    // The same buffers, byte for byte, in both layouts.
    const firsts = (x: StructTree) => JSON.stringify(arrayOf(x).children.map((c) => c.children.map((d) => d.buffers.map((b) => [b.role, b.size, b.first]))));
    expect(firsts(tree)).toBe(firsts(wasm));
  });
});

describe('arrow-c-device inspect', () => {
  const BIN = join(__dirname, '..', 'bin', 'arrow-c-device.mjs');
  const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'inspect', ...args], { encoding: 'utf8', timeout: 60_000 });
  const scratch = mkdtempSync(join(tmpdir(), 'acd-inspect-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('--sample demo: names for flags and device types, buffers with their first bytes', () => {
    const r = run('--sample', 'demo');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^sample 'demo': /);
    expect(r.stdout).toMatch(/ARROW_FLAG_NULLABLE/);
    expect(r.stdout).toMatch(/ARROW_DEVICE_CPU \(cpu\)/);
    expect(r.stdout).toMatch(/buffers\[2\] data @ 0x[0-9a-f]{8}, 13 bytes: 61 64 61/);
  });

  test('a file, a batch of it, both layouts, as JSON', () => {
    const file = join(GOLD, '1.0.0-littleendian', 'generated_primitive.arrow_file');
    for (const layout of ['wasm32', 'lp64']) {
      const r = run(file, '--batch', '1', '--layout', layout, '--json');
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout) as { source: string; layout: string; tree: StructTree };
      expect(out.source).toMatch(/generated_primitive\.arrow_file, batch 1 of 2$/);
      expect(out.tree.layout).toBe(layout);
      expect(out.tree.roots[0]!.children.length).toBeGreaterThan(20);
    }
  });

  test('--sample list names every sample', () => {
    const r = run('--sample', 'list');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(samples().length);
    expect(samples().length).toBeGreaterThan(80);
  });

  test.each([
    ['an empty file', () => { const f = join(scratch, 'empty.arrow'); writeFileSync(f, ''); return [f]; }, /is not a readable Arrow IPC file/],
    ['a missing file', () => [join(scratch, 'nope.arrow')], /cannot read/],
    ['an unknown sample', () => ['--sample', 'int33'], /no sample named 'int33'/],
    ['a batch past the end', () => [join(GOLD, '1.0.0-littleendian', 'generated_primitive.arrow_file'), '--batch', '2'], /has 2 batches/],
    ['an unknown layout', () => ['--sample', 'demo', '--layout', 'ilp32'], /--layout: expected wasm32 or lp64/],
    ['no input', () => [], /expected FILE or --sample NAME/],
    ['both inputs', () => ['x.arrow', '--sample', 'demo'], /expected FILE or --sample NAME/],
  ] as [string, () => string[], RegExp][])('%s: exit 2 and one line', (_what, args, message) => {
    const r = run(...args());
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });
});
