// `arrow-c-device playground [--port N]`: serves dist/playground/ (the static
// page of ts/playground/ and apache-arrow's browser build) on 127.0.0.1,
// prints the URL and runs until interrupted. Its bundle imports the library's
// own ES modules, so they are served too: dist/*.mjs (but the CLI) at / and
// dist/chunks/*.mjs at /chunks/, where the page's relative imports find them.
// Only those files are served; nothing else on the machine is reachable.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './input.js';
import { HELP, JSON_OUTPUT, parseCommand, type CommandSpec } from './options.js';

export const PLAYGROUND: CommandSpec = {
  name: 'playground',
  summary: 'serve the playground, a page that runs the wasm core in the browser',
  description: [
    'Serves the playground (a page that runs the wasm core: pick a sample or drop an Arrow IPC file, see its C structs ' +
      'and their bytes, switch to the LP64 layout, step export, import and release, break a field and import it at each ' +
      'validation level) on http://127.0.0.1:N/, until interrupted. Only the files of dist/playground/ are served.',
  ],
  options: [
    { name: 'port', value: 'N', expected: 'a port number (0 to 65535)', default: '8080', help: 'the port on 127.0.0.1; 0 picks a free one' },
    { ...JSON_OUTPUT, help: 'print {"ok":true,"url"} on stdout once serving, or on failure {"ok":false,"exitCode":N,"error":{...}}' },
    HELP,
  ],
  examples: ['arrow-c-device playground', 'arrow-c-device playground --port 0 --json'],
  exitCodes: [[0, 'stopped by Ctrl-C (SIGINT) or SIGTERM'], [2, 'bad usage, a port that cannot be used, or the page not built']],
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

/** dist/playground next to this bundle (dist/cli.mjs), or under the package root when run from the sources. */
function playgroundDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'playground'), join(here, '..', '..', 'dist', 'playground')]) {
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  throw new UsageError('playground: dist/playground/index.html is missing: run ./build.sh (npm run build) first');
}

function parsePort(value: string | undefined): number {
  if (value === undefined) return 8080;
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port: expected a port number (0 to 65535), found ${value}`);
  return Number(value);
}

/** Serves the playground; resolves with the exit code once interrupted (2 when the port cannot be used). */
export async function playgroundCommand(argv: readonly string[], print: (line: string) => void): Promise<number> {
  const { values } = parseCommand(PLAYGROUND, argv);
  const port = parsePort(values.port as string | undefined);
  const dir = playgroundDir();
  // The files served, read once: a request names one of them or gets 404.
  const dist = join(dir, '..');
  const listed = (folder: string, prefix: string, keep: (f: string) => boolean) => readdirSync(folder)
    .filter((f) => extname(f) in TYPES && keep(f))
    .map((f) => [`${prefix}${f}`, { body: readFileSync(join(folder, f)), type: TYPES[extname(f)]! }] as const);
  const files = new Map([
    ...listed(dist, '/', (f) => f.endsWith('.mjs') && f !== 'cli.mjs'),
    ...(existsSync(join(dist, 'chunks')) ? listed(join(dist, 'chunks'), '/chunks/', (f) => f.endsWith('.mjs')) : []),
    ...listed(dir, '/', () => true),
  ]);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const file = files.get(path === '/' ? '/index.html' : path);
    if (file === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(file === undefined ? 404 : 405, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(file === undefined ? 'not found\n' : 'method not allowed\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  });
  try {
    await new Promise<void>((ok, fail) => { server.once('error', fail); server.listen(port, '127.0.0.1', ok); });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'EADDRINUSE' ? `port ${port} on 127.0.0.1 is in use: choose another with --port N (0: any free port)`
      : `cannot listen on 127.0.0.1:${port}: ${(e as Error).message}`, { cause: e });
  }
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  const url = `http://127.0.0.1:${actual}/`;
  print(values.json === true ? JSON.stringify({ ok: true, url }) : `playground: ${url} (Ctrl-C to stop)`);
  return new Promise<number>((done) => {
    const stop = () => {
      server.close(() => done(0));
      server.closeAllConnections();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
