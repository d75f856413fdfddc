// The playground's page (browser only): loads the wasm core, builds the
// Data list, and renders the session (session.ts) into the Structs, Memory,
// Lifecycle, Break it, Devices and Streams panels after every action; the state goes into the
// URL hash (state.ts) and is restored from it. window.__playground is the
// hook the Playwright test (test/playground.test.ts) reads.

import { ArrowCDeviceError, load } from '../index.js';
import { samples, type StructTree } from '../inspect.js';
import { renderDevices } from './devices.js';
import { renderStreams } from './streams.js';
import { renderAsync } from './async-stream.js';
import { el } from './dom.js';
import { MemoryView, type ByteOwner, type Range } from './memory-view.js';
import { renderBreak, renderLifecycle } from './panels.js';
import { Session } from './session.js';
import { decodeState, encodeState, type Action } from './state.js';
import { markStructs, renderStructs, type Selection } from './structs-view.js';

const $ = (id: string) => document.getElementById(id)!;

/** The Data list's groups, by the samples' names. */
const GROUPS: [string, RegExp][] = [
  ['The demo', /^demo$/], ['Slices', /^sliced-/], ['Dictionaries', /^dictionary|^flags-dictionary/], ['Run-end encoded', /^run-end/],
  ['Views', /view/], ['Nested', /list|^map|struct|union|^flags-map/], ['Strings and binary', /binary|utf8/],
  ['Extensions', /^extension/], ['Primitives', /^(u?int|float|decimal|bool|date|time|duration|interval|null$)/], ['Edge cases', /./],
];

function rangeOf(tree: StructTree, s: Selection | null): Range | null {
  if (s === null) return null;
  const nodes = (list: StructTree['roots']): StructTree['roots'] => list.flatMap((n) => [n, ...nodes(n.children)]);
  if (s.kind === 'field') {
    const n = nodes(tree.roots).find((x) => x.id === s.node);
    const f = n?.fields.find((x) => x.name === s.field);
    return n === undefined || f === undefined ? null : { address: n.address + f.offset, size: f.size };
  }
  const id = s.id;
  const r = tree.regions.find((x) => x.id === id);
  if (r !== undefined) return r;
  const n = nodes(tree.roots).find((x) => x.id === id);
  return n === undefined ? null : { address: n.address, size: n.size };
}

