#!/usr/bin/env node
// The CLI fuzzer (issue 9): every gold file of ../shared/testdata/arrow-testing
// (relative to the repository, as the tests find them), N seeded mutations
// each, `arrow-c-device roundtrip FILE --json` on each in its own process
// under a timeout, and every outcome classified:
//   exit 0  only when the file really is Arrow data that round-trips
//           (oracle.mjs, in a second process, decides);
//   exit 1 or 2  with one line (the --json summary or error on stdout, at
//           most one line on stderr);
//   anything else fails: a timeout, a signal (V8's out-of-memory abort is
//   SIGABRT), another exit code, a stack trace, an exit 0 the oracle refutes.
//
//   node scripts/fuzz/cli-fuzz.mjs [--seed S] [--mutations N] [--sample K]
//        [--filter TEXT] [--timeout MS] [--workers W] [--keep DIR] [--json] [--bin FILE]
// --sample K takes K gold files spread over the sorted list (a quick run);
// --keep copies every failing input into DIR; --bin runs another command in
// place of bin/arrow-c-device.mjs (the fuzzer's own tests use stubs). A
// summary line ends the run (--json: then the summary as JSON); progress goes
// to stderr. Exit 0 when nothing failed, 1 when something did.
// Integration JSON gold files are gunzipped and mutated as text.

import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { mutate } from './mutate.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'arrow-c-device.mjs');
const ORACLE = join(ROOT, 'scripts', 'fuzz', 'oracle.mjs');
const GOLD = join(ROOT, '..', 'shared', 'testdata', 'arrow-testing');

function parse(argv) {
  const o = { seed: '1', mutations: 8, sample: 0, filter: '', timeout: 10_000, workers: 2, keep: '', json: false, bin: BIN };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split(/=(.*)/s);
    const value = () => inline ?? argv[++i];
    const int = (v) => {
      if (!/^\d+$/.test(v ?? '')) throw new Error(`${name}: expected a whole number, found ${v ?? 'nothing'}`);
      return Number(v);
    };
    if (name === '--seed') o.seed = value();
    else if (name === '--mutations') o.mutations = int(value());
    else if (name === '--sample') o.sample = int(value());
    else if (name === '--filter') o.filter = value();
    else if (name === '--timeout') o.timeout = int(value());
    else if (name === '--workers') o.workers = Math.max(1, int(value()));
    else if (name === '--keep') o.keep = value();
    else if (name === '--json') o.json = true;
    else if (name === '--bin') o.bin = value();
    else throw new Error(`unknown option ${name}`);
  }
  return o;
}

/** Every gold file (IPC file, stream, integration JSON), sorted: "folder/name". */
function goldFiles() {
  const out = [];
  for (const folder of readdirSync(GOLD, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of readdirSync(join(GOLD, folder)).sort()) {
      if (/\.(arrow_file|stream|json\.gz)$/.test(name)) out.push(`${folder}/${name}`);
    }
  }
  return out;
}

/** Runs a command with a timeout; resolves { code, signal, stdout, stderr, ms, timedOut }. */
function run(args, timeout) {
  return new Promise((resolve) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    const cap = (k) => (d) => { if (out[k].length < 1 << 20) out[k] += d; };
    child.stdout.setEncoding('utf8').on('data', cap('stdout'));
    child.stderr.setEncoding('utf8').on('data', cap('stderr'));
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeout);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ...out, ms: performance.now() - start, timedOut });
    });
  });
}

const lines = (s) => s.split('\n').filter((l) => l.trim() !== '');
const STACK = /^\s+at .+:\d+:\d+\)?$/m;

/** The failure of one CLI run, or null; `summary` is its parsed --json line. */
function classify(r) {
  if (r.timedOut) return { kind: 'hang', why: `no answer within ${Math.round(r.ms)} ms` };
  if (r.signal !== null) return { kind: 'signal', why: `killed by ${r.signal}: ${lines(r.stderr).slice(-1)[0] ?? ''}` };
  if (STACK.test(r.stderr) || STACK.test(r.stdout)) return { kind: 'stack trace', why: lines(r.stderr).find((l) => !/^\s+at /.test(l)) ?? '' };
  if (r.code !== 0 && r.code !== 1 && r.code !== 2) return { kind: 'exit code', why: `exit ${r.code}: ${lines(r.stderr)[0] ?? ''}` };
  const out = lines(r.stdout);
  const err = lines(r.stderr);
  if (err.length > 1) return { kind: 'output', why: `${err.length} lines on stderr: ${err[0]}` };
  // Exit 2 may have only its stderr line; otherwise exactly one JSON object, whose ok matches the exit code.
  if (r.code === 2 && out.length === 0 && err.length === 1) return null;
  if (out.length !== 1) return { kind: 'output', why: `${out.length} lines on stdout with --json` };
  let summary;
  try {
    summary = JSON.parse(out[0]);
  } catch {
    return { kind: 'output', why: `stdout is not JSON: ${out[0].slice(0, 120)}` };
  }
  if (summary.ok !== (r.code === 0)) return { kind: 'output', why: `exit ${r.code} with "ok": ${summary.ok}` };
  if (r.code === 2 && err.length !== 1) return { kind: 'output', why: 'exit 2 without its line on stderr' };
  return null;
}

