// The Streams panel's asynchronous device stream: a TS producer
// (acd.produceAsync) drives a handler made here, and the learner is the
// consumer. on_schema arrives first; no task comes until request(n) gives
// credit, then at most n on_next_task calls, each task's extract_data
// called inside it; cancel stops the producer; a failing producer calls
// on_error; the producer's release of the handler ends the stream. Events
// arrive on the page's event loop, so the log re-renders by `onChange`.
// These steps are not in the URL (they depend on when events arrive).

import type * as arrow from 'apache-arrow';
import { ArrowCDeviceError, toArrowTable, type ArrowCDevice, type ImportedSchema, type RawArray, type types } from '../index.js';
import { coreAsyncCalls, type AsyncCalls } from '../stream/async-calls.js';
import { el } from './dom.js';

export interface AsyncEvent {
  readonly event: string;
  readonly text: string;
  /** Tasks the producer may still send: requested minus received. */
  readonly credit: number;
  readonly bytes: number;
}

export class AsyncLab {
  events: AsyncEvent[] = [];
  /** Between start and the handler's release. */
  running = false;
  #calls: AsyncCalls | null = null;
  #handler = 0;
  #producer = 0;
  #schema: ImportedSchema | null = null;
  #credit = 0;
  #generation = 0;
  onChange: () => void = () => {};

  constructor(private readonly acd: ArrowCDevice) {}

  get credit(): number {
    return this.#credit;
  }

  get hasProducer(): boolean {
    return this.#producer !== 0 && this.running;
  }

  private log(event: string, text: string): void {
    this.events.push({ event, text, credit: this.#credit, bytes: this.acd.bytesAllocated() });
    this.onChange();
  }

  /** Starts a producer of `n` copies of the batch (failing after the first when `failing`). */
  start(schema: types.Schema, batch: RawArray, failing: boolean): void {
    if (this.running) throw new ArrowCDeviceError('an async stream is running: cancel it first', 22);
    let table: arrow.Table;
    try {
      table = toArrowTable(schema, [batch, batch, batch, batch, batch]);
    } catch (e) {
      throw new ArrowCDeviceError(`the stream carries apache-arrow batches, and this sample has data apache-arrow cannot hold: ${(e as Error).message}`, 22);
    }
    const calls = coreAsyncCalls(this.acd.core);
    const generation = ++this.#generation;
    this.#calls = calls;
    this.events = [];
    this.#credit = 0;
    this.running = true;
    const s = this.acd.core.structs;
    const batches = table.batches;
    this.#handler = calls.makeHandler({
      onSchema: (schemaPtr) => {
        this.#producer = s.ptr('ArrowAsyncDeviceStreamHandler', this.#handler, 'producer');
        this.#schema = calls.importSchema(schemaPtr);
        this.log('on_schema', `the producer's schema, moved in: ${this.#schema.schema.fields.map((f) => f.name).join(', ')}; no task comes before request(n)`);
        return 0;
      },
      onNextTask: (task) => {
        if (task === 0) {
          this.log('on_next_task', 'task NULL: the end of the stream');
          return 0;
        }
        this.#credit--;
        const out = calls.alloc(s.size('ArrowDeviceArray'));
        const code = calls.extract(task, out);
        if (code !== 0) {
          calls.free(out);
          this.log('extract_data', `returned ${code}: ${calls.refusal()}`);
          return 0;
        }
        try {
          const imported = this.acd.importDeviceRaw(this.#schema!, out, { device: 'copy' });
          const rows = imported.value.array.length;
          imported.release();
          this.log('on_next_task', `a task; extract_data moved its ArrowDeviceArray out (code 0): ${rows} rows, imported and released`);
        } finally {
          calls.free(out);
        }
        return 0;
      },
      onError: (code, message) => {
        const text = message === 0 ? '(no message)' : s.cString(message, 'on_error message');
        this.log('on_error', `code ${code}: ${text}`);
      },
      release: () => {
        this.#schema?.release();
        this.#schema = null;
        this.#producer = 0;
        if (generation === this.#generation) this.running = false;
        this.log('release', 'the producer released the handler: the stream is over');
      },
    });
    const source = failing ? (async function* failingSource() {
      yield batches[0]!;
      throw new Error('the producer lost its input after batch 0');
    })() : table;
    this.acd.produceAsync(this.#handler, source, { schema: table.schema });
  }

  request(n: number): void {
    if (!this.hasProducer) throw new ArrowCDeviceError('no producer to ask: start a stream (and wait for on_schema)', 22);
    if (!Number.isInteger(n) || n <= 0) throw new ArrowCDeviceError(`request(n): n must be a whole number > 0, found ${n}`, 22);
    this.#credit += n;
    this.log(`request(${n})`, `the consumer gives credit for ${n} more task${n === 1 ? '' : 's'}`);
    this.#calls!.request(this.#producer, BigInt(n));
  }

  cancel(): void {
    if (!this.hasProducer) throw new ArrowCDeviceError('no producer to cancel', 22);
    this.log('cancel', 'the consumer asks the producer to stop: no on_error follows, only release');
    this.#calls!.cancel(this.#producer);
  }

  /** Before new data: a running stream is cancelled (its handler goes with the producer's release). */
  reset(): void {
    if (this.hasProducer) this.#calls!.cancel(this.#producer);
    this.events = [];
  }
}

export function renderAsync(into: HTMLElement, lab: AsyncLab, act: (f: () => void) => void, start: (failing: boolean) => void): void {
  const button = (text: string, name: string, enabled: boolean, f: () => void) => {
    const b = el('button', { 'data-async-act': name, disabled: !enabled, text });
    b.addEventListener('click', () => act(f));
    return b;
  };
  const n = el('input', { id: 'async-n', size: 3, value: '2', 'aria-label': 'n' });
  const parts: HTMLElement[] = [
    el('h3', { class: 'sub', text: 'The asynchronous device stream (ArrowAsyncDeviceStreamHandler)' }),
    el('p', { class: 'explain', text: 'A producer of this batch five times drives a handler; you are the consumer. on_schema comes first; tasks come only '
      + 'within the credit that request(n) gives. (These steps are not in the link: they depend on when events arrive.)' }),
    el('div', { class: 'actions' },
      button('start', 'start', !lab.running, () => start(false)), button('start a failing producer', 'start-failing', !lab.running, () => start(true)),
      el('span', {}, 'request(', n, ')'), button('request(n)', 'request', lab.hasProducer, () => lab.request(Number(n.value))),
      button('cancel', 'cancel', lab.hasProducer, () => lab.cancel()),
      el('span', { class: 'mono', 'data-credit': lab.credit, text: `credit ${lab.credit}` })),
  ];
  if (lab.events.length > 0) {
    parts.push(el('table', { class: 'trials async-events' }, el('tbody', {}, ...lab.events.map((e, i) => el('tr', { 'data-event': e.event, class: e.event === 'on_error' ? 'fail' : 'pass' },
      el('td', { class: 'level', text: `${i + 1}. ${e.event}` }), el('td', { class: 'result', text: e.text }),
      el('td', { class: 'mono', text: `credit ${e.credit}` }), el('td', { class: 'mono', text: `${e.bytes} B` }))))));
  }
  into.replaceChildren(...parts);
}
