/**
 * A profiling Job as upstream's DGDR controller builds it, for tests of the local Job runner
 * that need no profile function: the fields the runner reads (the `profiler` container's
 * command, args, env, workingDir and mounts; the volumes), with upstream's values.
 * Source: ../shared/upstream-notes/profiler.md §1.1 (Job), §1.2 (container `profiler`), §1.4
 * (the override tool with `overrides.dgd`: its emptyDir, the init container installing it, the mount and env).
 */
export interface ProfilingJobInput {
  /** The DGDR's name, namespace and uid. */
  readonly dgdr: { readonly name: string; readonly namespace: string; readonly uid: string };
  /** The DGDR spec passed whole as `--config`. */
  readonly spec: Record<string, unknown>;
}

export function aProfilingJob({ dgdr, spec }: ProfilingJobInput): Record<string, unknown> {
  const hasDgdOverride = typeof spec['overrides'] === 'object' && spec['overrides'] !== null && 'dgd' in spec['overrides'];
  const env: Record<string, unknown>[] = [
    { name: 'HUGGING_FACE_HUB_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token-secret', key: 'HF_TOKEN' } } },
    { name: 'DGDR_NAME', value: dgdr.name },
    { name: 'DGDR_NAMESPACE', value: dgdr.namespace },
    { name: 'DGDR_UID', value: dgdr.uid },
  ];
  const mounts: Record<string, unknown>[] = [{ name: 'profiling-output', mountPath: '/data' }];
  const volumes: Record<string, unknown>[] = [{ name: 'profiling-output', emptyDir: {} }];
  const initContainers: Record<string, unknown>[] = [];
  if (hasDgdOverride) {
    initContainers.push({
      name: 'dgd-override-installer',
      image: 'dynamo-fn:test',
      command: ['/dgd-apply-overrides'],
      args: ['--install-to', '/opt/dynamo/bin/dgd-apply-overrides'],
      volumeMounts: [{ name: 'dgd-override-tool', mountPath: '/opt/dynamo/bin' }],
    });
    env.push({ name: 'DYNAMO_DGD_APPLY_OVERRIDES_BIN', value: '/opt/dynamo/bin/dgd-apply-overrides' });
    mounts.push({ name: 'dgd-override-tool', mountPath: '/opt/dynamo/bin', readOnly: true });
    volumes.push({ name: 'dgd-override-tool', emptyDir: {} });
  }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `profile-${dgdr.name}`, namespace: dgdr.namespace, labels: { app: 'dynamo-profiler', dgdr: dgdr.name, 'nvidia.com/managed-by': 'dynamo-operator' } },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          serviceAccountName: 'dgdr-profiling-job',
          restartPolicy: 'Never',
          ...(initContainers.length === 0 ? {} : { initContainers }),
          containers: [
            {
              name: 'profiler',
              image: String(spec['image'] ?? 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1'),
              command: ['python', '-m', 'dynamo.profiler'],
              args: ['--config', JSON.stringify(spec), '--output-dir', '/data'],
              workingDir: '/workspace',
              env,
              volumeMounts: mounts,
            },
            { name: 'output-copier', image: 'bitnami/kubectl:latest', command: ['/bin/sh', '-c'], args: ['(the sidecar script)'], volumeMounts: [{ name: 'profiling-output', mountPath: '/data', readOnly: true }] },
          ],
          volumes,
        },
      },
    },
  };
}
