// Bun smoke test of the built dist/: round-trips one table in copy and view
// mode. Bun resolves the bare 'apache-arrow' (here and in dist/index.mjs) from
// node_modules; --no-install keeps it from ever installing anything:
//   node_modules/.bin/bun --no-install test/runtimes/bun.mjs
import * as arrow from 'apache-arrow';
import { load } from '../../dist/index.mjs';
import { smoke } from './smoke.mjs';

let result;
try {
  result = await smoke(arrow, load);
} catch (e) {
  result = { ok: false, details: `smoke() threw ${e?.stack ?? e}` };
}
console.log(`bun ${Bun.version}: ${result.ok ? 'ok' : 'FAIL'} ${result.details}`);
process.exit(result.ok ? 0 : 1);
