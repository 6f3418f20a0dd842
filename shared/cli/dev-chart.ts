/**
 * `dynamo-fn dev --chart`: installs the control plane through the Helm chart onto dev's API
 * server, as on a cluster, and runs the functions the way the chart wires them: the admission
 * webhooks (failurePolicy Fail) call an admission server on loopback (chart value
 * admission.external.url, with its CA as caBundle), and the reconcile function runs with a
 * TokenRequest token of the chart's `dynamo-reconcile` ServiceAccount, so it can do exactly
 * what the chart's ClusterRole grants. Knative's and cert-manager's controllers do not run:
 * their objects are stored, not acted on.
 * @module
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Kube } from '../kube/index.js';
import { CHART_DIR, ensureHelm, installCertManagerCrds, runHelm } from '../../test/harness/helm.js';
import type { HarnessLog } from '../../test/harness/log.js';
import { stringify } from 'yaml';

/** Where dev installs the chart. */
export const DEV_CHART_NAMESPACE = 'dynamo-system';
const RELEASE = 'dynamo-fn';

export interface DevChart {
  /** A kubeconfig for the reconcile function: the chart's ServiceAccount token. */
  readonly reconcileKubeconfigPath: string;
}

/**
 * Installs the chart (`helm upgrade --install`) pointing its webhooks and CRD conversion at dev's
 * admission server.
 * In: the dev control plane's kubeconfig (file and loaded), a folder for the token kubeconfig
 * (removed with the plane), the feature gate. Failures: Error naming the step (helm's stderr
 * included).
 */
export async function installDevChart(options: {
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly kube: Kube;
  readonly dir: string;
  readonly lpxEnabled: boolean;
  /** The admission server dev runs on loopback (webhooks and /convert), and the CA that signed its certificate. */
  readonly admission: { readonly url: string; readonly caPem: string };
  readonly log: HarnessLog;
}): Promise<DevChart> {
  const { log, admission } = options;
  await installCertManagerCrds(options.kube, log);
  {
    const helm = await ensureHelm({ log, preferPath: true });
    const result = await runHelm(
      helm,
      [
        'upgrade', '--install', RELEASE, CHART_DIR, '--namespace', DEV_CHART_NAMESPACE, '--create-namespace',
        '--set', `lpx.enabled=${options.lpxEnabled}`,
        '--set', `admission.external.url=${admission.url}`,
        '--set', `admission.external.caBundle=${Buffer.from(admission.caPem).toString('base64')}`,
      ],
      { kubeconfig: options.kubeconfigPath, timeoutMs: 300_000 },
    );
    if (result.code !== 0) throw new Error(`cannot install the chart (helm exited ${result.code}): ${result.stderr.trim()}`);
    log.info({ release: RELEASE, namespace: DEV_CHART_NAMESPACE, chart: CHART_DIR }, 'Installed the chart');

    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const token = (
      await core.createNamespacedServiceAccountToken({
        name: 'dynamo-reconcile',
        namespace: DEV_CHART_NAMESPACE,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 86_400 } },
      })
    ).status?.token;
    if (token === undefined) throw new Error('cannot get a token for ServiceAccount dynamo-system/dynamo-reconcile: the TokenRequest returned none');
    const cluster = options.kubeConfig.getCurrentCluster();
    const reconcileKubeconfigPath = path.join(options.dir, 'reconcile.kubeconfig');
    await writeFile(
      reconcileKubeconfigPath,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'dev', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } }],
        users: [{ name: 'dynamo-reconcile', user: { token } }],
        contexts: [{ name: 'dev', context: { cluster: 'dev', user: 'dynamo-reconcile' } }],
        'current-context': 'dev',
      }),
      { mode: 0o600 },
    );
    log.info({ serviceAccount: `${DEV_CHART_NAMESPACE}/dynamo-reconcile` }, 'The reconcile function runs with the chart ServiceAccount token');
    return { reconcileKubeconfigPath };
  }
}
