// `npm run build`: what the image runs, compiled ahead of time with esbuild (the bundler tsx
// already runs on), so no process of ours loads a TypeScript transpiler:
//   dist/bundles/<function>.mjs   one entry per function (admission, reconcile, profile,
//                                 cleanup; shared/cli/function-entries/), `serve <function>`
//                                 with only that function compiled in (the snapshot below
//                                 runs the same; these are what a .mjs start loads);
//   dist/bundles/dynamo-fn.mjs    the CLI (shared/cli/bundle-entry.ts): the image's entrypoint;
//   dist/bundles/chunk-*.mjs      code split out by esbuild: what several entries share, and
//                                 what only a dynamic import() reaches (gated code: the LPX build
//                                 decoders, the Model Express client, v1beta2, the CLI's
//                                 commands), loaded when that gate or setting is on;
//   dist/compile-cache/           Node's compile cache of the bundles (writeCompileCache below),
//                                 which the image reads (NODE_COMPILE_CACHE);
//   dist/bundles/sizes.json       per entry: the bytes it loads at start (itself and the chunks
//                                 it imports statically) and the bytes behind dynamic imports;
//   dist/dgd-apply-overrides.mjs  the override tool alone (shared/cli/dgd-apply-overrides-entry.ts),
//                                 one self-contained file a profiling Job's init container installs
//                                 with a Node.js binary (shared/profiler/override-tool.ts).
// The bundles sit two folders below the root (dist/bundles/), as the sources they come from
// (shared/cli/, shared/runtime/) do, so a path a module derives from its own location
// (install's default chart, ../../infra/chart) is the same in the checkout and the image.
// CommonJS dependencies need `require`, so the banner makes one in every output file.
// What a function loads at start (measure with --metafile, and `node --cpu-prof` on a bundle):
// its handlers, zod and the API schemas, pino, prom-client, cloudevents, and node:http(s) for the
// host and the Kubernetes transport (shared/kube/transport.ts). Kept off it: @kubernetes/client-node
// and undici (imported only to read a kubeconfig file: a pod uses its service account directly),
// @opentelemetry/api (prom-client's exemplars; lazyOpenTelemetryInPromClient below), and gated code.
// The start chunks are also precompiled: Node's compile cache in dist/compile-cache
// (writeCompileCache below), which the image reads.
// And each function has a V8 startup snapshot, which is what the chart starts
// (`node --snapshot-blob /app/dist/bundles/<function>.blob -- ARGS`; shared/cli/function-snapshot.ts):
//   dist/bundles/<function>.snapshot.cjs  a CommonJS bundle of the function and `serve`
//                                 (buildSnapshotBundles below: minified, ASCII only), which
//                                 `node --build-snapshot` evaluates: zod building the API
//                                 schemas, pino, prom-client, cloudevents and the handlers are
//                                 deserialized at start instead of evaluated;
//   dist/bundles/<function>.blob  the snapshot (scripts/build-snapshot-blobs.mjs), built by the
//                                 node running this script, the only one that can run it (the
//                                 Dockerfile builds the blobs again in the runtime image's stage);
//   dist/bundles/snapshot-<m>.cjs modules a snapshot leaves out and requires on first use
//                                 (client-node for a kubeconfig file, grpc-js for Model Express).
// An earlier try failed with "global handle not serialized: ... HTTPParser": the bundle loaded
// node:http at start, and a user-land snapshot cannot hold its native handles. The snapshot
// bundle gets node:http, https, net and tls as objects whose properties load the module on
// first use (lazyBuiltinsForSnapshot), so building the snapshot touches none of them and the
// main function's server and Kubernetes transport load them. A snapshot cannot `import()`:
// every other dynamic import is compiled into the snapshot bundle, evaluated when first imported.
// What it bought (bench/cold-start.ts, 2026-12-02, load 6-13): CPU to the first answer 120-170 ms
// against 210-330 ms from the .mjs bundles, idle RSS 61-74 MiB against 71-77. What is left is
// the size of what the function holds (the API schemas and the domain code, deserialized into
// its heap, and the malloc'd memory of deserializing them): docs/development.md, "Benchmarks".
//
//   node scripts/build.mjs [--only bundles|snapshots|dgd-apply-overrides] [--outdir DIR] [--no-sourcemap] [--metafile] [--no-snapshot-blobs]
//   (--only snapshots rebuilds the snapshot bundles and blobs beside bundles built before;
//   --no-snapshot-blobs writes the snapshot bundles but not the blobs: the Dockerfile's build stage)
//   (--entries admission,reconcile builds only those bundles, for a quicker look;
//   --metafile writes dist/bundles/<entry>.meta.json, esbuild's record of what each output holds:
//   open it in https://esbuild.github.io/analyze/ to see what a function loads at start; and
//   <function>.snapshot.meta.json, what each snapshot bundle holds)
//   (default: both, into dist/; --only dynamo-fn is the old name of --only bundles)
// Run from the repository root.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { buildSnapshotBlobs } from './build-snapshot-blobs.mjs';

