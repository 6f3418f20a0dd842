/**
 * `dynamo-fn helm-build`: builds helm from the Go module proxy and fetches cert-manager's CRDs
 * for the chart tests, `install` and `dev --chart` (see test/harness/helm.ts). Idempotent.
 * @module
 */
import { ENV_HELM, HelmToolError, ensureCertManagerCrds, ensureHelm } from '../../test/harness/helm.js';
import { createLineLog } from '../../test/harness/log.js';

export const summary = 'Build helm and fetch the cert-manager CRDs for tests, install and dev (cached)';

export const usage = `Usage: dynamo-fn helm-build [--force] [--verbose]

Builds helm from the Go module pinned in test/helm-binary/go.mod (CGO_ENABLED=0, -trimpath,
version-stamped) into \${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/helm/<version>/helm, and fetches
cert-manager's CRDs through the Go module proxy into .../dynamo-fn/cert-manager/<version>/.
Kept when already there. Needs Go 1.26+; a cold build takes about 2 minutes on 2 cores.

Options:
  --force     rebuild helm even when the cached one works
  --verbose   print debug lines

Environment:
  ${ENV_HELM}   use this helm binary instead (nothing is built)

Prints the helm path on stdout.`;

export async function run(argv: readonly string[]): Promise<number> {
  const unknown = argv.filter((arg) => arg !== '--force' && arg !== '--verbose');
  if (unknown.length > 0) {
    process.stderr.write(`dynamo-fn helm-build: unknown option ${unknown.join(' ')}\n\n${usage}\n`);
    return 2;
  }
  const log = createLineLog({ verbose: argv.includes('--verbose') });
  try {
    const helm = await ensureHelm({ log, force: argv.includes('--force') });
    await ensureCertManagerCrds({ log });
    process.stdout.write(`${helm}\n`);
    return 0;
  } catch (error) {
    if (error instanceof HelmToolError) {
      process.stderr.write(`dynamo-fn helm-build: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
