// The API reference: api-extractor reads the declarations tsc writes into
// build/types/ (one run per entry of package.json "exports") and
// api-documenter turns its doc model into markdown under docs/api/ (the main
// entry) and docs/api/<subpath>/ (each other entry). Every exported
// declaration and every public member must have a doc comment
// (ae-undocumented is an error here), every function and method an
// "Ownership:" sentence and a @param per parameter, and the comments must be
// valid TSDoc: the run fails otherwise, naming each.
// TypeDoc cannot be used: its peer is TypeScript <= 6 and the project's
// compiler is TypeScript 7; api-extractor bundles its own.
//   node scripts/api-docs.mjs [--out DIR] [--entry SUBPATH=DECLARATIONS ...]
// --out writes somewhere else (the test compares with docs/api/); --entry
// replaces the entries of package.json (the test's check of the check).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { Extractor, ExtractorConfig, ExtractorLogLevel } = require('@microsoft/api-extractor');

const args = process.argv.slice(2);
let out = join(root, 'docs/api');
const given = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out') out = resolve(args[++i]);
  else if (args[i] === '--entry') given.push(args[++i]);
  else {
    process.stderr.write(`[api-docs] unknown argument ${args[i]} (known: --out DIR, --entry SUBPATH=DECLARATIONS)\n`);
    process.exit(2);
  }
}

class Failure extends Error {}

function fail(message) {
  throw new Failure(message);
}

/** The declaration file of each entry: "." and each subpath of package.json "exports". */
function entries() {
  if (given.length > 0) {
    return given.map((e) => {
      const [subpath, file] = e.split('=');
      return { subpath, declarations: resolve(file) };
    });
  }
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const exports = typeof pkg.exports === 'string' || pkg.exports?.types !== undefined ? { '.': pkg.exports } : pkg.exports ?? { '.': pkg.types };
  const found = [];
  for (const [subpath, target] of Object.entries(exports)) {
    if (subpath === './package.json') continue;
    const types = typesOf(target);
    if (types === undefined) continue; // not code: nothing to document
    // dist/X.d.ts (rolled up by rollup) comes from build/types/X.d.ts (tsc).
    const rel = types.replace(/^\.\//, '').replace(/^dist\//, '').replace(/\.d\.[cm]?ts$/, '.d.ts');
    const declarations = join(root, 'build/types', rel);
    if (!existsSync(declarations)) {
      fail(`"exports" ${subpath}: its types ${types} should come from ${relative(root, declarations)}, which is missing (run bash build.sh; or ts/${rel.replace(/\.d\.ts$/, '.ts')} is not where that entry's source is)`);
    }
    found.push({ subpath, declarations });
  }
  return found;
}

/** The first .d.ts a package.json "exports" target names (any condition). */
function typesOf(target) {
  if (typeof target === 'string') return /\.d\.[cm]?ts$/.test(target) ? target : undefined;
  if (target === null || typeof target !== 'object') return undefined;
  if (typeof target.types === 'string') return target.types;
  for (const value of Object.values(target)) {
    const t = typesOf(value);
    if (t !== undefined) return t;
  }
  return undefined;
}

const work = mkdtempSync(join(tmpdir(), 'acd-api-'));
const pkgName = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name;
const problems = [];
try {
  const list = entries();
  const staging = join(work, 'out');
  const pages = [];
  for (const { subpath, declarations } of list) {
    const name = subpath === '.' ? '' : subpath.replace(/^\.\//, '');
    const model = extract(subpath, declarations);
    if (model === null) continue;
    checkOwnership(subpath, JSON.parse(readFileSync(model, 'utf8')));
    const n = list.findIndex((e) => e.subpath === subpath);
    const input = join(work, `input-${n}`);
    mkdirSync(input);
    writeFileSync(join(input, `${pkgName}.api.json`), readFileSync(model));
    // Each entry into a folder of its own (api-documenter empties its output folder), placed below.
    const target = join(work, `pages-${n}`);
    pages.push({ name, target });
    const r = spawnSync(process.execPath, [join(root, 'node_modules/@microsoft/api-documenter/bin/api-documenter'), 'markdown', '-i', input, '-o', target], { encoding: 'utf8' });
    if (r.status !== 0) fail(`api-documenter failed for ${subpath}:\n${r.stdout}${r.stderr}`);
    if (name !== '') retitle(target, `${pkgName}/${name}`);
    // api-documenter writes CRLF; the repository's text files are LF.
    for (const file of readdirSync(target)) {
      const path = join(target, file);
      if (file.endsWith('.md')) writeFileSync(path, readFileSync(path, 'utf8').replaceAll('\r\n', '\n'));
    }
  }
  mkdirSync(staging);
  for (const { name, target } of pages) renameSync(target, name === '' ? join(staging, '.main') : join(staging, name));
  if (existsSync(join(staging, '.main'))) {
    for (const file of readdirSync(join(staging, '.main'))) renameSync(join(staging, '.main', file), join(staging, file));
    rmSync(join(staging, '.main'), { recursive: true });
  }
  // The main index lists the subpath entries, each documented in a folder of its own.
  const subpaths = pages.filter((p) => p.name !== '').map((p) => p.name);
  if (subpaths.length > 0 && existsSync(join(staging, 'index.md'))) {
    const list = subpaths.map((name) => `- [${pkgName}/${name}](./${name}/${pkgName}.md)`).join('\n');
    writeFileSync(join(staging, 'index.md'), `${readFileSync(join(staging, 'index.md'), 'utf8').trimEnd()}\n\n## Subpath exports\n\n${list}\n`);
  }
  if (problems.length > 0) {
    fail(`${problems.length} problem(s) in the doc comments:\n${problems.join('\n')}`);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(dirname(out), { recursive: true });
  cpSync(staging, out, { recursive: true });
  process.stdout.write(`[api-docs] ${list.length} entr${list.length === 1 ? 'y' : 'ies'} documented into ${relative(root, out) || out}\n`);
} catch (e) {
  if (!(e instanceof Failure)) throw e;
  process.stderr.write(`[api-docs] ${e.message}\n`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Runs api-extractor on one entry; returns its doc model's path (null after an error). */
function extract(subpath, declarations) {
  const folder = join(work, `extract-${problems.length}-${Math.random().toString(36).slice(2)}`);
  const config = ExtractorConfig.prepare({
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: declarations,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'esnext.disposable', 'dom'],
            strict: true, skipLibCheck: true, types: [],
          },
          files: [declarations],
        },
      },
      // The report is not kept: api-extractor checks doc comments only while writing it.
      apiReport: { enabled: true, reportFolder: folder, reportTempFolder: folder, reportFileName: 'report.api.md' },
      docModel: { enabled: true, apiJsonFilePath: join(folder, 'model.api.json') },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: {
          default: { logLevel: 'error' },
          'ae-undocumented': { logLevel: 'error', addToApiReportFile: false },
          // Release tags (@public, @beta) are not used: everything exported is public.
          'ae-missing-release-tag': { logLevel: 'none' },
          // Internal classes a public signature names (Core, StructReader, Handle, ...) are
          // named in the reference without pages of their own: they are not the package's API.
          'ae-forgotten-export': { logLevel: 'none' },
        },
        tsdocMessageReporting: { default: { logLevel: 'error' } },
      },
    },
  });
  mkdirSync(folder, { recursive: true });
  Extractor.invoke(config, {
    localBuild: true,
    showVerboseMessages: false,
    messageCallback(message) {
      if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
        const where = message.sourceFilePath ? `${relative(root, message.sourceFilePath)}:${message.sourceFileLine}: ` : '';
        problems.push(`  ${subpath}: ${where}(${message.messageId}) ${message.text}`);
      }
      message.handled = true;
    },
  });
  // The model is written even when messages were errors: the ownership check runs on it too.
  return existsSync(join(folder, 'model.api.json')) ? join(folder, 'model.api.json') : null;
}

