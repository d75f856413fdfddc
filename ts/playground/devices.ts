// The Devices panel: the batch exported onto a simulated device (cuda:1,
// metal:0, ...), its sync event, a read of a device buffer before waiting
// (refused with EBUSY: the copies are still pending on the device's stream),
// the wait, the copy to the host, the release; and a timeline of the
// device stream's work (operations enqueued, executed, pending; events
// recorded and waited on; device bytes) after each step.

import { ArrowCDeviceError, errnoName, rawValues, type ArrowCDevice, type ExportedArray, type Imported, type RawArray, type RawImport, types } from '../index.js';
import { structTree, type TreeNode } from '../inspect.js';
import { el, hex8 } from './dom.js';

export const DEVICES = ['cuda:1', 'metal:0', 'rocm:0', 'opencl:0', 'webgpu:0'] as const;
export type DeviceName = (typeof DEVICES)[number];
export type DeviceAction = 'export' | 'read' | 'wait' | 'copy' | 'release';

export interface DeviceStep {
  readonly action: string;
  readonly ok: boolean;
  readonly note: string;
  /** The device's counters since the export: ops enqueued, executed, pending; events recorded, waited; its live bytes. */
  readonly enqueued: number;
  readonly executed: number;
  readonly pending: number;
  readonly recorded: number;
  readonly waited: number;
  readonly bytes: number;
}

function nodes(list: readonly TreeNode[]): TreeNode[] {
  return list.flatMap((n) => [n, ...nodes(n.children)]);
}

export class DeviceLab {
  device: DeviceName = 'cuda:1';
  exported: ExportedArray | null = null;
  #base = { enqueued: 0, executed: 0, recorded: 0, waited: 0 };
  steps: DeviceStep[] = [];
  /** The device array's root as read after the export (its buffers are not read from the host). */
  root: TreeNode | null = null;

  constructor(private readonly acd: ArrowCDevice) {}

  private stats() {
    const d = this.acd.deviceStats().devices.find((x) => x.name === this.device);
    return d ?? { opsEnqueued: 0, opsExecuted: 0, opsPending: 0, eventsRecorded: 0, eventsWaited: 0, bytesAllocated: 0 };
  }

