// What the npm package ships (issue 15, packaging): the Apache-2.0 license
// beside package.json's "license", and source maps that map without carrying
// the sources (which had made up most of the package).
import { expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

test('LICENSE holds the Apache License 2.0 that package.json names, and the package ships it', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string; files: string[] };
  expect(pkg.license).toBe('Apache-2.0');
  const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  expect(text).toContain('Apache License\n                           Version 2.0, January 2004');
  expect(text).toContain('END OF TERMS AND CONDITIONS');
  expect(pkg.files).toContain('LICENSE');
});

test('the source maps of dist/ carry no sources', () => {
  const maps = readdirSync(join(ROOT, 'dist')).filter((f) => f.endsWith('.map'));
  expect(maps.length).toBeGreaterThanOrEqual(3);
  for (const m of maps) {
    const map = JSON.parse(readFileSync(join(ROOT, 'dist', m), 'utf8')) as { sources: string[]; sourcesContent?: unknown[] };
    expect({ m, sources: map.sources.length > 0, content: map.sourcesContent ?? null }).toEqual({ m, sources: true, content: null });
  }
});
