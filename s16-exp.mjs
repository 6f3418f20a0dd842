import { build } from 'esbuild';
const plugin = { name: 'se', setup(b) { b.onResolve({ filter: /.*/ }, async (args) => { if (args.pluginData === 'x') return; const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'x' }); if (r.path.includes('@kubernetes/client-node')) return { ...r, sideEffects: false }; return r; }); } };
const r = await build({ entryPoints: ['shared/cli/function-entries/reconcile.ts'], bundle: true, platform: 'node', format: 'esm', target: 'node24', metafile: true, write: false, define: { __DYNAMO_FN_VERSION__: '"x"' }, logLevel: 'error', plugins: process.argv[2] ? [plugin] : [] });
const inputs = Object.values(r.metafile.outputs)[0].inputs;
const byPkg = {};
for (const [k, v] of Object.entries(inputs)) {
  const m = /node_modules\/((@[^/]+\/)?[^/]+)\/(dist\/gen\/[^/]+)?/.exec(k);
  const key = m ? m[1] + (m[3] ? '/' + m[3] : '') : k.split('/').slice(0, 2).join('/');
  byPkg[key] = (byPkg[key] ?? 0) + v.bytesInOutput;
}
let total = 0; for (const v of Object.values(byPkg)) total += v;
console.log('total', (total/1024/1024).toFixed(2));
for (const [k, v] of Object.entries(byPkg).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1024).toFixed(0).padStart(7), 'KiB', k);
