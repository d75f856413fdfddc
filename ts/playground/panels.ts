// The Lifecycle and Break it panels: buttons that act on the session (each
// through `act`, so that the URL records it) and what the steps did.

import type { ValidationLevel } from '../index.js';
import type { StructTree, TreeNode } from '../inspect.js';
import { el, hex8 } from './dom.js';
import { EDITABLE, LEVELS, type Session } from './session.js';
import type { Action } from './state.js';

type Act = (a: Action) => void;

function button(text: string, attrs: Record<string, string | boolean>, onClick: () => void): HTMLButtonElement {
  const b = el('button', { ...attrs, text });
  b.addEventListener('click', onClick);
  return b;
}

export function renderLifecycle(into: HTMLElement, s: Session, act: Act): void {
  const live = s.exported !== null;
  const imported = s.importMode !== null;
  const actions = el('div', { class: 'actions' },
    button('export', { 'data-act': 'export', disabled: live, title: 'exportDeviceRaw: the batch as an ArrowSchema and an ArrowDeviceArray in wasm memory' }, () => act({ kind: 'export' })),
    button('move', { 'data-act': 'move', disabled: !live || imported || s.moved !== null, title: 'the consumer moves the base structs into structs it allocated' }, () => act({ kind: 'move' })),
    button('import (copy)', { 'data-act': 'import-copy', disabled: !live || imported, title: 'importDeviceRaw, mode copy' }, () => act({ kind: 'import', mode: 'copy' })),
    button('import (view)', { 'data-act': 'import-view', disabled: !live || imported, title: 'importDeviceRaw, mode view' }, () => act({ kind: 'import', mode: 'view' })),
    button('release', { 'data-act': 'release', disabled: !live, title: 'Imported.release(), then ExportedArray.release()' }, () => act({ kind: 'release' })));
  const intro = el('p', { class: 'explain', text: 'The wasm core exports the batch; a consumer may move the base structs into its own (a bitwise copy, '
    + 'the source marked released), imports them (a move again), then each owner releases what it holds. Each step re-reads every struct\'s release field from memory.'
    + (s.layout === 'lp64' ? ' (The core is wasm32: these steps run in its memory whatever layout the tree shows.)' : '') });
  // The newest step first, just under the buttons.
  const steps = s.records.map((r, i) => el('div', { class: `step${r.ok ? '' : ' failed'}`, 'data-step': r.action, 'data-ok': String(r.ok), 'data-bytes': r.bytes },
    el('h4', { text: `${i + 1}. ${r.action}${r.ok ? '' : ' — refused'} · live bytes ${r.bytes} (${r.bytes - s.start >= 0 ? '+' : ''}${r.bytes - s.start} from the start, ${s.start})` }),
    el('p', { class: 'note', text: r.note }),
    el('table', {}, el('thead', {}, el('tr', {}, ...['struct', 'address', 'release', 'owner'].map((h) => el('th', { text: h })))),
      el('tbody', {}, ...r.structs.map((st) => el('tr', { 'data-struct-id': st.id, 'data-release': st.release },
        el('td', { class: 'mono', text: st.id }), el('td', { class: 'mono', text: hex8(st.address) }),
        el('td', { class: `mono${st.release === 'NULL' || st.release === 'freed' ? ' released' : ''}`, text: st.release }),
        el('td', { text: st.owner }))))),
  )).reverse();
  into.replaceChildren(intro, actions, ...steps);
}

function allNodes(nodes: readonly TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...allNodes(n.children)]);
}

export function renderBreak(into: HTMLElement, s: Session, tree: StructTree | null, act: Act): void {
  const parts: HTMLElement[] = [el('p', { class: 'explain', text: 'Change a field or a byte of the live export, then import it at each validation level '
    + '(each on a fresh export with the same edits, imported as a view, then restored and released): see where the validator stops it, '
    + 'or what \'none\' lets through.' })];
  if (tree === null || s.importMode !== null || s.moved !== null) {
    parts.push(el('p', { class: 'explain', text: s.exported === null ? 'Nothing is exported: press export (Lifecycle) first.'
      : 'This export was moved or imported: release it and export again to edit it.' }));
  } else {
    const fields = allNodes(tree.roots).flatMap((n) => n.fields.filter((f) => EDITABLE.has(f.name))
      .map((f) => el('option', { value: `${n.id}/${f.name}`, text: `${n.id} · ${f.name} = ${f.value}` })));
    const fieldSel = el('select', { id: 'edit-field', 'aria-label': 'field' }, ...fields);
    const fieldVal = el('input', { id: 'edit-value', size: 12, placeholder: 'new value', 'aria-label': 'new value' });
    const regions = tree.regions.filter((r) => r.kind !== 'struct' && r.kind !== 'event')
      .map((r) => el('option', { value: r.id, text: `${r.id} (${r.size} B, ${r.label})` }));
    const regionSel = el('select', { id: 'edit-region', 'aria-label': 'region' }, ...regions);
    const index = el('input', { id: 'edit-index', size: 4, value: '0', 'aria-label': 'byte index' });
    const byteVal = el('input', { id: 'edit-byte', size: 4, placeholder: 'hex', 'aria-label': 'byte value (hex)' });
    parts.push(el('div', { class: 'edit-form' },
      el('label', { for: 'edit-field', text: 'field' }), el('span', {}, fieldSel, ' = ', fieldVal, ' ',
        button('set', { 'data-act': 'set' }, () => {
          const [node, field] = [fieldSel.value.slice(0, fieldSel.value.lastIndexOf('/')), fieldSel.value.slice(fieldSel.value.lastIndexOf('/') + 1)];
          act({ kind: 'edit', edit: { kind: 'field', node, field, value: fieldVal.value.trim() } });
        })),
      el('label', { for: 'edit-region', text: 'byte of' }), el('span', {}, regionSel, ' at ', index, ' = 0x', byteVal, ' ',
        button('set byte', { 'data-act': 'set-byte' }, () => {
          act({ kind: 'edit', edit: { kind: 'byte', region: regionSel.value, index: Number(index.value), value: parseInt(byteVal.value, 16) & 0xff } });
        }))));
  }
  parts.push(el('ul', { class: 'edits' }, ...s.edits.map((e) => el('li', { class: 'mono', 'data-edit': '',
    text: e.kind === 'field' ? `${e.node}.${e.field} = ${e.value}` : `${e.region}[${e.index}] = 0x${e.value.toString(16).padStart(2, '0')}` }))));
  parts.push(el('div', { class: 'actions' },
    ...LEVELS.map((l: ValidationLevel) => button(`import at ${l}`, { 'data-try': l }, () => act({ kind: 'try', level: l }))),
    button('all levels', { 'data-try': 'all' }, () => act({ kind: 'try', level: 'all' })),
    button('restore', { 'data-act': 'restore', disabled: s.edits.length === 0 }, () => act({ kind: 'restore' }))));
  if (s.trials.length > 0) {
    parts.push(el('table', { class: 'trials' }, el('tbody', {}, ...s.trials.map((t) => el('tr', { class: t.ok ? 'pass' : 'fail', 'data-level': t.level, 'data-ok': String(t.ok) },
      el('td', { class: 'level', text: t.level }), el('td', { class: 'result', text: t.ok ? t.message : `error: ${t.message}` }))))));
  }
  into.replaceChildren(...parts);
}
