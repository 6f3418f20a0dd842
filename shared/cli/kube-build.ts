/**
 * `dynamo-fn kube-build`: builds kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok for the
 * integration harness and `dynamo-fn dev` (see test/harness/binaries.ts). Idempotent: when the
 * cached binaries answer `--version` it finishes in seconds.
 * @module
 */
import { ensureKubeBinaries, ENV_KUBE_BIN_DIR, KubeBinariesError } from '../../test/harness/binaries.js';
import { createLineLog } from '../../test/harness/log.js';

export const summary = 'Build kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok for tests and dev (cached)';

export const usage = `Usage: dynamo-fn kube-build [--force] [--verbose]

Builds kube-apiserver, etcd, kube-controller-manager and kube-scheduler from the Go module
pinned in test/kube-binaries/go.mod (CGO_ENABLED=0, -trimpath, version-stamped), into
\${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/kube/<kubernetes>-etcd-<etcd>/, and kwok from
test/kwok-binary/go.mod into \${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/kwok/<kwok>/.
Binaries already there that answer --version are kept. Needs Go 1.26+ and the Go module proxy;
the first build takes tens of minutes on a small machine (about
6 min on an idle 2-core machine with empty caches, over 30 min on a busy one) and prints
progress per binary; later runs take seconds.

Options:
  --force     rebuild even when the cached binaries work
  --verbose   print debug lines

Environment:
  ${ENV_KUBE_BIN_DIR}   use the prebuilt binaries in this folder instead (nothing is built)

Prints the folder holding the binaries on stdout.`;

export async function run(argv: readonly string[]): Promise<number> {
  const unknown = argv.filter((arg) => arg !== '--force' && arg !== '--verbose');
  if (unknown.length > 0) {
    process.stderr.write(`dynamo-fn kube-build: unknown option ${unknown.join(' ')}\n\n${usage}\n`);
    return 2;
  }
  const log = createLineLog({ verbose: argv.includes('--verbose') });
  try {
    const binaries = await ensureKubeBinaries({ log, force: argv.includes('--force') });
    process.stdout.write(`${binaries.dir}\n`);
    return 0;
  } catch (error) {
    if (error instanceof KubeBinariesError) {
      process.stderr.write(`dynamo-fn kube-build: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
