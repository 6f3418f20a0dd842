/**
 * Builds the self-contained override tool bundle exactly as the image builds do
 * (`node scripts/build.mjs --only dgd-apply-overrides`), into a folder of the test's own, so tests
 * exercise the file our image ships without depending on a previous build of the checkout.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { repoRoot } from './paths.js';

/** Out: the bundle's path, `<outDir>/dgd-apply-overrides.mjs`. Failures: the build's exit, with its stderr. */
export async function buildOverrideToolBundle(outDir: string): Promise<string> {
  await promisify(execFile)(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs'), '--only', 'dgd-apply-overrides', '--outdir', outDir], { cwd: repoRoot });
  return path.join(outDir, 'dgd-apply-overrides.mjs');
}
