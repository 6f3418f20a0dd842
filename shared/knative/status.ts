/**
 * What `dynamo-fn status` shows for each function of the control plane, computed from the
 * objects Knative Serving (or the Deployment controller) maintains. Pure.
 *
 * Knative Service status (serving.knative.dev/v1): `conditions[type=Ready]` with its reason,
 * `url`, `latestCreatedRevisionName`, `latestReadyRevisionName`; a Revision's
 * `status.desiredReplicas` / `status.actualReplicas` give the scale (0 when scaled to zero).
 * Source: ../shared/crds/knative/serving.knative.dev_service.yaml and _revision.yaml (status
 * schemas and the Revision's printer columns); ../shared/upstream-notes/knative.md §3.
 * @module
 */
import { z } from 'zod';

/** One function of the control plane and the object that runs it. */
export interface ControlPlaneFunction {
  readonly name: 'admission' | 'reconcile' | 'profile' | 'cleanup';
  /** How it runs: an always-on Deployment (admission) or a Knative Service. */
  readonly workload: 'Deployment' | 'Service';
  /** The object's name in the release namespace. */
  readonly objectName: string;
}

/** The functions the Helm chart installs, in the order `status` lists them (infra/chart/templates). */
export const CONTROL_PLANE_FUNCTIONS: readonly ControlPlaneFunction[] = [
  { name: 'admission', workload: 'Deployment', objectName: 'dynamo-admission' },
  { name: 'reconcile', workload: 'Service', objectName: 'dynamo-reconcile' },
  { name: 'profile', workload: 'Service', objectName: 'dynamo-profile' },
  { name: 'cleanup', workload: 'Service', objectName: 'dynamo-cleanup' },
];

const ConditionSchema = z.object({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() }).loose();
const MetaSchema = z.object({ name: z.string(), namespace: z.string().optional(), generation: z.number().optional() }).loose();

