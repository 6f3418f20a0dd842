/**
 * How the chart (infra/chart) wires the functions, as data: for each feature-gate combination,
 * which functions run, each function's ApiServerSources (mode, kinds, label selectors), its
 * resync PingSources and ticks, the admission settings (the replica-modifier identities), and
 * which versions of our CRDs are served. `dynamo-fn dev` builds its event bridge, its webhooks
 * and its admission server from this module, and test/integration/chart.test.ts renders the
 * chart for every gate combination and checks the rendered objects equal what this module
 * gives, so dev cannot drift from the chart (issue 18 item 1; DESIGN.md "Real parts": "The
 * bridge's subscriptions and admission's settings come from the same source as the chart's").
 * A change to a template's "kinds" is a change here too; the chart test says which.
 * Constants only; nothing happens on import.
 * @module
 */
import { ANNOTATION_CRD_FEATURE_GATE, ANNOTATION_CRD_VERSION_FEATURE_GATE_PREFIX } from './crd.js';

/** The chart's feature gates (values `lpx.enabled`, `dgdrV1Beta2.enabled`). */
export interface ChartGates {
  readonly lpxEnabled: boolean;
  readonly dgdrV1Beta2Enabled: boolean;
}

/** The gate names the CRD annotations use (`dynamo-fn.nvidia.com/feature-gate: <name>`). */
const GATE_NAMES: Readonly<Record<string, keyof ChartGates>> = { lpx: 'lpxEnabled', dgdrV1Beta2: 'dgdrV1Beta2Enabled' };

/** A Kubernetes label selector as an ApiServerSource resource's `selector` carries it. */
export interface ChartLabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: 'Exists' }[];
}

/** One resource of an ApiServerSource (`spec.resources[]`), with what RBAC and the PingSource need. */
export interface ChartSourceResource {
  readonly apiVersion: string;
  readonly kind: string;
  /** The API group ("" for core) and plural, as the source's ClusterRole names them. */
  readonly group: string;
  readonly resource: string;
  readonly selector?: ChartLabelSelector;
}

/** One ApiServerSource: its name, mode and resources. */
export interface ChartSource {
  /** metadata.name, e.g. `dynamo-reconcile`, `dynamo-reconcile-children`. */
  readonly name: string;
  readonly mode: 'Resource' | 'Reference';
  readonly resources: readonly ChartSourceResource[];
}

/** One PingSource: a resync of a kind (`kind` and `apiversion` extensions) or a tick (`kind` only). */
export interface ChartPing {
  /** metadata.name, e.g. `dynamo-reconcile-dynamographdeployment-resync`, `dynamo-cleanup-run-retention`. */
  readonly name: string;
  readonly kind: string;
  /** Set on resyncs, absent on ticks (the chart's tick PingSources carry only `kind`). */
  readonly apiVersion?: string;
}

/** One CloudEvents function as the chart deploys it. */
export interface ChartFunction {
  readonly name: 'reconcile' | 'profile' | 'cleanup';
  readonly sources: readonly ChartSource[];
  readonly pings: readonly ChartPing[];
}

/** The chart's release namespace when installed as its values.yaml header says (and as dev installs it). */
export const CHART_RELEASE_NAMESPACE = 'dynamo-system';

/** The ServiceAccount a function runs as: `dynamo-<function>` (templates/_helpers.tpl "dynamo-fn.function"). */
export function functionServiceAccount(name: ChartFunction['name']): string {
  return `dynamo-${name}`;
}

/**
 * What the admission Deployment is given (templates/admission/deployment.yaml): the identities
 * allowed to change adapter-managed DGD replicas (DGD_REPLICAS_MODIFIERS: the reconcile
 * function's ServiceAccount, which writes DGDSA replicas into the DGD) and its webhooks'
 * timeout (values admission.timeoutSeconds, WEBHOOK_TIMEOUT_SECONDS). Pure.
 */
