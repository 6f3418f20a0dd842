// `npm run build`: bundles the CLI (shared/cli/bundle-entry.ts) with its dependencies into
// dist/dynamo-fn.mjs for images and cold starts (no TypeScript transpile at start), and the
// override tool alone (shared/cli/dgd-apply-overrides-entry.ts) into dist/dgd-apply-overrides.mjs,
// one file a profiling Job's init container installs with a Node.js binary
// (shared/profiler/override-tool.ts). esbuild is the bundler tsx already runs on. CommonJS
// dependencies need `require`, so the banner makes one.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

const started = Date.now();
const result = await build({
  entryPoints: ['shared/cli/bundle-entry.ts'],
  outfile: 'dist/dynamo-fn.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  sourcemap: 'linked',
  legalComments: 'linked',
  metafile: true,
  // The version the sources read from package.json (shared/runtime/build-info.ts).
  define: { __DYNAMO_FN_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  banner: { js: "import { createRequire as __dynamoFnCreateRequire } from 'node:module'; const require = __dynamoFnCreateRequire(import.meta.url);" },
});
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
process.stdout.write(`Built dist/dynamo-fn.mjs (${(bytes / 1024 / 1024).toFixed(1)} MiB with map) in ${Date.now() - started} ms\n`);

const toolStarted = Date.now();
const tool = await build({
  entryPoints: ['shared/cli/dgd-apply-overrides-entry.ts'],
  outfile: 'dist/dgd-apply-overrides.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  // One self-contained file: it is copied alone into the profiler's pod.
  legalComments: 'eof',
  metafile: true,
  define: { __DYNAMO_FN_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  banner: { js: "import { createRequire as __dynamoFnCreateRequire } from 'node:module'; const require = __dynamoFnCreateRequire(import.meta.url);" },
});
const toolBytes = Object.values(tool.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
process.stdout.write(`Built dist/dgd-apply-overrides.mjs (${(toolBytes / 1024).toFixed(0)} KiB) in ${Date.now() - toolStarted} ms\n`);