const { values } = parseArgs({ options: { only: { type: 'string' }, outdir: { type: 'string' }, 'no-sourcemap': { type: 'boolean', default: false }, metafile: { type: 'boolean', default: false }, entries: { type: 'string' }, 'no-compile-cache': { type: 'boolean', default: false }, 'no-snapshot-blobs': { type: 'boolean', default: false } } });
const only = values.only === 'dynamo-fn' ? 'bundles' : values.only;
if (only !== undefined && only !== 'bundles' && only !== 'dgd-apply-overrides' && only !== 'snapshots') {
  process.stderr.write(`build.mjs: --only must be bundles, snapshots or dgd-apply-overrides, not ${values.only}\n`);
  process.exit(2);
}
const outdir = values.outdir ?? 'dist';
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

/** The functions, each with its own bundle. */
const FUNCTIONS = ['admission', 'reconcile', 'profile', 'cleanup'];

/**
 * Imports of Node's built-in modules become `require` calls. An ESM import of a built-in makes
 * Node build its ESM facade, which reads every export: for node:http that loads Node's own
 * internal undici (the global fetch), a few hundred milliseconds of a cold start nobody uses.
 */
const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => (args.kind === 'import-statement' && isBuiltin(args.path) ? { path: args.path, namespace: 'builtin' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * Modules that do nothing when imported, so esbuild may leave out every one whose exports none
 * of our code uses, with what it imports (its package.json does not say so):
 * - ours (shared/, functions/): STYLE.md §21, "A module holds nothing but constants and does
 *   nothing when imported". Without this, a barrel (shared/domain/index.ts) would bring every
 *   module it re-exports into every function, the LPX build decoders and capnp-es included;
 * - @kubernetes/client-node's: the clients we never call (exec, attach, cp, port-forward, watch,
 *   metrics) and their dependencies (ws, tar-fs) stay out;
 * - yaml's (its modules only define): else its CommonJS build is evaluated wherever a kept module
 *   imports it, even unused (reconcile's snapshot held it through shared/domain/dgdr: 0.16 MiB
 *   of source, 0.7 MiB of idle RSS).
 * Only for imports made from ESM (a CommonJS `require` in a try/catch must keep esbuild's own
 * handling of a missing optional module).
 */
const ROOT = path.resolve('.');
const isSideEffectFree = (file) =>
  file.includes('/node_modules/@kubernetes/client-node/') || file.includes('/node_modules/yaml/') || (!file.includes('/node_modules/') && ['shared', 'functions'].some((folder) => file.startsWith(path.join(ROOT, folder, '/'))));
const withoutSideEffects = {
  name: 'without-side-effects',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === withoutSideEffects || args.kind !== 'import-statement' || isBuiltin(args.path)) return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: withoutSideEffects });
      if (resolved.errors.length > 0 || resolved.external || !isSideEffectFree(resolved.path)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/**
 * prom-client's process CPU metric (collectDefaultMetrics) requires @opentelemetry/api at load,
 * for exemplars we never enable (`enableExemplars`); evaluating it was about a sixth of a
 * function's module evaluation at start. prom-client gets a stand-in whose `trace` and `context`
 * load the real API on first use: the same behaviour, paid only with exemplars on.
 */
const lazyOpenTelemetryInPromClient = {
  name: 'lazy-opentelemetry-in-prom-client',
  setup(build) {
    build.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) =>
      args.namespace === 'file' && args.importer.includes('/node_modules/prom-client/') ? { path: args.importer, namespace: 'lazy-otel' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-otel' }, (args) => ({
      contents: "let api; const load = () => (api ??= require('@opentelemetry/api'));\nmodule.exports = { get trace() { return load().trace; }, get context() { return load().context; } };\n",
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * The Node built-ins a V8 startup snapshot cannot hold (their native handles, e.g. node:http's
 * HTTPParser, are not serializable), given to a snapshot bundle as objects whose properties
 * load the module on first use (process.getBuiltinModule): evaluating the bundle while the
 * snapshot is built touches none of them; the main function's server and Kubernetes transport
 * load them. The property names are the module's own, read here at build time.
 */
const SNAPSHOT_LAZY_BUILTINS = new Set(['http', 'https', 'net', 'tls', 'http2', 'dgram'].flatMap((name) => [name, `node:${name}`]));
const lazyBuiltinsForSnapshot = {
  name: 'lazy-builtins-for-snapshot',
  setup(build) {
    build.onResolve({ filter: /^[a-z0-9_:/]+$/ }, (args) => (SNAPSHOT_LAZY_BUILTINS.has(args.path) ? { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const names = Object.keys(await import(`node:${args.path}`)).filter((name) => name !== 'default');
      const id = JSON.stringify(`node:${args.path}`);
      return {
        contents: `let loaded;\nconst load = () => (loaded ??= process.getBuiltinModule(${id}));\nfor (const name of ${JSON.stringify(names)}) Object.defineProperty(exports, name, { get: () => load()[name], enumerable: true });\n`,
        loader: 'js',
      };
    });
  },
};

/**
 * What a snapshot bundle leaves out and loads when first imported, with `require` from the
 * blob's folder (globalThis.__dynamoFnRequire, shared/cli/function-snapshot.ts): self-contained
 * modules only a setting reaches, each built once as <bundles>/snapshot-<file>.cjs. A snapshot
 * cannot `import()`; every other dynamic import of a function is compiled into its snapshot
 * bundle and evaluated when first imported (esbuild wraps it), as before.
 */
const SNAPSHOT_SEPARATE = {
  // KUBECONFIG naming a file (outside a pod): @kubernetes/client-node and undici.
  'kubeconfig-file': path.resolve('shared/kube/kubeconfig-file.ts'),
  // MODEL_EXPRESS_URL (reconcile's gs:// LPX builds): the gRPC client.
  'grpc-js': '@grpc/grpc-js',
  // lpx.enabled, an LPX build's first read (functions/reconcile/lpx-build.ts): the build
  // contracts' decoders, capnp-es and their schemas (pure; they return plain data).
  'lpx-build-contract': path.resolve('shared/domain/lpx/build-contract.ts'),
};
const separateForSnapshot = {
  name: 'separate-from-snapshot',
  setup(build) {
    build.onResolve({ filter: /kubeconfig-file\.js$|build-contract\.js$|^@grpc\/grpc-js$/ }, async (args) => {
      if (args.namespace !== 'file') return undefined;
      // The LPX decoders only where lpx-build.ts imports them dynamically (on an LPX build's
      // first read); a static import of build-contract.js, if one is ever added, is bundled as usual.
      if (args.path.endsWith('build-contract.js') && args.kind !== 'dynamic-import') return undefined;
      for (const [name, target] of Object.entries(SNAPSHOT_SEPARATE)) {
        const resolved = target.startsWith('/') ? path.resolve(args.resolveDir, args.path).replace(/\.js$/, '.ts') : args.path;
        if (resolved === target) return { path: name, namespace: 'snapshot-separate' };
      }
      return undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'snapshot-separate' }, (args) => ({ contents: `module.exports = globalThis.__dynamoFnRequire('./snapshot-${args.path}.cjs');\n`, loader: 'js' }));
  },
};

/**
 * zod's `z.locales` (its error messages in some 40 languages, `export * as locales` in
 * zod/v4/classic/external.js) holds only English in a snapshot bundle: our code never calls
 * `z.config(z.locales.xx())`, and zod registers English itself (zod/v4/classic/schemas.js
 * imports ../locales/en.js). 0.27 MiB less source held in each snapshot, 0.6-1.0 MiB less idle RSS.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (args.importer.includes('/node_modules/zod/') ? { path: path.resolve(args.resolveDir, '../locales/en.js').replace(/en\.js$/, 'index-en.js'), namespace: 'zod-locales' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({ contents: "export { default as en } from './en.js';\n", loader: 'js', resolveDir: path.dirname(args.path) }));
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  metafile: true,
  // The version the sources read from package.json (shared/runtime/build-info.ts).
  define: { __DYNAMO_FN_VERSION__: JSON.stringify(version) },
  logLevel: 'warning',
  plugins: [builtinsThroughRequire, withoutSideEffects, lazyOpenTelemetryInPromClient],
  banner: { js: "import { createRequire as __dynamoFnCreateRequire } from 'node:module'; const require = __dynamoFnCreateRequire(import.meta.url);" },
};

/**
 * The CommonJS bundle each function's V8 startup snapshot is built from
 * (<bundles>/<name>.snapshot.cjs; shared/cli/function-snapshot.ts, scripts/build-snapshot-blobs.mjs),
 * and the modules left out of it (SNAPSHOT_SEPARATE, <bundles>/snapshot-<file>.cjs).
 * Minified (whitespace and syntax): the snapshot keeps the bundle's source (V8 compiles a
 * function from it on its first call), so its size is memory in every process; identifiers
 * are not renamed (logs print error classes' names).
 * Non-ASCII characters are escaped, so V8 holds the source one byte per character.
 * `import.meta.url` becomes the URL of <name>.mjs beside the blob (set by the main function).
 * Returns the bytes written per name.
 */
async function buildSnapshotBundles(dir, names) {
  const asciiOnly = (text) => text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const snapshotCommon = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    // Whitespace and syntax only: identifiers keep their names (logs print error classes'
    // names, err.type), without esbuild's keepNames, which calls __name(fn, "x") for each of
    // some 1,600 functions and so gives each its own property backing store in the heap: the
    // snapshots held 1.4-2.1 MiB more of idle RSS that way (bench/cold-start.ts, 2026-12-02).
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: false,
    legalComments: 'none',
    write: false,
    metafile: true,
    logLevel: 'warning',
    define: { __DYNAMO_FN_VERSION__: JSON.stringify(version), 'import.meta.url': 'globalThis.__dynamoFnBundleUrl' },
  };
  const write = (file, result) => {
    const text = asciiOnly(result.outputFiles[0]?.text ?? '');
    writeFileSync(file, text);
    return Buffer.byteLength(text);
  };
  const sizes = {};
  await Promise.all(
    Object.entries(SNAPSHOT_SEPARATE).map(async ([name, target]) => {
      const result = await build({ ...snapshotCommon, entryPoints: [target], plugins: [withoutSideEffects, lazyOpenTelemetryInPromClient] });
      write(path.join(dir, `snapshot-${name}.cjs`), result);
    }),
  );
  await Promise.all(
    names.map(async (name) => {
      const contents = `import * as fn from './functions/${name}/index.js';\nimport { setFunctionSnapshotMain } from './shared/cli/function-snapshot.js';\nsetFunctionSnapshotMain(${JSON.stringify(name)}, fn);\n`;
      const result = await build({
        ...snapshotCommon,
        stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: `${name}.snapshot.ts` },
        plugins: [zodEnglishOnly, lazyBuiltinsForSnapshot, separateForSnapshot, withoutSideEffects, lazyOpenTelemetryInPromClient],
      });
      sizes[name] = write(path.join(dir, `${name}.snapshot.cjs`), result);
      if (values.metafile) writeFileSync(path.join(dir, `${name}.snapshot.meta.json`), JSON.stringify(result.metafile));
    }),
  );
  return sizes;
}

/**
 * Node's compile cache of the bundles (module.enableCompileCache), written at build time into
 * <outdir>/compile-cache, so a function's cold start deserializes V8's code for its start
 * chunks instead of parsing and compiling them (about a fifth of its CPU to the first answer).
 * The image reads it through NODE_COMPILE_CACHE=/app/dist/compile-cache with
 * NODE_COMPILE_CACHE_PORTABLE=1 (infra/image/image.json, Dockerfile): portable, its entries are
 * keyed by the path relative to the cache, so a cache written in the build's tree is found under
 * /app/dist; read-only at run time (a module missing from it, e.g. gated code, is compiled as
 * before and Node's attempt to write it fails silently on the read-only root filesystem). Its
 * directory is named after the Node.js version and V8 flags that wrote it: the image's Node.js
 * must be the one that built it (build.sh copies that binary; the Dockerfile writes it with the
 * runtime image's node), else it is skipped, never wrong.
 * Each entry is run once with the chart's NODE_OPTIONS and no Kubernetes configuration: it
 * compiles its start chunks, then stops at its configuration check, which writes the cache.
 */
function writeCompileCache(dir, names) {
  const cache = path.resolve(dir, 'compile-cache');
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const nodeOptions = /^functionNodeOptions: "(.*)"$/m.exec(readFileSync('infra/chart/values.yaml', 'utf8'))?.[1] ?? '';
  for (const name of names) {
    const args = name === 'dynamo-fn' ? ['--help'] : name === 'admission' ? ['--port', '0'] : [];
    const env = { PATH: process.env.PATH ?? '', NODE_OPTIONS: nodeOptions, NODE_COMPILE_CACHE: cache, NODE_COMPILE_CACHE_PORTABLE: '1', LOG_LEVEL: 'silent', PORT: '0' };
    spawnSync(process.execPath, [path.resolve(dir, 'bundles', `${name}.mjs`), ...args], { env, stdio: 'ignore', timeout: 60_000 });
  }
  let files = 0;
  for (const sub of readdirSafe(cache)) files += readdirSafe(path.join(cache, sub)).length;
  return files;
}

function readdirSafe(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

/**
 * The entry `file` of a split build: the bytes of every file it loads at start (itself and,
 * through static imports, its chunks) and of the files only its dynamic imports reach.
 */
function entrySizes(metafile, file) {
  const outputs = metafile.outputs;
  const closure = (kinds) => {
    const seen = new Set();
    const stack = [file];
    while (stack.length > 0) {
      const next = stack.pop();
      if (seen.has(next) || outputs[next] === undefined) continue;
      seen.add(next);
      for (const imported of outputs[next].imports) if (!imported.external && kinds.includes(imported.kind)) stack.push(imported.path);
    }
    return seen;
  };
  const bytes = (files) => [...files].reduce((sum, f) => sum + outputs[f].bytes, 0);
  const atStart = closure(['import-statement']);
  const reachable = closure(['import-statement', 'dynamic-import']);
  return { file: path.basename(file), startBytes: bytes(atStart), startFiles: atStart.size, lazyBytes: bytes(reachable) - bytes(atStart) };
}

if (only === 'snapshots') {
  // The snapshot bundles and blobs alone, beside bundles built before (a quicker look).
  const bundles = path.join(outdir, 'bundles');
  const names = values.entries === undefined ? FUNCTIONS : FUNCTIONS.filter((name) => values.entries.split(',').includes(name));
  const started = Date.now();
  await buildSnapshotBundles(bundles, names);
  const blobs = values['no-snapshot-blobs'] ? [] : buildSnapshotBlobs(bundles, names);
  process.stdout.write(`Built ${names.length} snapshot bundles${blobs.length > 0 ? ' and blobs' : ''} in ${Date.now() - started} ms\n`);
} else if (only !== 'dgd-apply-overrides') {
  const bundles = path.join(outdir, 'bundles');
  rmSync(bundles, { recursive: true, force: true });
  const allEntries = { 'dynamo-fn': 'shared/cli/bundle-entry.ts', ...Object.fromEntries(FUNCTIONS.map((name) => [name, `shared/cli/function-entries/${name}.ts`])) };
  const entries = values.entries === undefined ? allEntries : Object.fromEntries(Object.entries(allEntries).filter(([name]) => values.entries.split(',').includes(name)));
  // One build per entry: esbuild's tree shaking keeps what any entry of a build uses, so in one
  // build with the CLI (which reaches all of @kubernetes/client-node) every function would load it.
  const started = Date.now();
  const results = await Promise.all(
    Object.entries(entries).map(async ([name, entry]) => {
      const result = await build({
        ...common,
        entryPoints: { [name]: entry },
        outdir: bundles,
        splitting: true,
        outExtension: { '.js': '.mjs' },
        chunkNames: `${name}-[hash]`,
        sourcemap: values['no-sourcemap'] ? false : 'linked',
        legalComments: 'linked',
      });
      if (values.metafile) writeFileSync(path.join(bundles, `${name}.meta.json`), JSON.stringify(result.metafile));
      // The metafile names outputs relative to the working directory, whatever --outdir is.
      return [name, entrySizes(result.metafile, path.relative(process.cwd(), path.join(bundles, `${name}.mjs`)))];
    }),
  );
  const sizes = Object.fromEntries(results);
  process.stdout.write(`Built ${bundles}/ in ${Date.now() - started} ms\n`);
  for (const [name, size] of results) {
    process.stdout.write(`  ${`${name}.mjs`.padEnd(15)} ${mib(size.startBytes).padStart(10)} at start (${size.startFiles} file${size.startFiles === 1 ? '' : 's'}), ${mib(size.lazyBytes)} more behind dynamic imports\n`);
  }
  writeFileSync(path.join(bundles, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  const functionNames = Object.keys(entries).filter((name) => FUNCTIONS.includes(name));
  if (functionNames.length > 0) {
    const snapshotStarted = Date.now();
    const snapshotBytes = await buildSnapshotBundles(bundles, functionNames);
    const blobs = values['no-snapshot-blobs'] ? [] : buildSnapshotBlobs(bundles, functionNames);
    process.stdout.write(`Built the snapshot bundles${blobs.length > 0 ? ' and blobs' : ''} in ${Date.now() - snapshotStarted} ms\n`);
    for (const name of functionNames) {
      const blob = path.resolve(bundles, `${name}.blob`);
      process.stdout.write(`  ${`${name}.snapshot.cjs`.padEnd(24)} ${mib(snapshotBytes[name] ?? 0).padStart(10)}${blobs.includes(blob) ? `, ${name}.blob ${mib(statSync(blob).size)}` : ''}\n`);
      sizes[name] = { ...sizes[name], snapshotBundleBytes: snapshotBytes[name] ?? 0, ...(blobs.includes(blob) ? { snapshotBlobBytes: statSync(blob).size } : {}) };
    }
    writeFileSync(path.join(bundles, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  }
  if (!values['no-compile-cache']) {
    const cacheStarted = Date.now();
    const files = writeCompileCache(outdir, Object.keys(entries));
    process.stdout.write(`Built ${path.join(outdir, 'compile-cache')}/ (${files} files) in ${Date.now() - cacheStarted} ms\n`);
  }
}
if (only !== 'bundles' && only !== 'snapshots') {
  // One self-contained file: it is copied alone into the profiler's pod.
  const started = Date.now();
  const outfile = path.join(outdir, 'dgd-apply-overrides.mjs');
  const result = await build({ ...common, entryPoints: ['shared/cli/dgd-apply-overrides-entry.ts'], legalComments: 'eof', outfile });
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  process.stdout.write(`Built ${outfile} (${mib(bytes)}) in ${Date.now() - started} ms\n`);
}
