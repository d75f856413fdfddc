// Release discipline for everything this library holds in wasm memory: an
// idempotent release(), [Symbol.dispose], and a FinalizationRegistry backstop.
//
// The backstop holds a small holder of the cleanup, not the cleanup itself,
// and is registered without an unregister token: release() empties the
// holder, and the backstop's callback, when the handle is collected later,
// finds it empty. V8 keeps a table of tokens for unregister(), and
// registering with one, then unregistering, cost about 1.3 µs per handle
// against 0.6 µs without (issue 14: a handle per import and export).
//
// Registering is deferred to the end of the job that made the handle (a
// microtask): most handles are released within it (a batch imported, read
// and released; a stream's exports), and a handle released by then is never
// registered. Registering costs about 0.3 µs a handle in a hot loop, and
// 0.6 to 3 µs right after large copies (V8 allocates each registration's
// cell in the old generation: 13 times the page faults of a plain object).
// Until then a token of the handle is held here (not the handle: what the
// handle holds, an imported copy's buffers, stays free to be collected once
// the handle is released or dropped), at most PENDING_MAX of them: a job that
// makes more registers those not yet released at once. The token is what is
// registered: referenced by the handle alone once registered, it is
// collected with the handle (or, for a handle dropped before, as soon as it
// leaves this list).

/** Symbol.dispose, or the registered symbol runtimes without it use for `using`. */
export const dispose: typeof Symbol.dispose = Symbol.dispose ?? (Symbol.for('Symbol.dispose') as typeof Symbol.dispose);
/** Symbol.asyncDispose, or the registered symbol runtimes without it use for `await using`. */
export const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for('Symbol.asyncDispose') as typeof Symbol.asyncDispose);

/** What the backstop holds for a handle: its cleanup until release() (or a move) takes it. */
interface Holder {
  cleanup: (() => void) | null;
}

const backstop = new FinalizationRegistry<Holder>((holder) => {
  const cleanup = holder.cleanup;
  // Empty: the handle was released before it was collected.
  if (cleanup === null) return;
  holder.cleanup = null;
  try {
    cleanup();
  } catch {
    // A finalizer has nobody to report to; the handle was leaked by its owner.
  }
});

/**
 * The tokens of the handles made in the current job and their holders, not
 * registered yet. A microtask is queued whenever the list stops being empty.
 */
let pendingTokens: object[] = [];
let pendingHolders: Holder[] = [];
const PENDING_MAX = 1024;

/** Registers the token of every pending handle not released yet, and forgets them all. */
function registerPending(): void {
  const tokens = pendingTokens;
  const holders = pendingHolders;
  pendingTokens = [];
  pendingHolders = [];
  for (let i = 0; i < tokens.length; i++) {
    if (holders[i]!.cleanup !== null) backstop.register(tokens[i]!, holders[i]!);
  }
}

/**
 * Something that owns memory in the core (or in another module) until `release()` is called: the base of every handle of this library.
 *
 * Ownership: the holder of a handle must call `release()` once done (or use `using`, which calls `[Symbol.dispose]`). A handle never released is freed by a `FinalizationRegistry` at some later garbage collection, which is no substitute: until then the memory stays allocated.
 */
export abstract class Handle {
  readonly #holder: Holder;
  /** What the backstop watches: referenced by this handle (and, until the end of the job, by the pending list) only. */
  readonly #token: object;

  /**
   * Registers the backstop, at the end of the current job unless the handle is released by then.
   *
   * Ownership: the handle takes ownership of what `cleanup` frees.
   * @param cleanup - frees what the handle owns; it must not reference the handle itself (it runs after the handle is collected).
   */
  protected constructor(cleanup: () => void) {
    const holder = { cleanup };
    const token = {};
    this.#holder = holder;
    this.#token = token;
    if (pendingTokens.length >= PENDING_MAX) registerPending();
    if (pendingTokens.length === 0) queueMicrotask(registerPending);
    pendingTokens.push(token);
    pendingHolders.push(holder);
  }

  /** Whether `release()` has been called (or the handle was consumed by a move). */
  get released(): boolean {
    return this.#holder.cleanup === null;
  }

  /**
   * Frees what the handle owns; calling it again does nothing.
   *
   * Ownership: ends the caller's ownership; what a consumer moved out earlier is not touched (it is the consumer's).
   */
  release(): void {
    const cleanup = this.#holder.cleanup;
    if (cleanup === null) return;
    this.#holder.cleanup = null;
    cleanup();
  }

  /**
   * Runs `more` after the handle's own cleanup, on `release()` or by the backstop (for what the handle's value depends on but does not own, such as a protocol descriptor holding the structs it reads in place).
   *
   * Ownership: the handle takes over releasing what `more` frees.
   * @param more - the extra cleanup.
   */
  chain(more: () => void): void {
    const cleanup = this.#holder.cleanup;
    if (cleanup === null) {
      more();
      return;
    }
    this.#holder.cleanup = () => {
      try {
        cleanup();
      } finally {
        more();
      }
    };
  }

  /**
   * `using` support: the same as `release()`.
   *
   * Ownership: as `release()`.
   */
  [dispose](): void {
    this.release();
  }
}
