// Issue 15, item 3: the API reference. docs/api/ is generated from the
// sources (scripts/api-docs.mjs: api-extractor over the declarations tsc
// writes into build/types/, api-documenter into markdown) and must be what
// the sources give now; the same run fails when a public export or member
// has no doc comment, when a function or method does not say who owns what
// ("Ownership:") or lacks a @param, or when a comment is not valid TSDoc.
import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..');
const SCRIPT = join(ROOT, 'scripts/api-docs.mjs');

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
}

/** Every file under dir, by relative path, with its text. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

test('docs/api/ is what the sources give now (regenerate it with npm run docs:api)', () => {
  expect(existsSync(join(ROOT, 'build/types/index.d.ts'))).toBe(true);
  const out = mkdtempSync(join(ROOT, 'build', 'api-docs-'));
  try {
    const r = run(['--out', out]);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const fresh = tree(out);
    const committed = tree(join(ROOT, 'docs/api'));
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    const stale = [...fresh].filter(([path, text]) => committed.get(path) !== text).map(([path]) => path);
    expect(stale).toEqual([]);
    // Every runtime export has a page, and the handles' pages say who owns what.
    expect(fresh.has('arrow-c-device.arrowcdevice.importbatch_1.md')).toBe(true);
    expect(fresh.get('arrow-c-device.exportedarray.md')).toContain('Ownership: the handle owns both base structs');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 180_000);

test('an export without a doc comment, a function without "Ownership:" or a @param, and invalid TSDoc each fail the run, named', () => {
  const dir = mkdtempSync(join(ROOT, 'build', 'api-docs-check-'));
  try {
    const good = join(dir, 'good.d.ts');
    writeFileSync(good, [
      '/** A documented constant. */', 'export declare const A = 1;',
      '/**', ' * Adds.', ' *', ' * Ownership: pure; nothing to release.', ' * @param a - one.', ' * @param b - the other.', ' */',
      'export declare function add(a: number, b: number): number;', '',
    ].join('\n'));
    const bad = join(dir, 'bad.d.ts');
    writeFileSync(bad, [
      'export declare const UNDOCUMENTED = 1;',
      '/** Documented, but not who owns what. */', 'export declare function take(ptr: number): void;',
      '/** A class. */', 'export declare class Thing {', '    /** A method whose comment is fine.', '     *', '     * Ownership: borrows.', '     */',
      '    use(): void;', '    size: number;', '}',
      '/** Braces { from } are not TSDoc. Ownership: pure. */', 'export declare function braces(): void;', '',
    ].join('\n'));
    const r = run(['--out', join(dir, 'out'), '--entry', `.=${good}`, '--entry', `./extra=${bad}`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('(ae-undocumented) Missing documentation for "UNDOCUMENTED"');
    expect(r.stderr).toContain('(ae-undocumented) Missing documentation for "size"');
    expect(r.stderr).toContain('./extra: take: its doc comment has no "Ownership:" sentence');
    expect(r.stderr).toContain('./extra: take: no @param for ptr');
    expect(r.stderr).toContain('(tsdoc-malformed-inline-tag)');
    expect(r.stderr).not.toContain('"use"');
    expect(existsSync(join(dir, 'out'))).toBe(false); // nothing written on failure

    // Both entries fine: the main entry at the top, a subpath in a folder of its own, named as imported.
    writeFileSync(bad, ['/** A documented constant. */', 'export declare const B = 2;', ''].join('\n'));
    const ok = run(['--out', join(dir, 'out'), '--entry', `.=${good}`, '--entry', `./extra=${bad}`]);
    expect({ status: ok.status, stderr: ok.stderr }).toEqual({ status: 0, stderr: '' });
    expect(readFileSync(join(dir, 'out', 'arrow-c-device.add.md'), 'utf8')).toContain('Ownership: pure; nothing to release.');
    expect(readFileSync(join(dir, 'out', 'extra', 'arrow-c-device.md'), 'utf8')).toContain('## arrow-c-device/extra (subpath export)');
    expect(readFileSync(join(dir, 'out', 'index.md'), 'utf8')).toContain('- [arrow-c-device/extra](./extra/arrow-c-device.md)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
