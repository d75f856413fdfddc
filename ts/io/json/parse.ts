// A JSON parser that keeps integers exact: integration JSON files carry int64
// values as bare numbers above 2^53, which JSON.parse silently rounds. An
// integer literal (no fraction, no exponent) outside the safe range becomes a
// bigint; every other number is a number. Hand-written because Node 20's
// JSON.parse gives a reviver no access to the source text.

import { ArrowCDeviceError, EINVAL } from '../../abi/errors.js';

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Nesting deeper than this is refused (a clear error instead of a stack overflow). */
const MAX_DEPTH = 1000;

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * Parses JSON text. Throws ArrowCDeviceError (EINVAL) naming the UTF-8 byte
 * offset, what was expected and what was found when the text is malformed.
 * Objects are plain objects; duplicate keys: the last value wins.
 */
export function parseJson(text: string): JsonValue {
  let pos = 0;

  const fail = (expected: string, at = pos): never => {
    const found = at >= text.length ? 'the end of the text' : JSON.stringify(text.slice(at, at + 12));
    const byte = new TextEncoder().encode(text.slice(0, at)).length;
    throw new ArrowCDeviceError(`JSON at byte offset ${byte}: expected ${expected}, found ${found}`, EINVAL);
  };

  const skipSpace = () => {
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else return;
    }
  };

  const parseString = (): string => {
    // pos is at the opening quote.
    const start = ++pos;
    // Fast path: no escapes.
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x22) return text.slice(start, pos++);
      if (c === 0x5c || c < 0x20 || Number.isNaN(c)) break;
      pos++;
    }
    let out = text.slice(start, pos);
    for (;;) {
      const c = text.charCodeAt(pos);
      if (Number.isNaN(c)) return fail('a closing \'"\'');
      if (c === 0x22) {
        pos++;
        return out;
      }
      if (c < 0x20) return fail('no control characters in a string (escape them)');
      if (c === 0x5c) {
        const e = text[pos + 1];
        if (e === 'u') {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('four hex digits after \\u', pos + 2);
          out += String.fromCharCode(parseInt(hex, 16));
          pos += 6;
        } else {
          const s = e === undefined ? undefined : ESCAPES[e];
          if (s === undefined) return fail('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX', pos + 1);
          out += s;
          pos += 2;
        }
        continue;
      }
      const run = pos;
      while (pos < text.length) {
        const d = text.charCodeAt(pos);
        if (d === 0x22 || d === 0x5c || d < 0x20) break;
        pos++;
      }
      out += text.slice(run, pos);
    }
  };

  const digits = (): number => {
    const start = pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c < 0x30 || c > 0x39) break;
      pos++;
    }
    return pos - start;
  };

  const parseNumber = (): number | bigint => {
    const start = pos;
    if (text[pos] === '-') pos++;
    const intStart = pos;
    const n = digits();
    if (n === 0) return fail('a digit');
    if (n > 1 && text[intStart] === '0') return fail('no leading zeros', intStart);
    let integer = true;
    if (text[pos] === '.') {
      pos++;
      if (digits() === 0) return fail('a digit after the decimal point');
      integer = false;
    }
    if (text[pos] === 'e' || text[pos] === 'E') {
      pos++;
      if (text[pos] === '+' || text[pos] === '-') pos++;
      if (digits() === 0) return fail('a digit in the exponent');
      integer = false;
    }
    const literal = text.slice(start, pos);
    // 15 digits always fit in the safe range.
    if (!integer || n <= 15) return Number(literal);
    const big = BigInt(literal);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  };

  const literal = (word: string, value: JsonValue): JsonValue => {
    if (!text.startsWith(word, pos)) return fail('a JSON value');
    pos += word.length;
    return value;
  };

  const parseValue = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) return fail(`at most ${MAX_DEPTH} levels of nesting`);
    skipSpace();
    const c = text[pos];
    switch (c) {
      case '{': {
        pos++;
        const obj: JsonObject = {};
        skipSpace();
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        for (;;) {
          skipSpace();
          if (text[pos] !== '"') return fail('a string key');
          const key = parseString();
          skipSpace();
          if (text[pos] !== ':') return fail("':'");
          pos++;
          const value = parseValue(depth + 1);
          // A plain assignment of '__proto__' would set the prototype instead.
          if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
          else obj[key] = value;
          skipSpace();
          if (text[pos] === ',') {
            pos++;
            continue;
          }
          if (text[pos] === '}') {
            pos++;
            return obj;
          }
          return fail("',' or '}'");
        }
      }
      case '[': {
        pos++;
        const arr: JsonValue[] = [];
        skipSpace();
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        for (;;) {
          arr.push(parseValue(depth + 1));
          skipSpace();
          if (text[pos] === ',') {
            pos++;
            continue;
          }
          if (text[pos] === ']') {
            pos++;
            return arr;
          }
          return fail("',' or ']'");
        }
      }
      case '"':
        return parseString();
      case 't':
        return literal('true', true);
      case 'f':
        return literal('false', false);
      case 'n':
        return literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return parseNumber();
        return fail('a JSON value');
    }
  };

  const value = parseValue(0);
  skipSpace();
  if (pos < text.length) fail('the end of the text');
  return value;
}