async function main(): Promise<void> {
  const acd = await load();
  const session = new Session(acd, 'demo');
  let selection: Selection | null = null;
  let info = '';
  let scroll = false;
  const memory = new MemoryView($('memory-panel'), (owner: ByteOwner) => {
    info = owner.text;
    const r = owner.regions[0];
    selection = owner.field !== null ? { kind: 'field', node: owner.node!, field: owner.field }
      : r === undefined ? null : r.kind === 'struct' ? { kind: 'node', id: r.id } : { kind: 'region', id: r.id };
    scroll = true;
    render();
  });
  const status = (text: string) => { $('status').textContent = text; };

  const showTab = (tab: string) => {
    document.querySelectorAll<HTMLButtonElement>('.tabs button').forEach((b) => b.setAttribute('aria-selected', String(b.dataset['tab'] === tab)));
    document.querySelectorAll<HTMLElement>('.tab-panel').forEach((p) => { p.hidden = p.dataset['panel'] !== tab; });
  };
  document.querySelectorAll<HTMLButtonElement>('.tabs button').forEach((b) => b.addEventListener('click', () => showTab(b.dataset['tab']!)));

  const handlers = {
    select(s: Selection) {
      selection = s;
      info = '';
      const view = session.view();
      const r = view === null ? null : rangeOf(view.tree, s);
      if (r !== null) memory.showAddress(r.address);
      scroll = false;
      render();
    },
    follow(id: string) {
      const view = session.view();
      if (view === null) return;
      const isNode = (list: StructTree['roots']): boolean => list.some((n) => n.id === id || isNode(n.children));
      selection = isNode(view.tree.roots) ? { kind: 'node', id } : { kind: 'region', id };
      const r = rangeOf(view.tree, selection);
      if (r !== null) memory.showAddress(r.address);
      if (selection.kind === 'region' && !id.includes('.buffers[')) showTab('memory');
      info = r === null ? `${id}: not in this tree` : `${id}: ${r.size} bytes at 0x${r.address.toString(16).padStart(8, '0')}`;
      scroll = true;
      render();
    },
  };

  function act(a: Action): void {
    const before = session.edited;
    try {
      session.act(a);
      status('');
      // The Memory panel turns to the bytes just edited.
      const fresh = [...session.edited].filter((x) => !before.has(x));
      if (fresh.length > 0 && session.layout === 'wasm32') memory.showAddress(Math.min(...fresh));
    } catch (e) {
      if (!(e instanceof ArrowCDeviceError)) throw e;
      status(`not done: ${e.message}`);
    }
    render();
  }

  // The async stream's events arrive on the event loop: only its part and the live bytes re-render.
  const showAsync = () => {
    renderAsync($('async-stream'), session.async, (f) => {
      try {
        f();
        status('');
      } catch (e) {
        if (!(e instanceof ArrowCDeviceError)) throw e;
        status(`not done: ${e.message}`);
      }
      showAsync();
    }, (failing) => session.async.start(session.data.schema, session.data.batch, failing));
    $('live-bytes').textContent = `live bytes ${acd.bytesAllocated()} (start ${session.start})`;
  };
  session.async.onChange = showAsync;

  function render(): void {
    const d = session.data;
    $('source').textContent = `${d.fromFile ? 'file' : 'sample'} ${d.name}: ${d.description}`;
    $('live-bytes').textContent = `live bytes ${acd.bytesAllocated()} (start ${session.start})`;
    let view;
    try {
      view = session.view();
    } catch (e) {
      status(`cannot show this layout: ${(e as Error).message}`);
      view = null;
    }
    $('addresses').textContent = view === null ? '' : `${session.layout}: addresses are ${view.addresses}`;
    const live = session.liveTree();
    renderStructs($('tree'), view?.tree ?? null, 'Nothing exported: press export in the Lifecycle tab.', handlers);
    markStructs($('tree'), selection, scroll);
    scroll = false;
    memory.render(view?.bytes ?? null, view?.tree ?? null, view === null ? null : rangeOf(view.tree, selection),
      session.layout === 'wasm32' ? session.edited : new Set(), info);
    renderLifecycle($('lifecycle-panel'), session, act);
    renderBreak($('break-panel'), session, live, act);
    renderStreams($('pull-stream'), session.streams, (a) => act({ kind: 'stream', action: a }));
    showAsync();
    renderDevices($('devices-panel'), session.devices, (a, device) => act({ kind: 'device', action: a, ...(a === 'export' ? { device } : {}) }));
    document.querySelectorAll<HTMLButtonElement>('#samples button').forEach((b) => b.setAttribute('aria-current', String(!d.fromFile && b.dataset['sample'] === d.name)));
    document.querySelectorAll<HTMLInputElement>('input[name=layout]').forEach((r) => { r.checked = r.value === session.layout; });
    const hash = encodeState({ sample: d.fromFile ? null : d.name, layout: session.layout, actions: session.actions });
    history.replaceState(null, '', hash);
    ($('share') as HTMLAnchorElement).href = location.href;
  }

  function choose(data: Session['data']): void {
    session.setData(data);
    $('file-error').hidden = true;
    $('structs-panel').scrollTop = 0;
    selection = null;
    info = '';
    memory.page = 0;
    act({ kind: 'export' });
  }

  // Data: the samples, grouped and searchable.
  const list = samples();
  const groups = new Map<string, HTMLButtonElement[]>();
  for (const s of list) {
    const g = GROUPS.find(([, re]) => re.test(s.name))![0];
    const b = el('button', { 'data-sample': s.name, title: s.description, text: s.name });
    b.addEventListener('click', () => choose(Session.sampleData(s.name)));
    groups.set(g, [...(groups.get(g) ?? []), b]);
  }
  $('samples').replaceChildren(...GROUPS.filter(([g]) => groups.has(g)).map(([g]) => el('div', { 'data-group': g }, el('h3', { text: g }), ...groups.get(g)!)));
  const search = $('search') as HTMLInputElement;
  search.placeholder = `search ${list.length} samples`;
  search.addEventListener('input', () => {
    const q = search.value.trim().toLowerCase();
    document.querySelectorAll<HTMLElement>('#samples [data-group]').forEach((g) => {
      let any = false;
      g.querySelectorAll<HTMLButtonElement>('button').forEach((b) => {
        const show = q === '' || b.dataset['sample']!.includes(q) || (b.title ?? '').toLowerCase().includes(q);
        b.hidden = !show;
        any ||= show;
      });
      g.hidden = !any;
    });
  });

  // Data: a file, read by the library's own reader and validated fully.
  const openFile = async (file: File) => {
    const error = $('file-error');
    try {
      const data = session.fileData(file.name, new Uint8Array(await file.arrayBuffer()));
      error.hidden = true;
      choose(data);
    } catch (e) {
      if (!(e instanceof ArrowCDeviceError)) throw e;
      error.textContent = e.message;
      error.hidden = false;
    }
  };
  const fileInput = $('file') as HTMLInputElement;
  fileInput.addEventListener('change', () => { if (fileInput.files?.[0]) void openFile(fileInput.files[0]); });
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const f = e.dataTransfer?.files[0];
    if (f) void openFile(f);
  });

  document.querySelectorAll<HTMLInputElement>('input[name=layout]').forEach((r) => r.addEventListener('change', () => {
    session.layout = r.value === 'lp64' ? 'lp64' : 'wasm32';
    $('structs-panel').scrollTop = 0;
    selection = null;
    info = '';
    memory.page = 0;
    render();
  }));

  // The state in the URL: the sample, the layout, then every action replayed.
  const restore = (hash: string) => {
    const st = decodeState(hash);
    let data = Session.sampleData('demo');
    if (st.sample !== null) {
      try {
        data = Session.sampleData(st.sample);
      } catch (e) {
        status(`the link names no sample '${st.sample}': showing the demo`);
      }
    }
    session.setData(data);
    session.layout = st.layout;
    const actions = st.actions.length > 0 && st.actions[0]!.kind === 'export' ? st.actions : [{ kind: 'export' } as const, ...st.actions];
    for (const a of actions) act(a);
    if (st.ignored.length > 0) status(`left out of the link: ${st.ignored.join('; ')}`);
  };
  restore(location.hash);
  window.addEventListener('hashchange', () => restore(location.hash));

  (window as unknown as { __playground: unknown }).__playground = {
    ready: true,
    start: session.start,
    layout: () => session.layout,
    tree: () => session.view()?.tree ?? null,
    bytesAllocated: () => acd.bytesAllocated(),
    read: (address: number, size: number) => Array.from(new Uint8Array(acd.memory.buffer, address, size)),
    samples: () => list.map((s) => s.name),
  };
}

main().catch((e: unknown) => {
  const s = document.getElementById('status');
  if (s) s.textContent = `the playground failed to start: ${(e as Error)?.stack ?? String(e)}`;
  (window as unknown as { __playground: unknown }).__playground = { ready: false, error: String(e) };
});
