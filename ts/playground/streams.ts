// The Streams panel (pull streams only): the batch three times as an
// ArrowArrayStream in wasm memory, or a stream whose producer fails at its
// second batch; import it (the consumer moves the struct and calls
// get_schema), step get_next to the end (the released array) or to the
// error (get_next's code and get_last_error's message), then release, with
// the live bytes back to their start.

import { ArrowCDeviceError, errnoName, toArrowTable, type ArrowCDevice, type ExportedStream, type RawArray, type StreamReader, type types } from '../index.js';
import type * as arrow from 'apache-arrow';
import { el, hex8 } from './dom.js';

export type StreamAction = 'export' | 'export-failing' | 'import' | 'next' | 'release';

export interface StreamStep {
  readonly action: string;
  readonly ok: boolean;
  readonly note: string;
  readonly bytes: number;
}

export class StreamLab {
  exported: ExportedStream | null = null;
  reader: StreamReader | null = null;
  steps: StreamStep[] = [];
  #start = 0;

  constructor(private readonly acd: ArrowCDevice) {}

  private record(action: string, ok: boolean, note: string): void {
    this.steps.push({ action, ok, note, bytes: this.acd.bytesAllocated() });
  }

  /** The producer's struct's release field, re-read from memory. */
  private releaseField(): string {
    const p = this.acd.core.structs.ptr('ArrowArrayStream', this.exported!.ptr, 'release');
    return p === 0 ? 'NULL' : hex8(p);
  }

  act(action: StreamAction, schema: types.Schema, batch: RawArray): void {
    switch (action) {
      case 'export':
      case 'export-failing': {
        if (this.exported !== null) throw new ArrowCDeviceError('a stream is live: release it first', 22);
        let table: arrow.Table;
        try {
          table = toArrowTable(schema, [batch, batch, batch]);
        } catch (e) {
          throw new ArrowCDeviceError(`the stream carries apache-arrow batches, and this sample has data apache-arrow cannot hold: ${(e as Error).message}`, 22);
        }
        this.steps = [];
        this.#start = this.acd.bytesAllocated();
        const batches = table.batches;
        const source = action === 'export' ? table : (function* failing() {
          yield batches[0]!;
          throw new Error('the producer lost its input while reading batch 1');
        })();
        this.exported = this.acd.exportArrayStream(source, { schema: table.schema });
        this.record(action === 'export' ? 'export (3 batches)' : 'export (fails at batch 1)', true,
          `exportArrayStream: an ArrowArrayStream at ${hex8(this.exported.ptr)}, release = ${this.releaseField()}; no batch is made before get_next asks`);
        return;
      }
      case 'import': {
        if (this.exported === null || this.reader !== null) throw new ArrowCDeviceError('import needs an exported stream not yet imported', 22);
        this.reader = this.acd.importArrayStream(this.exported.ptr);
        this.record('import: get_schema', true, `the consumer moved the stream (the producer's struct now has release = ${this.releaseField()}) `
          + `and called get_schema: ${this.reader.schema.fields.map((f) => `${f.name}: ${f.type}`).join(', ')}`);
        return;
      }
      case 'next': {
        if (this.reader === null) throw new ArrowCDeviceError('get_next needs an imported stream', 22);
        if (this.reader.done) throw new ArrowCDeviceError('the stream was released (its end or an error): release it', 22);
        try {
          const h = this.reader.nextHandle();
          if (h === null) this.record('get_next', true, 'returned 0 with a released array (release == NULL): the end of the stream; the consumer released the stream');
          else this.record('get_next', true, `returned 0: batch ${this.reader.batchesRead - 1}, ${h.value.numRows} rows (imported, copied into JS)`);
        } catch (e) {
          if (!(e instanceof ArrowCDeviceError)) throw e;
          this.record('get_next', false, `returned ${e.errno} (${e.code}); get_last_error: ${e.message}`);
        }
        return;
      }
      case 'release':
        if (this.exported === null) throw new ArrowCDeviceError('no stream to release', 22);
        this.reset();
        this.record('release', this.acd.bytesAllocated() === this.#start,
          `StreamReader.release() and ExportedStream.release(): live bytes ${this.acd.bytesAllocated() === this.#start ? 'back to' : 'NOT back to'} ${this.#start}`);
        return;
    }
  }

  reset(): void {
    this.reader?.release();
    this.exported?.release();
    this.reader = null;
    this.exported = null;
  }
}

export function renderStreams(into: HTMLElement, lab: StreamLab, act: (a: StreamAction) => void): void {
  const live = lab.exported !== null;
  const button = (text: string, a: StreamAction, enabled: boolean) => {
    const b = el('button', { 'data-stream-act': a, disabled: !enabled, text });
    b.addEventListener('click', () => act(a));
    return b;
  };
  const parts: HTMLElement[] = [
    el('p', { class: 'explain', text: 'A pull stream (ArrowArrayStream) of this batch three times. The consumer calls get_schema once, then get_next until it '
      + 'gives a released array (the end) or an error code, whose message get_last_error gives.' }),
    el('div', { class: 'actions' }, button('export a stream', 'export', !live), button('export a failing stream', 'export-failing', !live),
      button('import (get_schema)', 'import', live && lab.reader === null), button('get_next', 'next', lab.reader !== null && !lab.reader.done),
      button('release', 'release', live)),
  ];
  if (lab.steps.length > 0) {
    parts.push(el('table', { class: 'trials stream-steps' }, el('tbody', {}, ...lab.steps.map((s, i) => el('tr', { class: s.ok ? 'pass' : 'fail', 'data-stream-step': s.action, 'data-ok': String(s.ok) },
      el('td', { class: 'level', text: `${i + 1}. ${s.action}` }), el('td', { class: 'result', text: s.note }), el('td', { class: 'mono', text: `${s.bytes} B` }))))));
  }
  into.replaceChildren(...parts);
}
