/**
 * `dynamo-fn status`: every function's Knative Service (or the admission Deployment) — Ready
 * and its reason, URL, latest created and ready revisions, desired and actual scale — read over
 * undici (shared/knative).
 * @module
 */
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { collectStatus, createKnativeClient, formatStatusTable, KnativeClientError } from '../knative/index.js';

export const summary = "Show each function's Ready state, reason, URL, revisions and scale";

export const usage = `Usage: dynamo-fn status [--namespace NS] [--output table|json]

Reads the control plane's workloads in NS: the admission Deployment and the Knative Service of
each CloudEvents function (reconcile, profile, cleanup), and prints per function: READY (the
Ready condition; Available for the Deployment) and its REASON, the URL, the latest created and
ready revisions, and the DESIRED and ACTUAL scale (0 when scaled to zero). A function that is
not installed shows REASON NotInstalled.

Options:
  -n, --namespace NS   the release namespace (default "dynamo-system")
  -o, --output FORMAT  table (default) or json
  -h, --help           show this help

The cluster comes from KUBECONFIG (else ~/.kube/config, else the in-cluster service account).
Exit status: 0 when read, 1 when the API server cannot be read.`;

export async function run(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { namespace: { type: 'string', short: 'n', default: 'dynamo-system' }, output: { type: 'string', short: 'o', default: 'table' } },
    }));
  } catch (error) {
    process.stderr.write(`dynamo-fn status: ${(error as Error).message}\n\n${usage}\n`);
    return 1;
  }
  if (values.output !== 'table' && values.output !== 'json') {
    process.stderr.write(`dynamo-fn status: --output: Unsupported value: "${values.output}": supported values: "table", "json"\n`);
    return 1;
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromDefault();
  } catch (error) {
    process.stderr.write(`dynamo-fn status: cannot load the kubeconfig (KUBECONFIG=${process.env['KUBECONFIG'] ?? ''}): ${(error as Error).message}\n`);
    return 1;
  }
  try {
    const client = await createKnativeClient(kubeConfig);
    try {
      const rows = await collectStatus(client, values.namespace);
      process.stdout.write(values.output === 'json' ? `${JSON.stringify(rows, null, 2)}\n` : `${formatStatusTable(rows)}\n`);
      return 0;
    } finally {
      await client.close();
    }
  } catch (error) {
    if (error instanceof KnativeClientError) {
      process.stderr.write(`dynamo-fn status: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
