/**
 * Metrics exporter pods as a cluster runs them, for the discovery integration tests: a DaemonSet
 * (the GPU Operator's `nvidia-dcgm-exporter` in `gpu-operator`, Intel XPU Manager's
 * `intel-xpumanager` where the administrator installs it) and its pods, each bound to one node
 * and controlled by the DaemonSet (owner reference `controller: true`, as the DaemonSet
 * controller writes it). No DaemonSet controller runs here (test/harness/apiserver.ts
 * DEFAULT_CONTROLLERS), so the DaemonSet creates nothing itself: the test creates the pods it
 * would, one per node it names, and kwok runs them and gives each a pod IP.
 * Hardware discovery trusts only such pods, in a namespace the administrator names (issue 20
 * item 1; shared/domain/dgdr/dcgm.ts `exporterPodTrust`).
 */
import { randomBytes } from 'node:crypto';

import type { Kube } from '../../shared/kube/index.js';
import { eventually } from './eventually.js';

/** One exporter DaemonSet: where, its name, the labels its pods carry, its image and metrics port. */
export interface ExporterDaemonSet {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly image: string;
  readonly port: number;
}

/** The GPU Operator's DCGM exporter DaemonSet (NVIDIA gpu-operator assets/state-dcgm-exporter/0800_daemonset.yaml). */
export const GPU_OPERATOR_DCGM_EXPORTER: ExporterDaemonSet = { namespace: 'gpu-operator', name: 'nvidia-dcgm-exporter', labels: { app: 'nvidia-dcgm-exporter' }, image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless', port: 9400 };

/** Intel XPU Manager's DaemonSet in `namespace` (intel/xpumanager deployment/kubernetes; upstream's `app.kubernetes.io/name=xpumd` selector). */
export const intelXpuManager = (namespace: string): ExporterDaemonSet => ({ namespace, name: 'intel-xpumanager', labels: { 'app.kubernetes.io/name': 'xpumd' }, image: 'intel/xpumanager:latest', port: 8080 });

/** An exporter pod once kwok runs it. */
export interface RunningExporterPod {
  readonly namespace: string;
  readonly name: string;
  readonly podIp: string;
  readonly nodeName: string;
}

/** Creates the namespace unless it exists (never deleted by a test: namespace deletion outlives a file). */
export async function ensureNamespace(kube: Kube, name: string): Promise<void> {
  if ((await kube.get({ apiVersion: 'v1', kind: 'Namespace', name })) === undefined) await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** Applies the DaemonSet (a node selector no node has: nothing would schedule it even with a controller). Out: its uid. */
export async function applyExporterDaemonSet(kube: Kube, daemonSet: ExporterDaemonSet): Promise<string> {
  await ensureNamespace(kube, daemonSet.namespace);
  const applied = await kube.apply(
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: daemonSet.name, namespace: daemonSet.namespace, labels: { ...daemonSet.labels } },
      spec: {
        selector: { matchLabels: { ...daemonSet.labels } },
        template: {
          metadata: { labels: { ...daemonSet.labels } },
          spec: { nodeSelector: { 'dynamo-fn.test/no-such-node': 'true' }, containers: [{ name: daemonSet.name, image: daemonSet.image, ports: [{ name: 'metrics', containerPort: daemonSet.port }] }] },
        },
      },
    },
    { force: true },
  );
  return applied.metadata.uid ?? '';
}

/**
 * Creates one pod of the DaemonSet on `nodeName` (named `<daemonset>-<5 hex>`, as the DaemonSet
 * controller names them), controlled by it when `controllerUid` is given, else a bare pod with the
 * same labels (what anyone who can create a pod can plant), and waits until kwok runs it with an IP.
 */
export async function createExporterPod(kube: Kube, daemonSet: ExporterDaemonSet, nodeName: string, controllerUid: string | undefined, timeoutMs: number): Promise<RunningExporterPod> {
  const name = `${daemonSet.name}-${randomBytes(3).toString('hex').slice(0, 5)}`;
  await kube.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: daemonSet.namespace,
      labels: { ...daemonSet.labels },
      ...(controllerUid === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: daemonSet.name, uid: controllerUid, controller: true, blockOwnerDeletion: true }] }),
    },
    spec: { nodeName, containers: [{ name: daemonSet.name, image: daemonSet.image, ports: [{ name: 'metrics', containerPort: daemonSet.port }] }] },
  });
  return eventually(`kwok to run ${daemonSet.namespace}/${name} with a pod IP`, async () => {
    const pod = await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: daemonSet.namespace, name });
    const status = (pod?.['status'] ?? {}) as { phase?: string; podIP?: string };
    return status.phase === 'Running' && (status.podIP ?? '') !== '' ? { namespace: daemonSet.namespace, name, podIp: status.podIP ?? '', nodeName } : undefined;
  }, timeoutMs);
}

/** Deletes the pods and waits until they are gone (exporter pods are listed cluster-wide: the files after this one must not see them). */
export async function deleteExporterPods(kube: Kube, pods: readonly RunningExporterPod[], timeoutMs: number): Promise<void> {
  for (const pod of pods) if (pod.name !== '') await kube.delete({ apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name });
  await eventually('the exporter pods gone', async () => {
    for (const pod of pods) if (pod.name !== '' && (await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name })) !== undefined) return undefined;
    return true;
  }, timeoutMs);
}
