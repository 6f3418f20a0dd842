/**
 * Cold-start benchmark (not a test): from spawning `dynamo-fn serve reconcile` to its first
 * handled CloudEvent (a 2xx), and its resident memory once idle, beside a bare `node` HTTP
 * server that answers "hello" to the same POST, measured in one run, each started fresh
 * `--runs` times (the median is printed). Scale from zero costs exactly this.
 * The event is a type the function does not take (answered 204 "Skipped"), so no API server is
 * needed and the number is the host's own: process start, module load, config, listen, decode.
 * Aims (issue 12): at most 2x the bare server's time to first answer; idle RSS at most 60 MB.
 *
 * Usage: npm run bench:cold-start [-- --runs N]
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { median, renderTable } from './table.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EVENT_HEADERS = { 'ce-id': '1', 'ce-specversion': '1.0', 'ce-type': 'dev.example.cold-start', 'ce-source': '/bench', 'content-type': 'application/json' };

const BARE_SERVER = `
const http = require('node:http');
http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('hello'); }); })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 'NaN');
  return kib / 1024;
}

async function firstAnswer(port: number, deadlineMs: number): Promise<void> {
  const deadline = performance.now() + deadlineMs;
  for (;;) {
    try {
      const response = await request(`http://127.0.0.1:${port}/`, { method: 'POST', headers: EVENT_HEADERS, body: '{}' });
      await response.body.text();
      if (response.statusCode >= 200 && response.statusCode < 300) return;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`no 2xx on port ${port} within ${deadlineMs} ms`);
    await sleep(2);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

let nextPort = 23_000 + Math.floor(Math.random() * 2000);

async function measure(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; rssMiB: number }> {
  const port = nextPort++;
  const started = performance.now();
  const child = spawn(command, args, { cwd: REPO, env: { ...process.env, ...env, PORT: String(port) }, stdio: 'ignore' });
  try {
    await firstAnswer(port, 60_000);
    const ms = performance.now() - started;
    await sleep(1000);
    return { ms, rssMiB: rssMiB(child.pid ?? 0) };
  } finally {
    await stop(child);
  }
}

export async function runColdStartBench(runs: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
  try {
    // reconcile needs a kubeconfig to start; it is never called for a skipped event.
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    const bareFile = join(dir, 'bare.cjs');
    writeFileSync(bareFile, BARE_SERVER);
    const node = process.execPath;
    const bundle = join(REPO, 'dist', 'dynamo-fn.mjs');
    const env = { KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn' };
    const variants = [
      { name: 'bundle (dist/dynamo-fn.mjs, as the image runs it)', args: [bundle, 'serve', 'reconcile'] },
      { name: 'sources through tsx (bin/dynamo-fn.js)', args: [join(REPO, 'bin', 'dynamo-fn.js'), 'serve', 'reconcile'] },
    ].filter((variant) => variant.args[0] !== bundle || existsSync(bundle));
    const bare: { ms: number; rssMiB: number }[] = [];
    const ours = variants.map(() => [] as { ms: number; rssMiB: number }[]);
    for (let run = 0; run < runs; run += 1) {
      bare.push(await measure(node, [bareFile], {}));
      for (const [index, variant] of variants.entries()) ours[index]?.push(await measure(node, variant.args, env));
    }
    const bareMs = median(bare.map((m) => m.ms));
    const bareRss = median(bare.map((m) => m.rssMiB));
    const rows = variants.flatMap((variant, index) => {
      const ms = median((ours[index] ?? []).map((m) => m.ms));
      const rss = median((ours[index] ?? []).map((m) => m.rssMiB));
      return [
        { name: `serve reconcile, ${variant.name}: start to first answered event`, value: ms, unit: 'ms', baseline: { name: 'bare node http hello', value: bareMs }, aim: { text: '<= 2x', isMet: ms <= 2 * bareMs } },
        { name: `serve reconcile, ${variant.name}: idle RSS`, value: rss, unit: 'MiB', baseline: { name: 'bare node http hello', value: bareRss }, aim: { text: '<= 60 MiB', isMet: rss <= 60 } },
      ];
    });
    return renderTable(`Cold start (median of ${runs} fresh processes${existsSync(bundle) ? '' : '; no dist/ bundle: run npm run build'})`, rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
  process.stdout.write(await runColdStartBench(Number(values.runs)));
}
