// Deno smoke test of the built dist/: round-trips one table in copy and view
// mode. Offline and without touching the repository:
//   DENO_DIR=$(mktemp -d) DENO_NO_UPDATE_CHECK=1 node_modules/.bin/deno run \
//     --no-config --no-lock --no-remote --no-npm --cached-only \
//     --import-map=test/runtimes/import_map.json --allow-read test/runtimes/deno.mjs
// The import map sends the bare 'apache-arrow' (here and in dist/index.mjs)
// and apache-arrow's own dependencies to their files in node_modules, so Deno
// fetches nothing from jsr, deno.land or npm.
import * as arrow from 'apache-arrow';
import { load } from '../../dist/index.mjs';
import { smoke } from './smoke.mjs';

let result;
try {
  result = await smoke(arrow, load);
} catch (e) {
  result = { ok: false, details: `smoke() threw ${e?.stack ?? e}` };
}
console.log(`deno ${Deno.version.deno}: ${result.ok ? 'ok' : 'FAIL'} ${result.details}`);
Deno.exit(result.ok ? 0 : 1);
