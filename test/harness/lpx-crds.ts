/**
 * The extra CRD files an LPX-enabled API server needs in tests: ours from `infra/lpx/` (installed
 * only with lpx.enabled=true) and the test-only LpuPipelineRequest CRD from `test/crds/` (the
 * real one is installed by the LPX scheduler and is not public). Grove's PodGang CRD comes with
 * the Grove CRDs of defaultCrdFiles.
 * @module
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

import { REPO_ROOT } from './binaries.js';

async function yamlIn(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => /\.ya?ml$/.test(n)).sort().map((n) => path.join(dir, n));
}

/** `infra/lpx/*.yaml` and `test/crds/*.yaml`. */
export async function lpxCrdFiles(repoRoot: string = REPO_ROOT): Promise<string[]> {
  return [...(await yamlIn(path.join(repoRoot, 'infra', 'lpx'))), ...(await yamlIn(path.join(repoRoot, 'test', 'crds')))];
}
