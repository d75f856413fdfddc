// A struct tree (tree.ts) as text for a terminal: each struct with its
// fields (offset, name, value, meaning), its buffers (role, address, size,
// first bytes), then its children and dictionary, indented.

import { hex, type StructTree, type TreeNode } from './tree.js';

function nodeLines(node: TreeNode, indent: string, label: string): string[] {
  const lines = [`${indent}${label}${node.struct} @ ${hex(node.address)} (${node.size} bytes): ${node.title}`];
  const width = Math.max(0, ...node.fields.map((f) => f.name.length));
  const valueWidth = Math.max(0, ...node.fields.map((f) => f.value.length));
  for (const f of node.fields) {
    if (f.kind === 'struct') continue;
    const meaning = f.meaning === null ? '' : `  ${f.meaning}`;
    lines.push(`${indent}  +${String(f.offset).padEnd(3)} ${f.name.padEnd(width)}  ${f.value.padEnd(valueWidth)}${meaning}`.trimEnd());
  }
  for (const b of node.buffers) {
    const where = b.address === 0 ? 'NULL' : hex(b.address);
    const size = b.address === 0 ? '' : b.size !== null ? `, ${b.size} byte${b.size === 1 ? '' : 's'}` : b.onDevice ? '' : ', size unknown';
    const unread = b.onDevice ? ' (device memory: not read without waiting on sync_event)' : ': (not readable here)';
    const first = b.first === null ? (b.address === 0 ? '' : unread) : b.first === '' ? '' : `: ${b.first}${b.size === null || b.size > 16 ? ' ...' : ''}`;
    lines.push(`${indent}  buffers[${b.index}] ${b.role} @ ${where}${size}${first}`);
  }
  if (node.problem !== null) lines.push(`${indent}  problem: ${node.problem}`);
  for (const c of node.children) {
    const name = c.id.slice(node.id.length + 1);
    // An embedded struct (the array of a device array) is shown in place.
    lines.push(...nodeLines(c, `${indent}  `, `${name}: `));
  }
  return lines;
}

/**
 * The tree as lines of text, with a line saying what the addresses are.
 *
 * Ownership: pure; nothing to release.
 * @param tree - the struct tree.
 * @param addresses - what the addresses are, in words.
 */
export function treeText(tree: StructTree, addresses: string): string[] {
  return [`${tree.layout} layout (${tree.layout === 'wasm32' ? 'pointers of 4 bytes' : 'pointers of 8 bytes'}); addresses: ${addresses}`,
    ...tree.roots.flatMap((r) => ['', ...nodeLines(r, '', '')])];
}
