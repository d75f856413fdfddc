#!/usr/bin/env node
// The arrow-c-device command; the code is in dist/cli.mjs (built from ts/cli/cli.ts).
import { existsSync, readFileSync } from 'node:fs';

const cli = new URL('../dist/cli.mjs', import.meta.url);
if (!existsSync(cli)) {
  const message = 'dist/ is not built yet: run `npm run build` (or `npm start`) in the package folder';
  console.error(`arrow-c-device: ${message}`);
  // With --json, the same failure as one JSON object on stdout, as every other (docs/cli.md).
  if (process.argv.slice(2).includes('--json')) {
    console.log(JSON.stringify({ ok: false, exitCode: 2, error: { name: 'Error', code: 'ERR_NOT_BUILT', errno: null, message } }));
  }
  process.exit(2);
}
const { main } = await import(cli.href);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
process.exitCode = await main(process.argv.slice(2), { version });