  private record(action: string, ok: boolean, note: string): void {
    const d = this.stats();
    this.steps.push({ action, ok, note, enqueued: d.opsEnqueued - this.#base.enqueued, executed: d.opsExecuted - this.#base.executed, pending: d.opsPending,
      recorded: d.eventsRecorded - this.#base.recorded, waited: d.eventsWaited - this.#base.waited, bytes: this.acd.deviceBytesAllocated(this.device) });
  }

  /** The first device buffer with data (a column's values). */
  private firstBuffer(): { id: string; address: number } | null {
    const b = nodes(this.root === null ? [] : [this.root]).flatMap((n) => n.buffers).find((x) => x.address !== 0 && x.index > 0);
    return b === undefined ? null : { id: b.id, address: b.address };
  }

  act(action: DeviceAction, field: types.Field, batch: RawArray, device?: DeviceName): void {
    switch (action) {
      case 'export': {
        if (this.exported !== null) throw new ArrowCDeviceError('a device export is live: release it first', 22);
        this.device = device ?? this.device;
        const d = this.stats();
        this.#base = { enqueued: d.opsEnqueued, executed: d.opsExecuted, recorded: d.eventsRecorded, waited: d.eventsWaited };
        this.steps = [];
        this.exported = this.acd.exportDeviceRaw(field, batch, { device: this.device });
        this.root = structTree(this.acd.core, this.exported.schema, { struct: 'ArrowDeviceArray', address: this.exported.array }).roots[1] ?? null;
        const event = this.root?.fields.find((f) => f.name === 'sync_event');
        this.record(`export onto ${this.device}`, true, `every buffer copied onto ${this.device} on its stream, then a sync event recorded: `
          + `sync_event = ${event?.value ?? '?'} (${event?.meaning ?? ''})`);
        return;
      }
      case 'read': {
        const b = this.live().firstBuffer();
        if (b === null) throw new ArrowCDeviceError('this batch has no device buffer with data', 22);
        try {
          const bytes = this.acd.readDeviceMemory(b.address, 8);
          this.record('read a buffer', true, `${b.id} at ${hex8(b.address)}: ${[...bytes].map((x) => x.toString(16).padStart(2, '0')).join(' ')}`);
        } catch (e) {
          if (!(e instanceof ArrowCDeviceError)) throw e;
          this.record('read a buffer', false, `${e.code}: ${e.message}`);
        }
        return;
      }
      case 'wait':
        this.acd.syncDeviceArray(this.live().exported!.array);
        this.record('wait on sync_event', true, 'the host waited on the event (as cudaEventSynchronize): the stream\'s pending copies ran');
        return;
      case 'copy': {
        let imported: Imported<RawImport> | null = null;
        try {
          imported = this.acd.importDeviceRaw(this.live().exported!.schema, this.exported!.array, { device: 'copy', validate: 'full' });
          const v = imported.value;
          const cols = (v.field.type.kind === 'struct' ? v.field.type.children : []).map((f, i) => `'${f.name}': ${JSON.stringify(rawValues(v.array.children[i]!).slice(0, 4),
            (_, x: unknown) => (typeof x === 'bigint' ? `${x}` : x))}`);
          this.record('copy to the host', true, `importDeviceRaw (device: 'copy'): waited on the event, copied every buffer to the host, validated; the device memory is freed: ${cols.join('; ')}`);
        } finally {
          imported?.release();
        }
        return;
      }
      case 'release':
        this.live().exported!.release();
        this.exported = null;
        this.record('release', this.acd.deviceBytesAllocated(this.device) === 0, 'ExportedArray.release(): what is left on the device is freed');
        return;
    }
  }

  private live(): this {
    if (this.exported === null) throw new ArrowCDeviceError('nothing is exported onto a device: export first', 22);
    return this;
  }

  reset(): void {
    this.exported?.release();
    this.exported = null;
    this.root = null;
    this.steps = [];
  }
}

export function renderDevices(into: HTMLElement, lab: DeviceLab, act: (a: DeviceAction, device?: DeviceName) => void): void {
  const live = lab.exported !== null;
  const select = el('select', { id: 'device', 'aria-label': 'device', disabled: live }, ...DEVICES.map((d) => el('option', { value: d, selected: d === lab.device, text: d })));
  const button = (text: string, a: DeviceAction, enabled: boolean) => {
    const b = el('button', { 'data-device-act': a, disabled: !enabled, text });
    b.addEventListener('click', () => act(a, select.value as DeviceName));
    return b;
  };
  const parts: HTMLElement[] = [
    el('p', { class: 'explain', text: 'Export the batch onto a simulated device: its buffers are copied there on the device\'s stream and a sync event is recorded. '
      + 'The host may not read them before waiting on that event.' }),
    el('div', { class: 'actions' }, select, button('export', 'export', !live), button('read a buffer', 'read', live), button('wait on sync_event', 'wait', live),
      button('copy to the host', 'copy', live), button('release', 'release', live)),
  ];
  if (lab.root !== null && live) {
    parts.push(el('table', { class: 'device-fields' }, el('tbody', {}, ...lab.root.fields.filter((f) => f.kind !== 'struct' && f.name !== 'reserved')
      .map((f) => el('tr', { 'data-field': f.name }, el('td', { class: 'mono', text: f.name }), el('td', { class: 'mono', text: f.value }), el('td', { text: f.meaning ?? '' }))))));
  }
  if (lab.steps.length > 0) {
    parts.push(el('h3', { class: 'sub', text: `Timeline of ${lab.device}'s stream (counts since the export)` }),
      el('table', { class: 'timeline' }, el('thead', {}, el('tr', {}, ...['step', 'ops enqueued', 'executed', 'pending', 'events recorded', 'waited', 'device bytes']
        .map((h) => el('th', { text: h })))),
      el('tbody', {}, ...lab.steps.flatMap((s) => [
        el('tr', { class: s.ok ? 'pass' : 'fail', 'data-device-step': s.action, 'data-ok': String(s.ok) }, el('td', { text: s.action }),
          ...[s.enqueued, s.executed, s.pending, s.recorded, s.waited, s.bytes].map((n) => el('td', { class: 'mono', text: String(n) }))),
        el('tr', { class: s.ok ? 'pass note-row' : 'fail note-row' }, el('td', { colspan: 7, class: 'note', text: s.note })),
      ]))));
  }
  into.replaceChildren(...parts);
}
