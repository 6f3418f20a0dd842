// `npm run build`: bundles the CLI (shared/cli/bundle-entry.ts) with its dependencies into
// dist/dynamo-fn.mjs for images and cold starts (no TypeScript transpile at start), and the
// override tool alone (shared/cli/dgd-apply-overrides-entry.ts) into dist/dgd-apply-overrides.mjs,
// one file a profiling Job's init container installs with a Node.js binary
// (shared/profiler/override-tool.ts). esbuild is the bundler tsx already runs on. CommonJS
// dependencies need `require`, so the banner makes one.
//
//   node scripts/build.mjs [--only dynamo-fn|dgd-apply-overrides] [--outdir DIR]   (default: both, dist/)
// Run from the repository root (the image builds use --only dgd-apply-overrides).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values } = parseArgs({ options: { only: { type: 'string' }, outdir: { type: 'string' } } });
if (values.only !== undefined && values.only !== 'dynamo-fn' && values.only !== 'dgd-apply-overrides') {
  process.stderr.write(`build.mjs: --only must be dynamo-fn or dgd-apply-overrides, not ${values.only}\n`);
  process.exit(2);
}
const outdir = values.outdir ?? 'dist';
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  metafile: true,
  // The version the sources read from package.json (shared/runtime/build-info.ts).
  define: { __DYNAMO_FN_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  banner: { js: "import { createRequire as __dynamoFnCreateRequire } from 'node:module'; const require = __dynamoFnCreateRequire(import.meta.url);" },
};

async function bundle(name, options) {
  const started = Date.now();
  const outfile = path.join(outdir, `${name}.mjs`);
  const result = await build({ ...common, ...options, outfile });
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  process.stdout.write(`Built ${outfile} (${(bytes / 1024 / 1024).toFixed(1)} MiB${options.sourcemap ? ' with map' : ''}) in ${Date.now() - started} ms\n`);
}

if (values.only !== 'dgd-apply-overrides') {
  await bundle('dynamo-fn', { entryPoints: ['shared/cli/bundle-entry.ts'], sourcemap: 'linked', legalComments: 'linked' });
}
if (values.only !== 'dynamo-fn') {
  // One self-contained file: it is copied alone into the profiler's pod.
  await bundle('dgd-apply-overrides', { entryPoints: ['shared/cli/dgd-apply-overrides-entry.ts'], legalComments: 'eof' });
}
