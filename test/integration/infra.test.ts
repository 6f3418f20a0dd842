/**
 * The deployment manifests under infra/ are accepted by a real API server with the Knative
 * CRDs installed (server-side dry run: schema, defaults and CEL rules checked, nothing stored).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createKube } from '../../shared/kube/index.js';
import { testKubeConfig } from '../harness/testing.js';
import { repoRoot } from '../support/paths.js';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return entry.endsWith('.yaml') ? [path] : [];
  });
}

const infraDir = resolve(repoRoot, 'infra');
const documents = yamlFiles(infraDir)
  .filter((file) => !file.includes(`${join('infra', 'crds')}`))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((d) => ({ file: relative(repoRoot, file), object: d.toJS() as { kind: string; metadata: { name: string } } })),
  )
  .map(({ file, object }) => ({ name: `${file}: ${object.kind} ${object.metadata.name}`, object }));

describe('infra/ manifests', () => {
  it('has the reconcile and profile functions (Knative Services, ApiServerSources, PingSources, Broker, Triggers, RBAC) and the always-on admission webhooks', () => {
    expect(documents.map((d) => d.name.replace(/^.*: /, '')).sort()).toEqual(
      [
        'ApiServerSource dynamo-dgd',
        'ApiServerSource dynamo-dgd-children',
        'ApiServerSource dynamo-dgdsa',
        'ApiServerSource dynamo-dgdr',
        'ClusterRole dynamo-apiserversource-profile',
        'ClusterRole dynamo-dgdr-profiling-job',
        'ClusterRole dynamo-profile',
        'ClusterRoleBinding dynamo-apiserversource-profile',
        'ClusterRoleBinding dynamo-profile',
        'PingSource dynamo-dgdr-resync',
        'Service dynamo-profile',
        'ServiceAccount dynamo-profile',
        'Trigger dynamo-profile-configmap',
        'Trigger dynamo-profile-dgd',
        'Trigger dynamo-profile-dgdr',
        'Trigger dynamo-profile-job',
        'Broker dynamo',
        'ClusterRole dynamo-apiserversource',
        'ClusterRole dynamo-reconcile',
        'ClusterRoleBinding dynamo-apiserversource',
        'ClusterRoleBinding dynamo-reconcile',
        'Deployment dynamo-admission',
        'MutatingWebhookConfiguration dynamo-admission',
        'Namespace dynamo-system',
        'PingSource dynamo-dgd-resync',
        'PingSource dynamo-dgdsa-resync',
        'PodDisruptionBudget dynamo-admission',
        'Service dynamo-admission',
        'Service dynamo-reconcile',
        'ServiceAccount dynamo-admission',
        'ServiceAccount dynamo-apiserversource',
        'ServiceAccount dynamo-reconcile',
        'Trigger dynamo-reconcile-dgd',
        'Trigger dynamo-reconcile-podclique',
        'Trigger dynamo-reconcile-podcliquescalinggroup',
        'Trigger dynamo-reconcile-podcliqueset',
        'Trigger dynamo-reconcile-service',
        'Trigger dynamo-reconcile-dgdsa',
        'ValidatingWebhookConfiguration dynamo-admission',
        // infra/lpx/: installed only with lpx.enabled=true (issue 11).
        'ApiServerSource dynamo-lpx',
        'ClusterRole dynamo-apiserversource-lpx',
        'ClusterRole dynamo-reconcile-lpx',
        'ClusterRoleBinding dynamo-apiserversource-lpx',
        'ClusterRoleBinding dynamo-reconcile-lpx',
        'ClusterRole dynamo-cleanup-lpx',
        'ClusterRoleBinding dynamo-cleanup-lpx',
        'Trigger dynamo-cleanup-lpxgd',
        'PingSource dynamo-lpx-resync',
        'Trigger dynamo-reconcile-lpr',
        'Trigger dynamo-reconcile-lpxgd',
      ].sort(),
    );
  });

  it('points the webhook configurations at the admission paths the function serves', async () => {
    const { webhookPath } = await import('../../functions/admission/index.js');
    const paths = documents
      .filter((d) => d.object.kind.endsWith('WebhookConfiguration'))
      .flatMap((d) => (d.object as unknown as { webhooks: { clientConfig: { service: { path: string } } }[] }).webhooks.map((w) => w.clientConfig.service.path));
    expect(paths.sort()).toEqual(
      [
        webhookPath({ kind: 'mutate', version: 'v1beta1' }),
        webhookPath({ kind: 'validate', version: 'v1beta1' }),
        webhookPath({ kind: 'mutate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' }),
        webhookPath({ kind: 'validate', version: 'v1beta1', resource: 'dynamographdeploymentrequests' }),
      ].sort(),
    );
  });

  it('are accepted by the API server (server-side apply, dry run)', async () => {
    const kubeConfig = testKubeConfig();
    const kube = createKube(kubeConfig, { fieldManager: 'infra-test' });
    // The namespace must exist for the namespaced dry runs.
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'dynamo-system' } });
    const { KubernetesObjectApi } = await import('@kubernetes/client-node');
    const api = KubernetesObjectApi.makeApiClient(kubeConfig);
    const failures: string[] = [];
    for (const { name, object } of documents) {
      try {
        await api.patch(object as never, undefined, 'All', 'infra-test', true, 'application/apply-patch+yaml' as never);
      } catch (error) {
        failures.push(`${name}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
