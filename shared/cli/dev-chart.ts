/**
 * `dynamo-fn dev --chart`: installs the control plane through the Helm chart onto dev's API
 * server, as on a cluster, and runs the functions the way the chart wires them: the admission
 * webhooks (failurePolicy Fail) call an admission server on loopback (chart value
 * admission.external.url, with its CA as caBundle), and each function runs with a
 * TokenRequest token of its chart ServiceAccount (`dynamo-<function>`, serviceAccountKubeconfig),
 * so it can do exactly what the chart's ClusterRole grants. Knative's and cert-manager's controllers do not run:
 * their objects are stored, not acted on.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { CHART_RELEASE_NAMESPACE, type ChartGates } from '../api/index.js';
import type { Kube } from '../kube/index.js';
import { CHART_DIR, ensureHelm, installCertManagerCrds, runHelm } from '../../test/harness/helm.js';
import type { HarnessLog } from '../../test/harness/log.js';
import { stringify } from 'yaml';

/** Where dev installs the chart. */
export const DEV_CHART_NAMESPACE = CHART_RELEASE_NAMESPACE;
const RELEASE = 'dynamo-fn';

/**
 * Writes a kubeconfig that authenticates as ServiceAccount `namespace/name` (a TokenRequest
 * token, valid 24 h) against the dev API server, into `dir` (removed with the plane).
 * Failures: Error naming the ServiceAccount when the API returns no token.
 */
export async function serviceAccountKubeconfig(kubeConfig: KubeConfig, namespace: string, name: string, dir: string): Promise<string> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const token = (
    await core.createNamespacedServiceAccountToken({
      name,
      namespace,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 86_400 } },
    })
  ).status?.token;
  if (token === undefined) throw new Error(`cannot get a token for ServiceAccount ${namespace}/${name}: the TokenRequest returned none`);
  const cluster = kubeConfig.getCurrentCluster();
  const file = path.join(dir, `${name}.kubeconfig`);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'dev', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } }],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'dev', context: { cluster: 'dev', user: name } }],
      'current-context': 'dev',
    }),
    { mode: 0o600 },
  );
  return file;
}

/**
 * Installs the chart (`helm upgrade --install`) pointing its webhooks and CRD conversion at dev's
 * admission server, with dev's feature gates.
 * In: the dev control plane's kubeconfig (file and loaded), the gates, dev's admission server.
 * Failures: Error naming the step (helm's stderr included).
 */
export async function installDevChart(options: {
  readonly kubeconfigPath: string;
  readonly kube: Kube;
  readonly gates: ChartGates;
  /** The admission server dev runs on loopback (webhooks and /convert), and the CA that signed its certificate. */
  readonly admission: { readonly url: string; readonly caPem: string };
  readonly log: HarnessLog;
}): Promise<void> {
  const { log, admission } = options;
  await installCertManagerCrds(options.kube, log);
  const helm = await ensureHelm({ log, preferPath: true });
  const result = await runHelm(
    helm,
    [
      'upgrade', '--install', RELEASE, CHART_DIR, '--namespace', DEV_CHART_NAMESPACE, '--create-namespace',
      '--set', `lpx.enabled=${options.gates.lpxEnabled}`,
      '--set', `dgdrV1Beta2.enabled=${options.gates.dgdrV1Beta2Enabled}`,
      '--set', `admission.external.url=${admission.url}`,
      '--set', `admission.external.caBundle=${Buffer.from(admission.caPem).toString('base64')}`,
    ],
    { kubeconfig: options.kubeconfigPath, timeoutMs: 300_000 },
  );
  if (result.code !== 0) throw new Error(`cannot install the chart (helm exited ${result.code}): ${result.stderr.trim()}`);
  log.info({ release: RELEASE, namespace: DEV_CHART_NAMESPACE, chart: CHART_DIR }, 'Installed the chart');
}