async function main() {
  const o = parse(process.argv.slice(2));
  let files = goldFiles().filter((f) => f.includes(o.filter));
  if (o.sample > 0 && o.sample < files.length) {
    const step = files.length / o.sample;
    files = Array.from({ length: o.sample }, (_, i) => files[Math.floor(i * step)]);
  }
  if (files.length === 0) throw new Error(`no gold file under ${GOLD}${o.filter ? ` matches '${o.filter}'` : ''}`);
  const dir = mkdtempSync(join(tmpdir(), 'cli-fuzz-'));
  const jobs = files.flatMap((f) => Array.from({ length: o.mutations }, (_, k) => ({ gold: f, k })));
  const counts = { 0: 0, 1: 0, 2: 0 };
  const failures = [];
  let done = 0;
  let slowest = { ms: 0, job: '' };
  const started = performance.now();
  const cache = new Map();
  const source = (gold) => {
    if (!cache.has(gold)) {
      const raw = readFileSync(join(GOLD, gold));
      cache.set(gold, gold.endsWith('.gz') ? gunzipSync(raw) : raw);
    }
    return cache.get(gold);
  };

  const one = async ({ gold, k }) => {
    const json = gold.endsWith('.json.gz');
    const { bytes, ops } = mutate(new Uint8Array(source(gold)), o.seed, gold, k, json);
    const name = `${gold.replace('/', '_').replace(/\.gz$/, '')}`;
    const file = join(dir, `${k}-${name}`);
    writeFileSync(file, bytes);
    const r = await run([o.bin, 'roundtrip', file, '--json'], o.timeout);
    const label = `${gold} #${k} [${ops.join(', ')}]`;
    if (r.ms > slowest.ms) slowest = { ms: r.ms, job: label };
    let failure = classify(r);
    if (failure === null && r.code === 0) {
      const reader = JSON.parse(lines(r.stdout)[0]).reader;
      const v = await run([ORACLE, file, reader], o.timeout);
      if (v.code !== 0) failure = { kind: 'false ok', why: v.timedOut ? 'the oracle timed out' : (lines(v.stdout)[0] ?? lines(v.stderr)[0] ?? `oracle exit ${v.code}`) };
    }
    if (failure === null) counts[r.code]++;
    else {
      failures.push({ ...failure, input: label });
      if (o.keep) {
        mkdirSync(o.keep, { recursive: true });
        copyFileSync(file, join(o.keep, basename(file)));
      }
      console.error(`[cli-fuzz] FAIL ${failure.kind}: ${label}: ${failure.why}`);
    }
    rmSync(file, { force: true });
    done++;
    if (done % 50 === 0 && done < jobs.length) {
      console.error(`[cli-fuzz] ${done}/${jobs.length} runs, ${failures.length} failures, ${Math.round((performance.now() - started) / 1000)} s`);
    }
  };

  let next = 0;
  await Promise.all(Array.from({ length: o.workers }, async () => {
    while (next < jobs.length) await one(jobs[next++]);
  }));
  rmSync(dir, { recursive: true, force: true });

  const kinds = ['hang', 'signal', 'exit code', 'stack trace', 'false ok', 'output'];
  const by = Object.fromEntries(kinds.map((k) => [k, failures.filter((f) => f.kind === k).length]));
  const seconds = Math.round((performance.now() - started) / 1000);
  const summary = {
    seed: o.seed, files: files.length, mutations: o.mutations, runs: jobs.length, seconds,
    exit0Verified: counts[0], exit1: counts[1], exit2: counts[2], failures: failures.length, byKind: by,
    slowestMs: Math.round(slowest.ms), slowest: slowest.job, failed: failures,
  };
  console.log(`cli-fuzz: seed ${o.seed}, ${files.length} gold files × ${o.mutations} mutations = ${jobs.length} runs in ${seconds} s: ` +
    `exit 0 ×${counts[0]} (each verified), exit 1 ×${counts[1]}, exit 2 ×${counts[2]}; ${failures.length} failures ` +
    `(${kinds.map((k) => `${by[k]} ${k}`).join(', ')}); slowest run ${(slowest.ms / 1000).toFixed(1)} s`);
  if (o.json) console.log(JSON.stringify(summary));
  return failures.length === 0 ? 0 : 1;
}

main().then((code) => { process.exitCode = code; }, (e) => {
  console.error(`cli-fuzz: ${e.message}`);
  process.exitCode = 2;
});