export function chartAdmissionSettings(releaseNamespace: string = CHART_RELEASE_NAMESPACE): { readonly replicasModifiers: readonly string[]; readonly webhookTimeoutSeconds: number } {
  return { replicasModifiers: [`system:serviceaccount:${releaseNamespace}:${functionServiceAccount('reconcile')}`], webhookTimeoutSeconds: 10 };
}

const EXISTS = (key: string): ChartLabelSelector => ({ matchExpressions: [{ key, operator: 'Exists' }] });
const RUN_UID = EXISTS('nvidia.com/dgdr-run-uid');

const DGD = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', group: 'nvidia.com', resource: 'dynamographdeployments' } as const;
const DGDSA = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter', group: 'nvidia.com', resource: 'dynamographdeploymentscalingadapters' } as const;
const DGDR = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', group: 'nvidia.com', resource: 'dynamographdeploymentrequests' } as const;
const RUN = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', group: 'nvidia.com', resource: 'dynamographdeploymentruns' } as const;
const CANDIDATE = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentCandidate', group: 'nvidia.com', resource: 'dynamographdeploymentcandidates' } as const;
const LPXGD = { apiVersion: 'nvidia.com/v1alpha1', kind: 'LPXGraphDeployment', group: 'nvidia.com', resource: 'lpxgraphdeployments' } as const;
const LPR = { apiVersion: 'scheduling.lpu.nvidia.com/v1alpha1', kind: 'LpuPipelineRequest', group: 'scheduling.lpu.nvidia.com', resource: 'lpupipelinerequests' } as const;
const JOB = { apiVersion: 'batch/v1', kind: 'Job', group: 'batch', resource: 'jobs' } as const;
const POD = { apiVersion: 'v1', kind: 'Pod', group: '', resource: 'pods' } as const;
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap', group: '', resource: 'configmaps' } as const;
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', group: '', resource: 'persistentvolumeclaims' } as const;
const SERVICE = { apiVersion: 'v1', kind: 'Service', group: '', resource: 'services' } as const;
const GROVE = (kind: string, resource: string) => ({ apiVersion: 'grove.io/v1alpha1', kind, group: 'grove.io', resource });

/** A function's own source (`dynamo-<fn>`, Reference mode) and one resync PingSource per kind not marked `resync: false`. */
function ownSource(name: ChartFunction['name'], entries: readonly (ChartSourceResource & { readonly resync?: false })[]): { source: ChartSource; pings: ChartPing[] } {
  const fullName = `dynamo-${name}`;
  return {
    source: { name: fullName, mode: 'Reference', resources: entries.map(({ resync: _resync, ...resource }) => resource) },
    pings: entries.filter((e) => e.resync !== false).map((e) => ({ name: `${fullName}-${e.kind.toLowerCase()}-resync`, kind: e.kind, apiVersion: e.apiVersion })),
  };
}

/**
 * The functions the chart deploys for `gates`, with their sources and pings, in the order the
 * chart's templates list them (templates/reconcile/function.yaml and children.yaml,
 * templates/profile/function.yaml, templates/cleanup/function.yaml). Cleanup runs whenever a
 * gate that needs it is on (v1beta2: the trace-claim finalizers' release and Run retention;
 * LPX: scheduling deadlines). Pure.
 */