/** A Knative Service as far as status reads it. */
export const KnativeServiceSchema = z
  .object({
    metadata: MetaSchema,
    status: z
      .object({
        observedGeneration: z.number().optional(),
        conditions: z.array(ConditionSchema).optional(),
        url: z.string().optional(),
        latestCreatedRevisionName: z.string().optional(),
        latestReadyRevisionName: z.string().optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type KnativeService = z.infer<typeof KnativeServiceSchema>;

/** A Knative Revision as far as status reads it. */
export const KnativeRevisionSchema = z
  .object({
    metadata: MetaSchema,
    status: z.object({ desiredReplicas: z.number().optional(), actualReplicas: z.number().optional(), conditions: z.array(ConditionSchema).optional() }).loose().optional(),
  })
  .loose();
export type KnativeRevision = z.infer<typeof KnativeRevisionSchema>;

/** An apps/v1 Deployment as far as status reads it. */
export const DeploymentSchema = z
  .object({
    metadata: MetaSchema,
    spec: z.object({ replicas: z.number().optional() }).loose().optional(),
    status: z
      .object({ observedGeneration: z.number().optional(), readyReplicas: z.number().optional(), replicas: z.number().optional(), conditions: z.array(ConditionSchema).optional() })
      .loose()
      .optional(),
  })
  .loose();
export type Deployment = z.infer<typeof DeploymentSchema>;

/** One row of `dynamo-fn status`. */
export interface FunctionStatus {
  readonly function: ControlPlaneFunction['name'];
  readonly workload: ControlPlaneFunction['workload'];
  readonly installed: boolean;
  /** The Ready condition's status (Available for a Deployment); Unknown when not reported yet. */
  readonly ready: 'True' | 'False' | 'Unknown';
  /** Its reason (empty when Ready or not reported). */
  readonly reason: string;
  readonly message: string;
  /** The Knative route URL, or the admission Service's in-cluster HTTPS address. */
  readonly url: string;
  readonly latestCreatedRevision: string;
  readonly latestReadyRevision: string;
  /** Pods wanted and pods running now (a Knative Service scaled to zero shows 0). */
  readonly desiredScale: number | undefined;
  readonly actualScale: number | undefined;
}

function readyOf(conditions: readonly z.infer<typeof ConditionSchema>[] | undefined, type: string): Pick<FunctionStatus, 'ready' | 'reason' | 'message'> {
  const condition = conditions?.find((c) => c.type === type);
  const ready = condition?.status === 'True' || condition?.status === 'False' ? condition.status : 'Unknown';
  return { ready, reason: condition?.reason ?? '', message: condition?.message ?? '' };
}

/** The row of a function that is not installed (its object does not exist). Pure. */
export function notInstalledStatus(fn: ControlPlaneFunction): FunctionStatus {
  return {
    function: fn.name,
    workload: fn.workload,
    installed: false,
    ready: 'Unknown',
    reason: 'NotInstalled',
    message: `${fn.workload} ${fn.objectName} not found`,
    url: '',
    latestCreatedRevision: '',
    latestReadyRevision: '',
    desiredScale: undefined,
    actualScale: undefined,
  };
}

/**
 * The row of a Knative Service function. Scale comes from the latest ready Revision (the one
 * serving), else the latest created one; a Service whose status Knative has not written yet
 * reads Ready=Unknown. In: the Service and its Revisions (label serving.knative.dev/service).
 * Source: Knative Service and Revision status schemas (see the module doc). Pure.
 */
export function knativeServiceStatus(fn: ControlPlaneFunction, service: KnativeService, revisions: readonly KnativeRevision[]): FunctionStatus {
  const status = service.status;
  // A status from an older generation describes the previous spec: not Ready yet.
  const isStale = status?.observedGeneration !== undefined && service.metadata.generation !== undefined && status.observedGeneration < service.metadata.generation;
  const ready = isStale ? { ready: 'Unknown' as const, reason: 'OutdatedGeneration', message: `status is for generation ${status.observedGeneration}, spec is at ${service.metadata.generation}` } : readyOf(status?.conditions, 'Ready');
  const revisionName = status?.latestReadyRevisionName ?? status?.latestCreatedRevisionName;
  const revision = revisions.find((r) => r.metadata.name === revisionName);
  return {
    function: fn.name,
    workload: 'Service',
    installed: true,
    ...ready,
    url: status?.url ?? '',
    latestCreatedRevision: status?.latestCreatedRevisionName ?? '',
    latestReadyRevision: status?.latestReadyRevisionName ?? '',
    desiredScale: revision?.status?.desiredReplicas,
    actualScale: revision?.status?.actualReplicas,
  };
}

/**
 * The row of the admission Deployment: Ready is its Available condition, scale its spec and
 * ready replicas, the URL the in-cluster address the webhooks call. Pure.
 */
export function deploymentStatus(fn: ControlPlaneFunction, deployment: Deployment): FunctionStatus {
  const namespace = deployment.metadata.namespace ?? '';
  return {
    function: fn.name,
    workload: 'Deployment',
    installed: true,
    ...readyOf(deployment.status?.conditions, 'Available'),
    url: `https://${deployment.metadata.name}.${namespace}.svc`,
    latestCreatedRevision: '',
    latestReadyRevision: '',
    desiredScale: deployment.spec?.replicas ?? 1,
    actualScale: deployment.status?.readyReplicas ?? 0,
  };
}

/** `kubectl get`-style table of the rows (columns padded, `-` for empty). Pure. */
export function formatStatusTable(rows: readonly FunctionStatus[]): string {
  const header = ['FUNCTION', 'KIND', 'READY', 'REASON', 'URL', 'LATESTCREATED', 'LATESTREADY', 'DESIRED', 'ACTUAL'];
  const cell = (value: string | number | undefined) => (value === undefined || value === '' ? '-' : String(value));
  const body = rows.map((r) => [r.function, r.workload, r.installed ? r.ready : '-', r.reason, r.url, r.latestCreatedRevision, r.latestReadyRevision, r.desiredScale, r.actualScale].map(cell));
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  return [header, ...body].map((row) => row.map((value, i) => (i === row.length - 1 ? value : value.padEnd((widths[i] ?? 0) + 3))).join('')).join('\n');
}

/**
 * One progress line of `install --wait` for a function, e.g.
 * `reconcile: Ready=False (RevisionMissing: Configuration "dynamo-reconcile" does not have any ready Revision) scale 0/1`. Pure.
 */
export function progressLine(row: FunctionStatus): string {
  const reason = row.reason === '' ? '' : ` (${row.reason}${row.message === '' ? '' : `: ${row.message}`})`;
  const scale = row.desiredScale === undefined && row.actualScale === undefined ? '' : ` scale ${row.actualScale ?? '-'}/${row.desiredScale ?? '-'}`;
  return `${row.function}: Ready=${row.ready}${reason}${scale}`;
}