/**
 * Every function, method and constructor says who owns what after it: its
 * doc comment has an "Ownership:" sentence (what it takes ownership of, what
 * the caller must release, or that it borrows and allocates nothing), and a
 * `@param` for each parameter.
 */
function checkOwnership(subpath, model) {
  const callable = new Set(['Function', 'Method', 'MethodSignature', 'Constructor']);
  const walk = (item, where) => {
    const doc = item.docComment ?? '';
    const name = item.kind === 'Constructor' ? 'constructor' : item.name;
    const here = item.kind === 'EntryPoint' || item.kind === 'Package' ? where : where === '' ? name : `${where}.${name}`;
    if (callable.has(item.kind) && doc !== '' && !/Ownership:/.test(doc)) {
      problems.push(`  ${subpath}: ${here}: its doc comment has no "Ownership:" sentence (what it takes, what the caller releases)`);
    }
    if (callable.has(item.kind) && doc !== '') {
      for (const { parameterName } of item.parameters ?? []) {
        if (!doc.includes(`@param ${parameterName} -`)) problems.push(`  ${subpath}: ${here}: no @param for ${parameterName}`);
      }
    }
    for (const m of item.members ?? []) walk(m, here);
  };
  walk(model, '');
}

/** A subpath's pages name the package as a user imports it ("arrow-c-device/ipc"). */
function retitle(folder, importName) {
  for (const file of readdirSync(folder)) {
    const path = join(folder, file);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replaceAll(`[${pkgName}](./${pkgName}.md)`, `[${importName}](./${pkgName}.md)`)
      .replace(/^## .* package$/m, `## ${importName} (subpath export)`));
  }
}
