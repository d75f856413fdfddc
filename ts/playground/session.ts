// The playground's model, without the DOM: the data shown (a sample or a
// file), the live export in the core's memory and the lifecycle steps taken
// on it (export, import by copy or view, release), the bytes a learner edited
// in it and the imports tried at each validation level on a fresh export
// with the same edits. main.ts renders it; state.ts puts its steps in the URL.

import { readChecked } from '../cli/input.js';
import { ArrowCDeviceError, rawValues, types, type ArrowCDevice, type ExportedArray, type Imported, type RawArray, type RawImport, type ValidationLevel } from '../index.js';
import { batchTree, sample, structTree, type InspectLayout, type StructTree, type TreeNode } from '../inspect.js';
import { DeviceLab } from './devices.js';
import { StreamLab } from './streams.js';
import { AsyncLab } from './async-stream.js';
import type { Action, Edit } from './state.js';

export interface Data {
  /** The sample's name, or the file's. */
  readonly name: string;
  readonly description: string;
  readonly schema: types.Schema;
  readonly batch: RawArray;
  readonly fromFile: boolean;
}

/** One struct's state after a step: its release callback re-read from memory, and who owns it. */
export interface StructState {
  readonly id: string;
  readonly address: number;
  /** The release field as read now ('NULL' when released or moved out), or 'freed'. */
  readonly release: string;
  readonly owner: string;
}

export interface StepRecord {
  readonly action: string;
  readonly ok: boolean;
  readonly note: string;
  /** acd.bytesAllocated() after the step. */
  readonly bytes: number;
  readonly structs: readonly StructState[];
}

export interface Trial {
  readonly level: ValidationLevel;
  readonly ok: boolean;
  /** The validator's error, or what the import read. */
  readonly message: string;
}

export const LEVELS: readonly ValidationLevel[] = ['none', 'minimal', 'default', 'full'];

/** Fields a learner may edit: not the callbacks and private data (that would break the release, not the import). */
export const EDITABLE = new Set(['length', 'null_count', 'offset', 'n_buffers', 'n_children', 'buffers', 'children', 'dictionary',
  'format', 'name', 'metadata', 'flags', 'device_id', 'device_type', 'sync_event']);

const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

function allNodes(nodes: readonly TreeNode[]): TreeNode[] {
  return nodes.flatMap((n) => [n, ...allNodes(n.children)]);
}

/** The value of an edit as a number of its field's kind (decimal, or hex with 0x). */
function parseValue(text: string): bigint {
  if (!/^-?(0x[0-9a-f]+|\d+)$/i.test(text.trim())) throw new ArrowCDeviceError(`'${text}' is not a number (decimal, or hex with 0x)`, 22);
  const t = text.trim();
  return t.startsWith('-') ? -BigInt(t.slice(1)) : BigInt(t);
}

/** Writes an edit into the export whose tree is `tree`, saving each byte's first value in `saved`. */
export function applyEdit(acd: ArrowCDevice, tree: StructTree, edit: Edit, saved: Map<number, number>): void {
  let address: number;
  let bytes: Uint8Array;
  if (edit.kind === 'field') {
    const node = allNodes(tree.roots).find((n) => n.id === edit.node);
    const field = node?.fields.find((f) => f.name === edit.field);
    if (node === undefined || field === undefined) throw new ArrowCDeviceError(`no field ${edit.node}.${edit.field} in this tree`, 22);
    if (!EDITABLE.has(field.name)) throw new ArrowCDeviceError(`${edit.field} is not editable here`, 22);
    address = node.address + field.offset;
    const v = parseValue(edit.value);
    bytes = new Uint8Array(field.size);
    const view = new DataView(bytes.buffer);
    if (field.size === 8) view.setBigInt64(0, BigInt.asIntN(64, v), true);
    else view.setInt32(0, Number(BigInt.asIntN(32, v)), true);
  } else {
    const region = tree.regions.find((r) => r.id === edit.region);
    if (region === undefined) throw new ArrowCDeviceError(`no region ${edit.region} in this tree`, 22);
    if (edit.index < 0 || edit.index >= region.size) throw new ArrowCDeviceError(`${edit.region} has ${region.size} bytes: no byte ${edit.index}`, 22);
    address = region.address + edit.index;
    bytes = Uint8Array.of(edit.value & 0xff);
  }
  const memory = new Uint8Array(acd.memory.buffer);
  bytes.forEach((b, i) => {
    if (!saved.has(address + i)) saved.set(address + i, memory[address + i]!);
    memory[address + i] = b;
  });
}

