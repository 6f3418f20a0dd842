// The V8 startup snapshot of each function (`node --build-snapshot`), from the CommonJS bundles
// scripts/build.mjs writes for them (<bundles>/<function>.snapshot.cjs, see
// shared/cli/function-snapshot.ts) into <bundles>/<function>.blob, which the chart starts
// (`node --snapshot-blob /app/dist/bundles/<function>.blob -- ARGS`).
// A blob runs only on the Node.js binary that built it (Node refuses one from another version),
// so this script has no dependencies: scripts/build.mjs calls it with the node it runs on (the
// image's, infra/image/build.sh), and the Dockerfile runs it in the runtime image's stage.
//   node scripts/build-snapshot-blobs.mjs BUNDLES_DIR [FUNCTION ...]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds `<dir>/<name>.blob` from `<dir>/<name>.snapshot.cjs` for each name (default: every
 * such file in `dir`). A clean environment (PATH only, no NODE_OPTIONS): the snapshot holds no
 * setting of the machine that built it. Returns the blobs written; throws naming the function
 * whose build failed, with node's stderr.
 */
export function buildSnapshotBlobs(dir, names = readdirSync(dir).filter((f) => f.endsWith('.snapshot.cjs')).map((f) => f.slice(0, -'.snapshot.cjs'.length))) {
  const written = [];
  for (const name of names) {
    const entry = path.resolve(dir, `${name}.snapshot.cjs`);
    const blob = path.resolve(dir, `${name}.blob`);
    if (!existsSync(entry)) throw new Error(`build-snapshot-blobs: ${entry} not found: run scripts/build.mjs first`);
    const result = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', entry], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 120_000 });
    // Node warns that some built-in modules (perf_hooks, worker_threads, module) are not yet
    // verified in snapshots: prom-client's and pino's imports of them; what they hold is built
    // again in the main function (the event-loop monitor starts there, no worker is started).
    if (result.status !== 0 || !existsSync(blob)) throw new Error(`build-snapshot-blobs: cannot build the snapshot of ${name}: ${result.error?.message ?? ''}${result.stderr}`);
    written.push(blob);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, ...names] = process.argv.slice(2);
  if (dir === undefined) {
    process.stderr.write('usage: node scripts/build-snapshot-blobs.mjs BUNDLES_DIR [FUNCTION ...]\n');
    process.exit(2);
  }
  for (const blob of buildSnapshotBlobs(dir, names.length > 0 ? names : undefined)) process.stdout.write(`${blob}\n`);
}
