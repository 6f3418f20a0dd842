/**
 * The Job of a v1beta2 Run: one `aisimulate recommend` container reading the Run's lowered
 * and patched input, with the trace file (trace Runs only) mounted read-only into that
 * container alone. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Replay a recorded trace" ("The operator mounts
 * only this file, read-only and only into the AISimulate container, through a subPath of the
 * claim at /var/run/aisimulate/trace/trace.jsonl.gz, or ... trace.jsonl"; "the Job's pod has
 * [65532] as a supplemental group. The pod sets no fsGroup"); upstream-notes/profiler.md §3.5
 * (the `aisimulate recommend -c CONFIG --output-dir DIR --format json` command line).
 * Failures of a Run's Job are not retried (backoffLimit 0, as the v1beta1 profiling Job:
 * reference "Lifecycle", Failed).
 * @module
 */
import {
  AISIMULATE_CONTAINER_NAME,
  DGDR_V1BETA2,
  LABEL_DGDR_RUN_UID,
  RUN_KIND,
  TRACE_SUPPLEMENTAL_GROUP,
  type Run,
} from '../../api/index.js';
import { PROFILING_SERVICE_ACCOUNT } from '../dgdr/profiling-job.js';
import { buildAisimulateInput, traceMountPath } from './aisimulate-input.js';
import { runJobName } from './run-lifecycle.js';
import {
  ENV_POD_NAMESPACE,
  ENV_RUN_NAME,
  ENV_RUN_OUTPUT_CONFIGMAP,
  ENV_RUN_OUTPUT_DIR,
  ENV_RUN_OUTPUT_STEP,
  ENV_RUN_UID,
  renderRunOutputStep,
  runOutputConfigMapName,
} from './run-output.js';

/** The env var carrying the AISimulate input JSON into the container. */
export const ENV_AISIMULATE_INPUT = 'AISIMULATE_INPUT';
/** Where the container writes `recommendation.json` and `recommendations/`. */
export const AISIMULATE_OUTPUT_DIR = '/var/run/aisimulate/output';
/** Where the container writes the input file it passes to `aisimulate -c`. */
export const AISIMULATE_INPUT_FILE = '/tmp/aisimulate-input.json';

/**
 * The container's command: write `$AISIMULATE_INPUT` to a file, run
 * `aisimulate recommend -c <file> --output-dir <dir> --overwrite --format json`, and only when it
 * exits 0, exec the output step (`python3 -c "$RUN_OUTPUT_STEP"`, ./run-output.ts), which writes
 * the results ConfigMap. The same command runs locally in the contract test. Pure.
 */
export function aisimulateCommand(outputDir: string = AISIMULATE_OUTPUT_DIR, inputFile: string = AISIMULATE_INPUT_FILE): string[] {
  return ['/bin/sh', '-c', `printf '%s' "$${ENV_AISIMULATE_INPUT}" > ${inputFile} && aisimulate recommend -c ${inputFile} --output-dir ${outputDir} --overwrite --format json && exec python3 -c "$${ENV_RUN_OUTPUT_STEP}"`];
}

/** JobSpec scalars an override replaces when set (upstream-notes/dgdr.md §2.2). */
const JOB_SPEC_SCALARS = ['backoffLimit', 'activeDeadlineSeconds', 'ttlSecondsAfterFinished', 'suspend'] as const;
/** PodSpec fields an override replaces when set or non-empty (upstream-notes/dgdr.md §2.2). */
const POD_SPEC_REPLACED = ['tolerations', 'nodeSelector', 'topologySpreadConstraints', 'affinity', 'priorityClassName', 'serviceAccountName', 'runtimeClassName', 'terminationGracePeriodSeconds', 'automountServiceAccountToken'] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.keys(value).length === 0);
}

/**
 * Applies `spec.overrides.profilingJob` to the Run's Job by upstream's allowlist for the
 * profiling Job (upstream-notes/dgdr.md §2.2), the part that applies to a single-container
 * Job: the JobSpec scalars `backoffLimit`, `activeDeadlineSeconds`, `ttlSecondsAfterFinished`,
 * `suspend` replace; pod template labels (except the reserved `nvidia.com/dgdr-run-uid`) and
 * annotations merge; the PodSpec scheduling fields (tolerations, nodeSelector,
 * topologySpreadConstraints, affinity, priorityClassName, serviceAccountName,
 * runtimeClassName, terminationGracePeriodSeconds, automountServiceAccountToken) replace when
 * set and non-empty. Containers, volumes and the pod security context stay as generated, so
 * the trace mount rules cannot be overridden. Other fields are ignored.
 * In: the rendered Job spec and the override (a JobSpec). Out: a new Job spec. Pure.
 */