function restoreBytes(acd: ArrowCDevice, saved: Map<number, number>): void {
  const memory = new Uint8Array(acd.memory.buffer);
  for (const [address, b] of saved) memory[address] = b;
  saved.clear();
}

/** A few values of each column, to show what an import read. */
function summary(raw: RawImport): string {
  const fields = raw.field.type.kind === 'struct' ? raw.field.type.children : [];
  const columns = fields.map((f, i) => {
    const child = raw.array.children[i];
    if (child === undefined) return `'${f.name}': missing`;
    try {
      const values = rawValues(child).slice(0, 6).map((v) => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? `${x}` : x)) ?? 'undefined');
      return `'${f.name}': [${values.join(', ')}${child.length > 6 ? ', ...' : ''}]`;
    } catch (e) {
      return `'${f.name}': unreadable (${(e as Error).message})`;
    }
  });
  return `${raw.array.length} rows; ${columns.join('; ')}`;
}

export class Session {
  /** acd.bytesAllocated() when the playground started. */
  readonly start: number;
  data: Data;
  layout: InspectLayout = 'wasm32';
  exported: ExportedArray | null = null;
  /** Where the base structs were moved by the 'move' step (structs the consumer allocated), or null. */
  moved: { readonly schema: number; readonly array: number } | null = null;
  imported: Imported<RawImport> | null = null;
  importMode: 'copy' | 'view' | null = null;
  /** Structs seen at the export (their ids and addresses), re-read at each step. */
  #exportedNodes: TreeNode[] = [];
  /** Original bytes under the edits of the live export. */
  readonly #saved = new Map<number, number>();
  edits: Edit[] = [];
  records: StepRecord[] = [];
  trials: Trial[] = [];
  /** Every action since the data was chosen (the URL holds them). */
  actions: Action[] = [];

  /** The Devices panel's export, separate from the lifecycle's. */
  readonly devices: DeviceLab;
  /** The Streams panel's stream. */
  readonly streams: StreamLab;
  /** The Streams panel's asynchronous stream (not in the URL). */
  readonly async: AsyncLab;

  constructor(readonly acd: ArrowCDevice, initial: string) {
    this.start = acd.bytesAllocated();
    this.devices = new DeviceLab(acd);
    this.streams = new StreamLab(acd);
    this.async = new AsyncLab(acd);
    this.data = Session.sampleData(initial);
  }

  static sampleData(name: string): Data {
    const s = sample(name);
    return { name: s.name, description: s.description, schema: s.schema, batch: s.batch, fromFile: false };
  }

  /** A file's first batch, read by the library's own reader and validated fully; throws one clear line otherwise. */
  fileData(name: string, bytes: Uint8Array): Data {
    let read;
    try {
      read = readChecked(this.acd, name, bytes, 'full');
    } catch (e) {
      throw new ArrowCDeviceError((e as Error).message.replace(/\s*\n\s*/g, ' '), 22);
    }
    const { file } = read;
    if (file.batches.length === 0) throw new ArrowCDeviceError(`${name} has a schema and no record batch: nothing to export`, 22);
    return { name, description: `${name}: batch 0 of ${file.batches.length}`, schema: file.schema, batch: file.batches[0]!, fromFile: true };
  }

  get field(): types.Field {
    return types.recordBatchField(this.data.schema);
  }

  /** Releases whatever is live, then shows `data` (not yet exported). */
  setData(data: Data): void {
    this.releaseAll();
    this.devices.reset();
    this.streams.reset();
    this.streams.steps = [];
    this.async.reset();
    this.devices.steps = [];
    this.data = data;
    this.records = [];
    this.trials = [];
    this.actions = [];
    this.edits = [];
  }

  /** The tree of the live export in the core's memory, or null when nothing is exported. */
  liveTree(): StructTree | null {
    if (this.exported === null) return null;
    const at = this.moved ?? this.exported;
    return structTree(this.acd.core, at.schema, { struct: 'ArrowDeviceArray', address: at.array });
  }

