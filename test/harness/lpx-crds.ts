/**
 * The extra CRD file an LPX-enabled API server needs in tests: the test-only LpuPipelineRequest
 * CRD from `test/crds/` (the real one is installed by the LPX scheduler and is not public). Ours
 * (`infra/crds/lpx/`) and Grove's PodGang come with defaultCrdFiles.
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
