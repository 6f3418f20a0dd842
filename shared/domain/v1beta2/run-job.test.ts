import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { RUN_UID, aRun } from '../../../test/support/v1beta2-builders.js';
import { applyRunJobOverrides, renderRunJob } from './run-job.js';
import { renderRunOutputStep } from './run-output.js';

const config = { defaultImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' };

describe('the Run\'s Job', () => {
  it('reference "Replay a recorded trace": mounts only the trace file, read-only, only into the AISimulate container, at /var/run/aisimulate/trace/trace.jsonl.gz, with supplemental group 65532 and no fsGroup; the output step runs after AISimulate succeeded, as the dgdr-profiling-job ServiceAccount', () => {
    const run = deepFreeze(aRun());
    expect(renderRunJob(run, config)).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'qwen3-trace-replay-1-aisimulate',
        namespace: 'inference',
        labels: { 'nvidia.com/dgdr-run-uid': RUN_UID },
        ownerReferences: [{ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', name: 'qwen3-trace-replay-1', uid: RUN_UID, controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        backoffLimit: 0,
        template: {
          metadata: { labels: { 'nvidia.com/dgdr-run-uid': RUN_UID } },
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: 'dgdr-profiling-job',
            securityContext: { supplementalGroups: [65532] },
            containers: [
              {
                name: 'aisimulate',
                image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
                command: ['/bin/sh', '-c', `printf '%s' "$AISIMULATE_INPUT" > /tmp/aisimulate-input.json && aisimulate recommend -c /tmp/aisimulate-input.json --output-dir /var/run/aisimulate/output --overwrite --format json && exec python3 -c "$RUN_OUTPUT_STEP"`],
                env: [
                  {
                    name: 'AISIMULATE_INPUT',
                    // Reference "Replay a recorded trace": the trace lowered to traffic.source {type: trace, format: dynamo, paths: [the mounted file]}
                    // and traffic.load.type trace_timestamps, no traffic.stop.requests; "v1beta2 hardware SKU": the SKU passed unchanged, the budget as
                    // max_candidate_gpus (upstream-notes/profiler.md §4, verified against the real AISimulate).
                    value: JSON.stringify({
                      traffic: { source: { type: 'trace', format: 'dynamo', paths: ['/var/run/aisimulate/trace/trace.jsonl.gz'] }, load: { type: 'trace_timestamps' } },
                      engine: { model: 'Qwen/Qwen3-0.6B', hardware: 'h200_sxm' },
                      optimization: { constraints: { max_candidate_gpus: 8 } },
                    }),
                  },
                  { name: 'RUN_NAME', value: 'qwen3-trace-replay-1' },
                  { name: 'RUN_UID', value: RUN_UID },
                  { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                  { name: 'RUN_OUTPUT_CONFIGMAP', value: 'qwen3-trace-replay-1-aisimulate-output' },
                  { name: 'RUN_OUTPUT_DIR', value: '/var/run/aisimulate/output' },
                  { name: 'RUN_OUTPUT_STEP', value: renderRunOutputStep() },
                ],
                volumeMounts: [
                  { name: 'trace', mountPath: '/var/run/aisimulate/trace/trace.jsonl.gz', subPath: 'windows/2026-10-27T10-00.jsonl.gz', readOnly: true },
                  { name: 'output', mountPath: '/var/run/aisimulate/output' },
                ],
              },
            ],
            volumes: [
              { name: 'trace', persistentVolumeClaim: { claimName: 'request-traces', readOnly: true } },
              { name: 'output', emptyDir: {} },
            ],
          },
        },
      },
    });
  });

  it('a static Run mounts no claim; spec.image wins over the default', () => {
    const job = renderRunJob(aRun({ spec: { image: 'registry.example/planner:1.6.1', workload: { static: { isl: 4000, osl: 1000 } } } }), config) as { spec: { template: { spec: { volumes: unknown[]; containers: { image: string }[] } } } };
    expect(job.spec.template.spec.volumes).toEqual([{ name: 'output', emptyDir: {} }]);
    expect(job.spec.template.spec.containers[0]?.image).toBe('registry.example/planner:1.6.1');
  });
});

describe('spec.overrides.profilingJob (upstream-notes/dgdr.md §2.2 allowlist)', () => {
  const base = { backoffLimit: 0, template: { metadata: { labels: { 'nvidia.com/dgdr-run-uid': 'u' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'aisimulate' }], securityContext: { supplementalGroups: [65532] } } } };
  const rows = [
    {
      name: 'JobSpec scalars replace; template annotations and labels merge; the reserved run-uid label stays',
      override: { activeDeadlineSeconds: 600, template: { metadata: { labels: { team: 'a', 'nvidia.com/dgdr-run-uid': 'other' }, annotations: { a: 'b' } } } },
      want: { backoffLimit: 0, activeDeadlineSeconds: 600, template: { metadata: { labels: { team: 'a', 'nvidia.com/dgdr-run-uid': 'u' }, annotations: { a: 'b' } }, spec: base.template.spec } },
    },
    {
      name: 'scheduling fields replace when non-empty; containers, volumes and securityContext cannot be overridden',
      override: { template: { spec: { nodeSelector: { pool: 'cpu' }, tolerations: [], containers: [{ name: 'x' }], securityContext: { fsGroup: 1 } } } },
      want: { backoffLimit: 0, template: { metadata: { labels: { 'nvidia.com/dgdr-run-uid': 'u' } }, spec: { ...base.template.spec, nodeSelector: { pool: 'cpu' } } } },
    },
  ];
  it.each(rows)('$name', ({ override, want }) => {
    expect(applyRunJobOverrides(deepFreeze(base), deepFreeze(override))).toEqual(want);
  });
});
