/**
 * Builds the self-contained override tool bundle as `npm run build` does (scripts/build.mjs, the
 * `dist/dgd-apply-overrides.mjs` step), into a folder of the test's own, so tests exercise the
 * file our image ships without depending on a previous build of the checkout.
 */
import path from 'node:path';
import { build } from 'esbuild';

import { repoRoot } from './paths.js';

/** Out: the bundle's path, `<outDir>/dgd-apply-overrides.mjs`. Failures: esbuild's. */
export async function buildOverrideToolBundle(outDir: string): Promise<string> {
  const outfile = path.join(outDir, 'dgd-apply-overrides.mjs');
  await build({
    entryPoints: [path.join(repoRoot, 'shared', 'cli', 'dgd-apply-overrides-entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    legalComments: 'eof',
    define: { __DYNAMO_FN_VERSION__: JSON.stringify('test') },
    logLevel: 'warning',
    banner: { js: "import { createRequire as __dynamoFnCreateRequire } from 'node:module'; const require = __dynamoFnCreateRequire(import.meta.url);" },
  });
  return outfile;
}