export function chartFunctions(gates: ChartGates): ChartFunction[] {
  const reconcile = ownSource('reconcile', [DGD, DGDSA, ...(gates.lpxEnabled ? [LPXGD, { ...LPR, resync: false as const }] : [])]);
  const children: ChartSource = {
    name: 'dynamo-reconcile-children',
    mode: 'Resource',
    resources: [
      { ...GROVE('PodCliqueSet', 'podcliquesets'), selector: EXISTS('nvidia.com/dynamo-graph-deployment-name') },
      { ...GROVE('PodClique', 'podcliques'), selector: EXISTS('app.kubernetes.io/part-of') },
      { ...GROVE('PodCliqueScalingGroup', 'podcliquescalinggroups'), selector: EXISTS('app.kubernetes.io/part-of') },
      { ...SERVICE, selector: EXISTS('nvidia.com/dynamo-graph-deployment-name') },
      ...(gates.lpxEnabled ? [{ ...CONFIGMAP, selector: EXISTS('lpx.nvidia.com/deployment-uid') }] : []),
    ],
  };
  const profile = ownSource('profile', [
    DGDR,
    { ...JOB, selector: { matchLabels: { app: 'dynamo-profiler' } }, resync: false },
    { ...CONFIGMAP, selector: EXISTS('dgdr.nvidia.com/name'), resync: false },
    { ...DGD, resync: false },
    ...(gates.dgdrV1Beta2Enabled
      ? // A Candidate wakes its Run (functions/profile/run.ts); the Runs' resync reads the Candidates, so no resync of its own.
        [RUN, { ...CANDIDATE, resync: false as const }, { ...JOB, selector: RUN_UID, resync: false as const }, { ...POD, selector: RUN_UID, resync: false as const }, { ...CLAIM, resync: false as const }]
      : []),
  ]);
  const functions: ChartFunction[] = [
    { name: 'reconcile', sources: [reconcile.source, children], pings: reconcile.pings },
    { name: 'profile', sources: [profile.source], pings: profile.pings },
  ];
  if (gates.dgdrV1Beta2Enabled || gates.lpxEnabled) {
    const cleanup = ownSource('cleanup', [
      // The claims' resync releases a finalizer whose Run and Jobs are gone though no event named the claim.
      ...(gates.dgdrV1Beta2Enabled ? [RUN, CLAIM, { ...JOB, selector: RUN_UID, resync: false as const }] : []),
      ...(gates.lpxEnabled ? [LPXGD] : []),
    ]);
    const ticks: ChartPing[] = [
      ...(gates.dgdrV1Beta2Enabled ? [{ name: 'dynamo-cleanup-run-retention', kind: RUN.kind }] : []),
      ...(gates.lpxEnabled ? [{ name: 'dynamo-cleanup-lpx-deadlines', kind: LPXGD.kind }] : []),
    ];
    functions.push({ name: 'cleanup', sources: [cleanup.source], pings: [...cleanup.pings, ...ticks] });
  }
  return functions;
}

/**
 * A label selector in the `key=value,key` form a watch's `labelSelector` takes. Pure.
 * Source: Kubernetes label selector syntax (matchLabels as `k=v`, `Exists` as the bare key).
 */
export function labelSelectorText(selector: ChartLabelSelector): string {
  return [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector.matchExpressions ?? []).map((expression) => expression.key),
  ].join(',');
}

/** A CRD as far as the gating reads it. */
interface GatedCrd {
  readonly metadata: { readonly [field: string]: unknown };
  readonly spec: { readonly versions: readonly { readonly name: string }[] };
}

/**
 * One of our CRDs as the chart installs it under `gates` (templates/crds.yaml): undefined when
 * its `dynamo-fn.nvidia.com/feature-gate` is off; otherwise a copy without the versions whose
 * `dynamo-fn.nvidia.com/feature-gate.<version>` is off (so with v1beta2 off the DGDR serves
 * v1beta1 and v1alpha1 only, and kubectl's preferred DGDR version is v1beta1). An unknown gate
 * name counts as off, as an unset value does in the template. Pure.
 */
export function gateCrd<T extends GatedCrd>(crd: T, gates: ChartGates): T | undefined {
  const annotations = (crd.metadata['annotations'] ?? {}) as Readonly<Record<string, unknown>>;
  const isOn = (gate: unknown) => {
    if (gate === undefined) return true;
    if (typeof gate !== 'string') return false;
    const key = GATE_NAMES[gate];
    return key !== undefined && gates[key];
  };
  if (!isOn(annotations[ANNOTATION_CRD_FEATURE_GATE])) return undefined;
  const versions = crd.spec.versions.filter((version) => isOn(annotations[`${ANNOTATION_CRD_VERSION_FEATURE_GATE_PREFIX}${version.name}`]));
  return { ...crd, spec: { ...crd.spec, versions } };
}
