// The Memory panel: a hex view of the bytes the tree's regions span (the
// core's linear memory, or the LP64 image's body), paged. Each byte is
// coloured by the region it belongs to; the selection's bytes are
// highlighted; clicking a byte says which struct field, string, pointer
// array or buffer holds it.

import type { StructTree, TreeNode, TreeRegion } from '../inspect.js';
import { el, hex8 } from './dom.js';

const ROW = 16;
const PAGE = 512;

export interface Range {
  readonly address: number;
  readonly size: number;
}

/** Where a byte is: the regions holding it (smallest first) and, in a struct, its field. */
export interface ByteOwner {
  readonly address: number;
  readonly regions: readonly TreeRegion[];
  readonly node: string | null;
  readonly field: string | null;
  readonly text: string;
}

function allNodes(nodes: readonly TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...allNodes(n.children)]);
}

export function ownerOf(tree: StructTree, address: number): ByteOwner {
  const regions = tree.regions.filter((r) => address >= r.address && address < r.address + r.size).sort((a, b) => a.size - b.size);
  const first = regions[0];
  if (first === undefined) return { address, regions, node: null, field: null, text: `${hex8(address)}: in no struct, string or buffer of this export` };
  let node: string | null = null;
  let field: string | null = null;
  let where = `byte ${address - first.address} of ${first.id} (${first.label})`;
  if (first.kind === 'struct') {
    const n = allNodes(tree.roots).find((x) => x.id === first.id);
    const f = n?.fields.find((x) => x.kind !== 'struct' && address >= n.address + x.offset && address < n.address + x.offset + x.size);
    node = n?.id ?? null;
    if (f !== undefined) {
      field = f.name;
      where += `: field ${f.name} (+${f.offset}, ${f.size} bytes, ${f.value})`;
    } else where += ': padding';
  }
  const outer = regions.slice(1).map((r) => r.id);
  return { address, regions, node, field, text: `${hex8(address)} is ${where}${outer.length > 0 ? `; inside ${outer.join(', ')}` : ''}` };
}

export class MemoryView {
  page = 0;
  #start = 0;
  #end = 0;

  constructor(private readonly into: HTMLElement, private readonly onByte: (owner: ByteOwner) => void) {}

  get pages(): number {
    return Math.max(1, Math.ceil((this.#end - this.#start) / PAGE));
  }

  /** Shows the page holding `address`. */
  showAddress(address: number): void {
    if (address >= this.#start && address < this.#end) this.page = Math.floor((address - this.#start) / PAGE);
  }

  render(bytes: Uint8Array | null, tree: StructTree | null, selected: Range | null, edited: ReadonlySet<number>, info: string): void {
    if (tree === null || bytes === null || tree.regions.length === 0) {
      this.into.replaceChildren(el('p', { class: 'explain', text: 'Nothing in memory: export the data (Lifecycle) to see its bytes.' }));
      return;
    }
    this.#start = Math.floor(Math.min(...tree.regions.map((r) => r.address)) / ROW) * ROW;
    this.#end = Math.ceil(Math.max(...tree.regions.map((r) => r.address + r.size)) / ROW) * ROW;
    this.page = Math.min(this.page, this.pages - 1);
    const from = this.#start + this.page * PAGE;
    const to = Math.min(this.#end, from + PAGE);
    const rows: HTMLElement[] = [];
    // The kind of the smallest region holding each byte of the page.
    const kinds = new Map<number, string>();
    const sizes = new Map<number, number>();
    for (const r of tree.regions) {
      for (let a = Math.max(r.address, from); a < Math.min(r.address + r.size, to); a++) {
        if (!sizes.has(a) || sizes.get(a)! > r.size) { kinds.set(a, r.kind); sizes.set(a, r.size); }
      }
    }
    for (let row = from; row < to; row += ROW) {
      const cells: HTMLElement[] = [];
      let ascii = '';
      for (let a = row; a < row + ROW; a++) {
        const b = a < bytes.length ? bytes[a]! : 0;
        const cls = ['b', kinds.has(a) ? `k-${kinds.get(a)}` : '', selected !== null && a >= selected.address && a < selected.address + selected.size ? 'sel' : '',
          edited.has(a) ? 'edited' : ''].filter((c) => c !== '').join(' ');
        const cell = el('span', { class: cls, 'data-a': a, text: b.toString(16).padStart(2, '0') });
        cells.push(cell);
        ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
      }
      rows.push(el('div', { class: 'row' }, el('span', { class: 'addr', text: hex8(row) }), ...cells, el('span', { class: 'ascii', text: ascii })));
    }
    const hexView = el('div', { class: 'hex' }, ...rows);
    hexView.addEventListener('click', (e) => {
      const a = (e.target as HTMLElement).dataset['a'];
      if (a !== undefined) this.onByte(ownerOf(tree, Number(a)));
    });
    const prev = el('button', { 'data-page': 'prev', disabled: this.page === 0, text: '◀ previous' });
    const next = el('button', { 'data-page': 'next', disabled: this.page >= this.pages - 1, text: 'next ▶' });
    prev.addEventListener('click', () => { this.page--; this.render(bytes, tree, selected, edited, info); });
    next.addEventListener('click', () => { this.page++; this.render(bytes, tree, selected, edited, info); });
    const legend = el('div', { class: 'legend' }, ...['struct', 'string', 'pointers', 'buffer', 'metadata', 'event']
      .map((k) => el('span', { class: `k-${k}`, text: k === 'pointers' ? 'pointer array' : k })));
    this.into.replaceChildren(
      el('div', { class: 'pager' }, prev, next,
        el('span', { class: 'mono', text: `page ${this.page + 1} of ${this.pages}: ${hex8(from)}–${hex8(to - 1)}` }),
        el('span', { class: 'hint', text: `(the export spans ${hex8(this.#start)}–${hex8(this.#end - 1)}, ${this.#end - this.#start} bytes)` })),
      legend, el('p', { class: 'byte-info', id: 'byte-info', text: info === '' ? 'Click a byte to see what it belongs to; select a field, buffer or struct to highlight its bytes.' : info }),
      hexView);
  }
}
