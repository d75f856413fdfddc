// The Structs panel: the struct tree (ts/inspect/tree.ts) as nested HTML.
// Every field a row with its offset, value and meaning; pointers are links
// to what they point at; each row, buffer and struct can be selected (the
// Memory panel then highlights its bytes). Rows carry data- attributes with
// the raw facts, which the Playwright test compares with the core's memory.

import type { StructTree, TreeNode } from '../inspect.js';
import { el, hex8 } from './dom.js';

/** What is selected: a struct (node id), a field (`node/field`) or a region (its id). */
export type Selection = { kind: 'node'; id: string } | { kind: 'field'; node: string; field: string } | { kind: 'region'; id: string };

export interface StructsHandlers {
  select(s: Selection): void;
  /** A pointer's link: the node or region it points at. */
  follow(id: string): void;
}

function nodeView(node: TreeNode, h: StructsHandlers): HTMLElement {
  const head = el('div', { class: 'node-head', title: 'select this struct\'s bytes' },
    el('span', { class: 'struct', text: node.struct }), el('code', { text: `@ ${hex8(node.address)}` }),
    el('span', { class: 'hint', text: `${node.size} bytes · ${node.id}` }), el('span', { class: 'title', text: node.title }));
  head.addEventListener('click', () => h.select({ kind: 'node', id: node.id }));
  const rows = node.fields.filter((f) => f.kind !== 'struct').map((f) => {
    const value = f.link === null ? el('code', { text: f.value }) : el('a', { class: 'link', href: '#', 'data-link': f.link, title: `go to ${f.link}`, text: f.value });
    if (f.link !== null) {
      value.addEventListener('click', (e) => { e.preventDefault(); e.stopPropagation(); h.follow(f.link!); });
    }
    const tr = el('tr', { 'data-field': f.name, 'data-offset': f.offset, 'data-size': f.size, 'data-kind': f.kind, 'data-value': f.value,
      'data-meaning': f.meaning ?? '' },
    el('td', { class: 'off mono', text: `+${f.offset}` }), el('td', { class: 'name mono', text: f.name }),
    el('td', { class: 'value' }, value), el('td', { class: 'meaning', text: f.meaning ?? '' }));
    tr.addEventListener('click', () => h.select({ kind: 'field', node: node.id, field: f.name }));
    return tr;
  });
  const section = el('section', { class: 'node', id: `node-${node.id}`, 'data-node': node.id, 'data-struct': node.struct, 'data-address': node.address },
    head, el('table', { class: 'fields' }, el('tbody', {}, ...rows)));
  if (node.buffers.length > 0) {
    const brows = node.buffers.map((b) => {
      const size = b.address === 0 ? '' : b.size === null ? (b.onDevice ? 'on the device' : 'size unknown') : `${b.size} B`;
      const first = b.first === null ? '' : b.first + (b.size === null || b.size > 16 ? ' …' : '');
      const tr = el('tr', { 'data-buffer': b.id, 'data-address': b.address, 'data-size': b.size ?? '', 'data-role': b.role, 'data-first': b.first ?? '' },
        el('td', { class: 'mono', text: `buffers[${b.index}]` }), el('td', { text: b.role }),
        el('td', { class: 'mono', text: b.address === 0 ? 'NULL' : hex8(b.address) }), el('td', { class: 'mono', text: size }),
        el('td', { class: 'first mono', text: first }));
      tr.addEventListener('click', () => { if (b.address !== 0) h.select({ kind: 'region', id: b.id }); });
      return tr;
    });
    section.append(el('table', { class: 'buffers' }, el('tbody', {}, ...brows)));
  }
  if (node.problem !== null) section.append(el('p', { class: 'problem', text: `problem: ${node.problem}` }));
  for (const c of node.children) section.append(nodeView(c, h));
  return section;
}

export function renderStructs(into: HTMLElement, tree: StructTree | null, empty: string, h: StructsHandlers): void {
  into.replaceChildren(...(tree === null ? [el('p', { class: 'explain', text: empty })] : tree.roots.map((r) => nodeView(r, h))));
}

/** Marks the selection in the tree and scrolls to it. */
export function markStructs(into: HTMLElement, s: Selection | null, scroll: boolean): void {
  into.querySelectorAll('.selected').forEach((e) => e.classList.remove('selected'));
  if (s === null) return;
  let target: Element | null = null;
  if (s.kind === 'node') target = into.querySelector(`[data-node="${CSS.escape(s.id)}"]`);
  else if (s.kind === 'field') target = into.querySelector(`[data-node="${CSS.escape(s.node)}"] > table > tbody > tr[data-field="${CSS.escape(s.field)}"]`);
  else target = into.querySelector(`[data-buffer="${CSS.escape(s.id)}"]`);
  if (target === null) return;
  target.classList.add('selected');
  if (scroll) {
    target.scrollIntoView({ block: 'nearest' });
    if (s.kind === 'node') {
      target.classList.remove('flash');
      void (target as HTMLElement).offsetWidth;
      target.classList.add('flash');
    }
  }
}
