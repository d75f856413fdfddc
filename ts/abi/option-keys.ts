// Options objects: the keys of each options type listed once (the compiler
// checks the list against the type), and the check every public method that
// takes options makes: an unknown key is a TypeError naming the method, the
// key and the known ones, never silently ignored.

/** Names the keys of T that a list lacks, so that the compiler says which. */
type Complete<T, K extends readonly PropertyKey[]> =
  [Exclude<keyof T, K[number]>] extends [never] ? unknown : { readonly missing: Exclude<keyof T, K[number]> };

/**
 * The keys of options type T, listed once: `optionKeys<ImportOptions>()([...])`
 * does not compile when the list misses a key of T or names one T lacks.
 */
export function optionKeys<T>(): <const K extends readonly (keyof T & string)[]>(keys: K & Complete<T, K>) => readonly (keyof T & string)[] {
  return (keys) => Object.freeze([...keys]);
}

function described(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return `an object (${(value as object).constructor?.name ?? 'no class'})`;
  if (value === null) return 'null (pass undefined, or {}, for no options)';
  return typeof value === 'string' ? `the string '${value}'` : `${typeof value} ${String(value)}`;
}

/**
 * Throws a TypeError when `options` is not an object or has an own key that
 * is not in `known`; undefined stands for no options (null is refused, as the
 * methods' defaults do not replace it). `hint` ends the message (what to do
 * instead, when a key is a known mistake).
 */
export function checkOptions(method: string, options: unknown, known: readonly string[], hint = ''): void {
  if (options === undefined) return;
  // On every call of the hot paths (an import per batch): nothing is allocated unless there is an error.
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) {
    let allKnown = true;
    for (const k in options) if (Object.hasOwn(options, k) && !known.includes(k)) allKnown = false;
    if (allKnown) return;
  }
  optionsError(method, options, known, hint);
}

/** Throws the TypeError for options that are not an object, or have an unknown key. */
function optionsError(method: string, options: unknown, known: readonly string[], hint: string): void {
  const list = () => (known.length === 0 ? 'none' : known.join(', '));
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${method}: options: expected an object (known options: ${list()}), found ${described(options)}`);
  }
  const unknown = Object.keys(options).filter((k) => !known.includes(k));
  if (unknown.length === 0) return;
  const keys = unknown.map((k) => `'${k}'`).join(', ');
  throw new TypeError(`${method}: unknown option${unknown.length > 1 ? 's' : ''} ${keys} (known options: ${list()})${hint === '' ? '' : `; ${hint}`}`);
}