  /** What the Structs and Memory panels show: the live export (wasm32), or the LP64 image of the same batch. */
  view(): { tree: StructTree; bytes: Uint8Array; addresses: string } | null {
    if (this.layout === 'lp64') {
      const t = batchTree(this.acd, this.field, this.data.batch, 'lp64');
      return { tree: t.tree, bytes: t.body!, addresses: t.addresses };
    }
    const tree = this.liveTree();
    return tree === null ? null : { tree, bytes: new Uint8Array(this.acd.memory.buffer), addresses: 'the core\'s wasm memory (live)' };
  }

  /** Runs one action; a refused one (an import the validator stops) is recorded, not thrown. */
  act(action: Action): void {
    switch (action.kind) {
      case 'export': this.doExport(); break;
      case 'move': this.doMove(); break;
      case 'import': this.doImport(action.mode); break;
      case 'release': this.doRelease(); break;
      case 'edit': this.doEdit(action.edit); break;
      case 'restore': this.doRestore(); break;
      case 'try': this.trials = action.level === 'all' ? LEVELS.map((l) => this.tryAt(l)) : [this.tryAt(action.level)]; break;
      case 'device': this.devices.act(action.action, this.field, this.data.batch, action.device); break;
      case 'stream': this.streams.act(action.action, this.data.schema, this.data.batch); break;
    }
    this.actions.push(action);
  }

