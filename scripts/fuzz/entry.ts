// The bundle's entry point: runs the fuzzer's command line and exits with its code.
import { main } from '../../ts/fuzz/main.js';

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(2);
});
