/**
 * The extra CRD files an LPX-enabled API server needs in tests: the test-only LpuPipelineRequest
 * CRD from `test/crds/` (the real one is installed by the LPX scheduler and is not public). Our
 * LPXGraphDeployment CRD is in infra/chart/files/crds/ with the others (defaultCrdFiles); the
 * chart installs it only with lpx.enabled=true. Grove's PodGang CRD comes with
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

/** `test/crds/*.yaml`. */
export async function lpxCrdFiles(repoRoot: string = REPO_ROOT): Promise<string[]> {
  return yamlIn(path.join(repoRoot, 'test', 'crds'));
}