export function applyRunJobOverrides(jobSpec: Readonly<Record<string, unknown>>, override: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  if (override === undefined) return { ...jobSpec };
  const out: Record<string, unknown> = { ...jobSpec };
  for (const key of JOB_SPEC_SCALARS) if (override[key] !== undefined && override[key] !== null) out[key] = override[key];
  const template = isRecord(jobSpec['template']) ? jobSpec['template'] : {};
  const overrideTemplate = isRecord(override['template']) ? override['template'] : {};
  const metadata = isRecord(template['metadata']) ? template['metadata'] : {};
  const overrideMetadata = isRecord(overrideTemplate['metadata']) ? overrideTemplate['metadata'] : {};
  const overrideLabels = isRecord(overrideMetadata['labels']) ? overrideMetadata['labels'] : {};
  const labels = { ...Object.fromEntries(Object.entries(overrideLabels).filter(([k]) => k !== LABEL_DGDR_RUN_UID)), ...(isRecord(metadata['labels']) ? metadata['labels'] : {}) };
  const annotations = { ...(isRecord(metadata['annotations']) ? metadata['annotations'] : {}), ...(isRecord(overrideMetadata['annotations']) ? overrideMetadata['annotations'] : {}) };
  const podSpec: Record<string, unknown> = { ...(isRecord(template['spec']) ? template['spec'] : {}) };
  const overridePodSpec = isRecord(overrideTemplate['spec']) ? overrideTemplate['spec'] : {};
  for (const key of POD_SPEC_REPLACED) if (!isEmpty(overridePodSpec[key])) podSpec[key] = overridePodSpec[key];
  out['template'] = { ...template, metadata: { ...metadata, labels, ...(Object.keys(annotations).length === 0 ? {} : { annotations }) }, spec: podSpec };
  return out;
}

export interface RunJobConfig {
  /** Image when the Run's spec names none (admission normally defaults `spec.image`). */
  readonly defaultImage: string;
}

/**
 * Renders the Run's Job: named {@link runJobName}, labelled with the Run's uid
 * (`nvidia.com/dgdr-run-uid`, also on the pod), controller-owned by the Run (so deleting the
 * Run deletes it), `backoffLimit: 0`, `restartPolicy: Never`, pod `supplementalGroups:
 * [65532]` and no `fsGroup`; the trace claim volume is `readOnly`, mounted by `subPath` at
 * {@link traceMountPath} into the `aisimulate` container only; the output step's env (Run name
 * and uid, the pod's namespace from the downward API, the results ConfigMap, the output
 * directory, the step's program) and the ServiceAccount `dgdr-profiling-job` that may write the
 * ConfigMap (./run-output.ts); then `spec.overrides.profilingJob` by {@link applyRunJobOverrides}.
 * In: the Run (metadata.name/namespace/uid, spec). Out: a batch/v1 Job manifest. Pure.
 */
export function renderRunJob(run: Run, config: RunJobConfig): Record<string, unknown> {
  const name = run.metadata.name ?? '';
  const uid = run.metadata.uid ?? '';
  const labels = { [LABEL_DGDR_RUN_UID]: uid };
  const trace = run.spec.workload?.trace;
  const claim = trace?.source.persistentVolumeClaim;
  const volumeMounts: Record<string, unknown>[] = [{ name: 'output', mountPath: AISIMULATE_OUTPUT_DIR }];
  const volumes: Record<string, unknown>[] = [{ name: 'output', emptyDir: {} }];
  if (claim !== undefined) {
    volumeMounts.unshift({ name: 'trace', mountPath: traceMountPath(claim.subPath), subPath: claim.subPath, readOnly: true });
    volumes.unshift({ name: 'trace', persistentVolumeClaim: { claimName: claim.claimName, readOnly: true } });
  }
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: runJobName(name),
      namespace: run.metadata.namespace ?? '',
      labels,
      ownerReferences: [{ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: applyRunJobOverrides({
      backoffLimit: 0,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: PROFILING_SERVICE_ACCOUNT,
          securityContext: { supplementalGroups: [TRACE_SUPPLEMENTAL_GROUP] },
          containers: [
            {
              name: AISIMULATE_CONTAINER_NAME,
              image: run.spec.image ?? config.defaultImage,
              command: aisimulateCommand(),
              env: [
                { name: ENV_AISIMULATE_INPUT, value: JSON.stringify(buildAisimulateInput(run.spec)) },
                { name: ENV_RUN_NAME, value: name },
                { name: ENV_RUN_UID, value: uid },
                { name: ENV_POD_NAMESPACE, valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: ENV_RUN_OUTPUT_CONFIGMAP, value: runOutputConfigMapName(name) },
                { name: ENV_RUN_OUTPUT_DIR, value: AISIMULATE_OUTPUT_DIR },
                { name: ENV_RUN_OUTPUT_STEP, value: renderRunOutputStep() },
              ],
              volumeMounts,
            },
          ],
          volumes,
        },
      },
    }, run.spec.overrides?.profilingJob),
  };
}