  /** The addresses of the edited bytes of the live export. */
  get edited(): ReadonlySet<number> {
    return new Set(this.#saved.keys());
  }

  private record(action: string, ok: boolean, note: string): void {
    const s = this.acd.core.structs;
    const live = this.exported !== null;
    const structs = this.#exportedNodes.filter((n) => n.id !== 'device.array').map((n): StructState => {
      const base = n.id === 'schema' || n.id === 'device';
      const readable = live && (base || this.importMode !== 'copy');
      const at = n.struct === 'ArrowDeviceArray' ? n.address + s.offsetOf('ArrowDeviceArray', 'array') : n.address;
      const release = readable ? s.ptr(n.struct === 'ArrowSchema' ? 'ArrowSchema' : 'ArrowArray', at, 'release') : null;
      const text = release === null ? 'freed' : release === 0 ? 'NULL' : hex(release);
      return { id: n.id, address: n.address, release: text, owner: this.ownerOf(n.id, base, release) };
    });
    if (this.moved !== null) {
      for (const [id, address] of [['schema (moved)', this.moved.schema], ['device (moved)', this.moved.array]] as const) {
        const release = s.ptr(id.startsWith('schema') ? 'ArrowSchema' : 'ArrowArray', address, 'release');
        structs.push({ id, address, release: release === 0 ? 'NULL' : hex(release), owner: release === 0
          ? 'moved again, into the import; the consumer frees this empty struct' : 'the consumer, who moved it into a struct it allocated: it must release it' });
      }
    }
    this.records.push({ action, ok, note, bytes: this.acd.bytesAllocated(), structs });
  }

  private ownerOf(id: string, base: boolean, release: number | null): string {
    if (release === null) return this.exported === null ? 'freed by release()' : 'freed: the copy import released the moved tree at once';
    const moved = this.importMode === null ? null : this.importMode === 'copy' ? 'the Imported handle (copy): JS copies only'
      : 'the Imported handle (view), until its release()';
    if (base) {
      const what = id === 'schema' ? 'ArrowSchema' : 'ArrowDeviceArray';
      const into = this.moved !== null ? 'the consumer\'s own struct (move)' : moved ?? 'the consumer';
      return release === 0 ? `moved out into ${into}; the ExportedArray frees this empty ${what} at release()`
        : `the ExportedArray handle (the producer)`;
    }
    return this.importMode === 'view' ? `the moved parent, held by ${moved}` : 'its parent\'s release callback';
  }

  private doExport(): void {
    if (this.exported !== null) throw new ArrowCDeviceError('already exported: release first', 22);
    this.exported = this.acd.exportDeviceRaw(this.field, this.data.batch);
    this.#exportedNodes = allNodes(this.liveTree()!.roots);
    this.record('export', true, `exportDeviceRaw: ${this.#exportedNodes.length} structs in the core's memory, every release set`);
  }

  /** The consumer moves the base structs into structs it allocated (the source is marked released); the import then takes them from there. */
  private doMove(): void {
    if (this.exported === null || this.moved !== null || this.importMode !== null) throw new ArrowCDeviceError('move needs a live export, not moved or imported yet', 22);
    const core = this.acd.core;
    const schema = core.alloc(core.structs.size('ArrowSchema'));
    const array = core.alloc(core.structs.size('ArrowDeviceArray'));
    core.schemaMove(this.exported.schema, schema);
    core.deviceArrayMove(this.exported.array, array);
    this.moved = { schema, array };
    this.record('move', true, `the consumer moved the ArrowSchema to ${hex(schema)} and the ArrowDeviceArray to ${hex(array)} (bitwise copies; `
      + 'the sources are marked released): the children did not move, they belong to the moved parents');
  }

  private doImport(mode: 'copy' | 'view'): void {
    if (this.exported === null || this.importMode !== null) throw new ArrowCDeviceError('import needs a live export that was not imported', 22);
    const at = this.moved ?? this.exported;
    try {
      this.imported = this.acd.importDeviceRaw(at.schema, at.array, { mode, validate: 'default' });
    } catch (e) {
      if (!(e instanceof ArrowCDeviceError)) throw e;
      this.record(`import (${mode})`, false, `refused, nothing moved (the producer still owns its structs): ${e.message}`);
      return;
    }
    this.importMode = mode;
    // A copy import released the moved tree at once: the edited bytes are gone with it.
    if (mode === 'copy') this.#saved.clear();
    this.record(`import (${mode})`, true, mode === 'copy'
      ? `moved in, validated, copied into JS and released at once: ${summary(this.imported.value)}`
      : `moved in and validated; the batch is views over wasm memory until release(): ${summary(this.imported.value)}`);
  }

  private releaseAll(): void {
    if (this.importMode !== 'copy') restoreBytes(this.acd, this.#saved);
    this.#saved.clear();
    this.imported?.release();
    if (this.moved !== null) {
      // The consumer's own structs: released (a no-op once imported) and freed.
      this.acd.core.space.release('ArrowSchema', this.moved.schema);
      this.acd.core.space.release('ArrowArray', this.moved.array);
      this.acd.core.free(this.moved.schema);
      this.acd.core.free(this.moved.array);
      this.moved = null;
    }
    this.exported?.release();
    this.imported = null;
    this.exported = null;
    this.importMode = null;
  }

  private doRelease(): void {
    if (this.exported === null) throw new ArrowCDeviceError('nothing to release', 22);
    this.releaseAll();
    const back = this.acd.bytesAllocated() === this.start;
    this.record('release', back, `Imported.release() then ExportedArray.release(): live bytes ${back ? 'back to' : 'NOT back to'} the start (${this.start})`);
  }

  private doEdit(edit: Edit): void {
    const tree = this.liveTree();
    if (tree === null || this.importMode !== null || this.moved !== null) throw new ArrowCDeviceError('edits need a live export that was not moved or imported', 22);
    applyEdit(this.acd, tree, edit, this.#saved);
    this.edits.push(edit);
  }

  private doRestore(): void {
    if (this.importMode === null) restoreBytes(this.acd, this.#saved);
    this.edits = [];
    this.trials = [];
  }

  /** A fresh export with the same edits, imported (view) at `level`, then restored and released. */
  tryAt(level: ValidationLevel): Trial {
    const exported = this.acd.exportDeviceRaw(this.field, this.data.batch);
    const saved = new Map<number, number>();
    let imported: Imported<RawImport> | null = null;
    try {
      for (const edit of this.edits) {
        const tree = structTree(this.acd.core, exported.schema, { struct: 'ArrowDeviceArray', address: exported.array });
        applyEdit(this.acd, tree, edit, saved);
      }
      try {
        imported = this.acd.importDeviceRaw(exported.schema, exported.array, { mode: 'view', validate: level });
        return { level, ok: true, message: `passes: ${summary(imported.value)}` };
      } catch (e) {
        if (!(e instanceof ArrowCDeviceError)) throw e;
        return { level, ok: false, message: e.message };
      }
    } finally {
      restoreBytes(this.acd, saved);
      imported?.release();
      exported.release();
    }
  }
}
