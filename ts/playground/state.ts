// The playground's state in the URL hash, so that a link reopens what a
// learner did: the sample, the layout, and every action in order
//   #sample=demo&layout=wasm32&steps=export;set:device.array.children[0]/offset=3;try:all
// Actions: export, move, import:copy, import:view, release, restore, try:LEVEL
// (none, minimal, default, full or all), set:NODE/FIELD=VALUE (a struct
// field), byte:REGION@INDEX=VALUE (a byte of a string, pointer array or
// buffer; VALUE in hex); the Devices panel's device:export:DEVICE,
// device:read, device:wait, device:copy, device:release; the Streams
// panel's stream:export, stream:export-failing, stream:import, stream:next,
// stream:release.

import type { ValidationLevel } from '../index.js';
import type { InspectLayout } from '../inspect.js';
import { DEVICES, type DeviceAction, type DeviceName } from './devices.js';
import type { StreamAction } from './streams.js';

export type Edit =
  | { readonly kind: 'field'; readonly node: string; readonly field: string; readonly value: string }
  | { readonly kind: 'byte'; readonly region: string; readonly index: number; readonly value: number };

export type Action =
  | { readonly kind: 'export' | 'move' | 'release' | 'restore' }
  | { readonly kind: 'import'; readonly mode: 'copy' | 'view' }
  | { readonly kind: 'edit'; readonly edit: Edit }
  | { readonly kind: 'try'; readonly level: ValidationLevel | 'all' }
  | { readonly kind: 'device'; readonly action: DeviceAction; readonly device?: DeviceName }
  | { readonly kind: 'stream'; readonly action: StreamAction };

export interface State {
  /** A sample's name, or null for a file (which a URL cannot hold). */
  readonly sample: string | null;
  readonly layout: InspectLayout;
  readonly actions: readonly Action[];
}

export function actionText(a: Action): string {
  switch (a.kind) {
    case 'import': return `import:${a.mode}`;
    case 'try': return `try:${a.level}`;
    case 'stream': return `stream:${a.action}`;
    case 'device': return a.action === 'export' ? `device:export:${a.device ?? 'cuda:1'}` : `device:${a.action}`;
    case 'edit': return a.edit.kind === 'field' ? `set:${a.edit.node}/${a.edit.field}=${a.edit.value}`
      : `byte:${a.edit.region}@${a.edit.index}=${a.edit.value.toString(16).padStart(2, '0')}`;
    default: return a.kind;
  }
}

/** The action a text names, or null when it names none. */
export function parseAction(text: string): Action | null {
  if (text === 'export' || text === 'move' || text === 'release' || text === 'restore') return { kind: text };
  if (text === 'import:copy' || text === 'import:view') return { kind: 'import', mode: text === 'import:copy' ? 'copy' : 'view' };
  const st = /^stream:(export|export-failing|import|next|release)$/.exec(text);
  if (st) return { kind: 'stream', action: st[1] as StreamAction };
  const d = /^device:(export:(.+)|read|wait|copy|release)$/.exec(text);
  if (d) {
    if (d[2] === undefined) return { kind: 'device', action: d[1] as DeviceAction };
    return (DEVICES as readonly string[]).includes(d[2]) ? { kind: 'device', action: 'export', device: d[2] as DeviceName } : null;
  }
  let m = /^try:(none|minimal|default|full|all)$/.exec(text);
  if (m) return { kind: 'try', level: m[1] as ValidationLevel | 'all' };
  m = /^set:([^/]+)\/([a-z_]+)=(-?(?:0x[0-9a-f]+|\d+))$/i.exec(text);
  if (m) return { kind: 'edit', edit: { kind: 'field', node: m[1]!, field: m[2]!, value: m[3]! } };
  m = /^byte:([^@]+)@(\d+)=([0-9a-f]{1,2})$/i.exec(text);
  if (m) return { kind: 'edit', edit: { kind: 'byte', region: m[1]!, index: Number(m[2]), value: parseInt(m[3]!, 16) } };
  return null;
}

// Characters a hash may hold as they are, kept readable.
const readable = (s: string) => encodeURIComponent(s).replace(/%(3B|3A|2F|3D|5B|5D|40|2C)/g, (_, c: string) => String.fromCharCode(parseInt(c, 16)));

export function encodeState(s: State): string {
  const parts = [`layout=${s.layout}`];
  if (s.sample !== null) parts.unshift(`sample=${readable(s.sample)}`);
  if (s.sample !== null && s.actions.length > 0) parts.push(`steps=${s.actions.map((a) => readable(actionText(a))).join(';')}`);
  return `#${parts.join('&')}`;
}

/** The state a hash holds; unknown actions are left out and named in `ignored`. */
export function decodeState(hash: string): State & { ignored: string[] } {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const layout = p.get('layout') === 'lp64' ? 'lp64' : 'wasm32';
  const ignored: string[] = [];
  const actions: Action[] = [];
  for (const t of (p.get('steps') ?? '').split(';').filter((x) => x !== '')) {
    const a = parseAction(t);
    if (a === null) ignored.push(t);
    else actions.push(a);
  }
  return { sample: p.get('sample'), layout, actions, ignored };
}
