/**
 * `dynamo-fn install`: installs (or upgrades) the Helm chart `infra/chart` with helm, and with
 * `--wait` waits for every function to be Ready, one progress line per function as its state
 * changes (read over undici, shared/knative).
 * @module
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createKnativeClient, KnativeClientError, waitForReady } from '../knative/index.js';
import { ensureHelm, HelmToolError, runHelm } from '../../test/harness/helm.js';
import { createLineLog } from '../../test/harness/log.js';

export const summary = 'Install or upgrade the Helm chart; --wait for every function to be Ready';

export const usage = `Usage: dynamo-fn install [--namespace NS] [--release NAME] [--set KEY=VALUE]... [-f FILE]... [--wait] [--timeout SECONDS]

Runs \`helm upgrade --install NAME infra/chart --namespace NS --create-namespace\` with the given
values, so a first install and an upgrade are the same command. With --wait it then waits until
the admission Deployment and every installed function's Knative Service are Ready, printing a
line per function whenever its state changes, e.g.
  reconcile: Ready=False (RevisionMissing: ...) scale 0/1
  reconcile: Ready=True scale 0/0

Options:
  -n, --namespace NS    release namespace (default "dynamo-system")
      --release NAME    Helm release name (default "dynamo-fn")
      --set KEY=VALUE   a chart value (repeatable), e.g. --set lpx.enabled=true
  -f, --values FILE     a values file (repeatable)
      --wait            wait for every function to be Ready
      --timeout SECONDS how long --wait waits (default 300)
      --chart DIR       the chart (default: infra/chart of this package)
      --helm PATH       the helm binary (default: $DYNAMO_FN_HELM, else a helm 3 on PATH, else
                        the cached build from \`dynamo-fn helm-build\`, built on first use: ~2 min)
  -h, --help            show this help

The cluster comes from KUBECONFIG (else ~/.kube/config). Exit status: 0 when installed (and,
with --wait, Ready); 1 when helm fails, the cluster cannot be read, or --wait times out.`;

/** The package's chart folder (this file is shared/cli/install.ts). */
const DEFAULT_CHART = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'infra', 'chart');

export async function run(argv: readonly string[], write: (text: string) => void = (text) => process.stdout.write(text)): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`dynamo-fn install: ${message}\n`);
    return 1;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        namespace: { type: 'string', short: 'n', default: 'dynamo-system' },
        release: { type: 'string', default: 'dynamo-fn' },
        set: { type: 'string', multiple: true, default: [] },
        values: { type: 'string', short: 'f', multiple: true, default: [] },
        wait: { type: 'boolean', default: false },
        timeout: { type: 'string', default: '300' },
        chart: { type: 'string', default: DEFAULT_CHART },
        helm: { type: 'string' },
      },
    }));
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${usage}`);
  }
  const timeoutSeconds = Number(values.timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) return fail(`--timeout: Invalid value: "${values.timeout}": must be a whole number of seconds, at least 1`);

  let helm: string;
  try {
    helm = values.helm ?? (await ensureHelm({ log: createLineLog(), preferPath: true }));
  } catch (error) {
    if (error instanceof HelmToolError) return fail(error.message);
    throw error;
  }
  const helmArgs = [
    'upgrade', '--install', values.release, values.chart,
    '--namespace', values.namespace, '--create-namespace',
    ...values.set.flatMap((pair) => ['--set', pair]),
    ...values.values.flatMap((file) => ['--values', file]),
  ];
  const result = await runHelm(helm, helmArgs, { timeoutMs: 600_000 });
  if (result.code !== 0) return fail(`helm ${helmArgs.slice(0, 3).join(' ')} failed (exit ${result.code}):\n${result.stderr.trim()}`);
  write(`Installed release ${values.release} in namespace ${values.namespace}\n`);
  if (!values.wait) return 0;

  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromDefault();
  } catch (error) {
    return fail(`cannot load the kubeconfig (KUBECONFIG=${process.env['KUBECONFIG'] ?? ''}): ${(error as Error).message}`);
  }
  try {
    const client = await createKnativeClient(kubeConfig);
    try {
      const outcome = await waitForReady(client, values.namespace, { timeoutSeconds, write: (line) => write(`${line}\n`) });
      if (outcome.ready) {
        write(`All ${outcome.rows.length} functions are Ready\n`);
        return 0;
      }
      const waiting = outcome.rows.filter((row) => row.ready !== 'True').map((row) => row.function);
      return fail(`timed out after ${timeoutSeconds}s waiting for ${waiting.join(', ')} to be Ready (see \`dynamo-fn status -n ${values.namespace}\`)`);
    } finally {
      await client.close();
    }
  } catch (error) {
    if (error instanceof KnativeClientError) return fail(error.message);
    throw error;
  }
}
