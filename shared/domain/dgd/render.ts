/**
 * Renders a DynamoGraphDeployment into Grove objects: one PodCliqueSet for its ordinary
 * (non-LPX) components and one Service per component.
 *
 * Source: ../shared/reference/dgd-reference.txt ("Grove update strategy", "Configure native
 * minimum availability", "Grove rollout budget overrides"); ../shared/upstream-notes/dgd.md §4;
 * ../shared/upstream-notes/grove.md §A.2, §A.8.
 * @module
 */
import {
  ANNOTATION_ENABLE_GROVE,
  ANNOTATION_GROVE_UPDATE_STRATEGY,
  ANNOTATION_KUBE_DISCOVERY_MODE,
  ANNOTATION_VOLCANO_QUEUE,
  GROVE_ANNOTATION_VOLCANO_QUEUE,
  KAI_SCHEDULER_NAME,
  VOLCANO_SCHEDULER_NAME,
  DGD_KIND,
  DGD_V1BETA1,
  EPP_GRPC_PORT,
  FRONTEND_HTTP_PORT,
  GROVE_API_VERSION,
  GROVE_MAX_COMBINED_NAME_LENGTH,
  GROVE_UPDATE_STRATEGIES,
  LABEL_COMPONENT,
  LABEL_COMPONENT_TYPE,
  LABEL_DYNAMO_NAMESPACE,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  MAIN_CONTAINER_NAME,
  WORKER_SYSTEM_PORT,
  renderPath,
  type Component,
  type Dgd,
  type FieldIssue,
  type PodCliqueScalingGroupConfig,
  type PodCliqueTemplateSpec,
  type PodTemplateSpec,
} from '../../api/index.js';
import { effectiveMinAvailable, maxUnavailable, resolveUpdateStrategy } from './availability.js';
import {
  componentBaseName,
  componentNameBudget,
  componentServiceName,
  isDns1123Label,
  isDns1123Subdomain,
  isMultinode,
  leaderCliqueName,
  podCliqueSetName,
  usesScalingGroup,
  workerCliqueName,
} from './names.js';
import { buildPodSpec, cliqueAnnotations, cliqueLabels, componentAnnotation, DEFAULT_POD_SETTINGS, discoveryBackend, dynamoNamespace, isWorkerClass, labelValue, type CliqueContext, type PodSettings } from './pod-template.js';
import { computeWorkerHash } from './worker-hash.js';
import { templateReplicas } from './grove-scaling.js';
import { isCheckpointGated } from './checkpoints.js';
import { experimentalMode, gmsComponentIssues, gmsResourceClaimTemplate, gmsResourceClaimTemplateName, gmsResourceClaimTemplateSpec, gpuMemoryServiceMode, isInterPodGms } from './gms.js';
import { failoverComponentIssues, failoverWarnings, interPodGmsLayout } from './failover.js';
import { renderAlphaPvcs } from './alpha-pvcs.js';
import { isK8sDiscoveryEnabled, k8sDiscoveryServiceAccountName, MAX_SERVICE_ACCOUNT_NAME_LENGTH, renderK8sDiscoveryObjects } from './k8s-discovery.js';
import { cloneJson } from '../clone.js';

/** Settings rendering depends on, from the operator configuration. */
export interface RenderConfig {
  /** `lpx.enabled`: LPX components are rendered by the LPX path only when true. */
  readonly lpxEnabled: boolean;
  /** PodCliqueSet `template.terminationDelay` (upstream default 15m). */
  readonly terminationDelay: string;
  /** The configured operator version (default 1.6.1); not read by the origin gates (a DGD renders by its own stamped origin, or as legacy). */
  readonly defaultOriginVersion?: string;
  /** TensorRT-LLM SSH key Secret (upstream operator config `mpi.sshSecretName`; default `mpi-run-ssh-secret`). */
  readonly mpiSshSecretName?: string;
  /** Default discovery backend (`kubernetes`, or `etcd`). */
  readonly discoveryBackend?: PodSettings['discoveryBackend'];
  /** Gang scheduler integration: `kai` (schedulerName kai-scheduler + queue label), `volcano`, or `none` (default). */
  readonly scheduler?: PodSettings['scheduler'];
}

/** The pod settings of a render config, defaults filled in. Pure. */
export function podSettings(config: RenderConfig): PodSettings {
  return {
    defaultOriginVersion: config.defaultOriginVersion ?? DEFAULT_POD_SETTINGS.defaultOriginVersion,
    mpiSshSecretName: config.mpiSshSecretName ?? DEFAULT_POD_SETTINGS.mpiSshSecretName,
    discoveryBackend: config.discoveryBackend ?? DEFAULT_POD_SETTINGS.discoveryBackend,
    scheduler: config.scheduler ?? DEFAULT_POD_SETTINGS.scheduler,
  };
}

export const DEFAULT_RENDER_CONFIG: RenderConfig = Object.freeze({ lpxEnabled: false, terminationDelay: '15m' });

/** A rendered object, ready for server-side apply: only fields we own. */
export type RenderedObject = Record<string, unknown> & {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string } & Record<string, unknown>;
};

export type RenderResult =
  | { readonly ok: true; readonly objects: readonly RenderedObject[]; readonly warnings: readonly string[]; readonly workerHash: string }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/**
 * Renders a DGD.
 * In: a parsed v1beta1 DGD (metadata.name, namespace, uid, annotations; spec), the namespace
 * to use when metadata.namespace is absent, and the render config. Out: the PodCliqueSet
 * (absent when every component is LPX), the component Services, the Kubernetes discovery
 * ServiceAccount/Role/RoleBinding (k8s-discovery.ts), the intra-pod GMS ResourceClaimTemplates
 * (gms.ts) and the v1alpha1 PVCs to create (alpha-pvcs.ts), sorted by kind then name, plus warnings; or every field issue that
 * prevents rendering. The worker cliques carry the worker hash (label and `DYN_NAMESPACE_WORKER_SUFFIX`)
 * unless `workerHashSuffix` is false (worker-hash-suffix.ts: a PodCliqueSet an older upstream
 * operator wrote without it stays so until the worker generation changes); `workerHash` is
 * returned either way (`workerHash`, when given, must be `computeWorkerHash(dgd)`). Owner references to the DGD are set when `metadata.uid` is known. Deterministic: the same input gives
 * byte-identical output. Pure.
 */
export function renderDgd(dgd: Dgd, options: { readonly namespace?: string; readonly config?: RenderConfig; readonly workerHash?: string; readonly workerHashSuffix?: boolean } = {}): RenderResult {
  const config = options.config ?? DEFAULT_RENDER_CONFIG;
  const namespace = dgd.metadata.namespace ?? options.namespace ?? 'default';
  const ordinary = dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pvcs = renderAlphaPvcs(dgd, (name) => objectMeta(dgd, name, namespace, {}));
  const issues = [...renderIssues(dgd, ordinary, config), ...pvcs.issues];
  if (issues.length > 0) return { ok: false, issues };

  const warnings: string[] = [];
  dgd.spec.components.forEach((component, index) => {
    if (component.type !== 'lpx') return;
    warnings.push(
      config.lpxEnabled
        ? `spec.components[${index}] ("${component.name}"): LPX components are rendered into their own PodCliqueSet by the LPX path, not by this renderer`
        : `spec.components[${index}] ("${component.name}"): not rendered: LPX components require lpx.enabled=true`,
    );
  });
  warnings.push(...unrenderedExperimentalWarnings(dgd, namespace));

  const workerHash = options.workerHash ?? computeWorkerHash(dgd);
  const objects: RenderedObject[] = [...(pvcs.objects as RenderedObject[]), ...discoveryObjects(dgd, namespace, ordinary, config)];
  if (ordinary.length > 0) objects.push(renderPodCliqueSet(dgd, namespace, ordinary, options.workerHashSuffix === false ? undefined : workerHash, config));
  objects.push(...ordinary.map((component) => renderComponentService(dgd, namespace, component)));
  objects.push(...gmsClaimTemplates(dgd, namespace, ordinary));
  return { ok: true, objects: objects.sort(byKindThenName), warnings, workerHash };
}

function byKindThenName(a: RenderedObject, b: RenderedObject): number {
  const ka = `${a.kind}/${a.metadata.name}`;
  const kb = `${b.kind}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Whether the DGD's pods run as the Kubernetes discovery ServiceAccount, so that it and its
 * Role and RoleBinding are rendered: the DGD's discovery backend is `kubernetes` (upstream
 * `reconcileK8sDiscoveryResources`), or a component's is (its pods name the ServiceAccount,
 * upstream `GenerateBasePodSpec`; upstream creates it only for the former, which would leave
 * such pods without their ServiceAccount). Only for DGDs with components this renderer lays
 * out (not LPX-only ones). Pure.
 */
export function usesK8sDiscoveryServiceAccount(dgd: Dgd, ordinary: readonly Component[], config: RenderConfig): boolean {
  const settings = podSettings(config);
  if (ordinary.length === 0) return false; // LPX components are laid out by the LPX path (lpx/).
  if (isK8sDiscoveryEnabled(dgd, settings.discoveryBackend)) return true;
  return ordinary.some((component) => discoveryBackend({ dgd, namespace: '', component, workerHash: undefined, settings }) === 'kubernetes');
}

/**
 * The ResourceClaimTemplate of each intra-pod GMS component that asks for GPUs (gms.ts
 * `gmsResourceClaimTemplate`), named `<dgd>-<lower(component)>-gpu` and controlled by the DGD
 * like its other children. Source: upstream `dynamographdeployment_controller.go` (one
 * `SyncResource` of `dra.GenerateResourceClaimTemplate` per GMS component). Pure.
 */
function gmsClaimTemplates(dgd: Dgd, namespace: string, ordinary: readonly Component[]): RenderedObject[] {
  return ordinary.flatMap((component) => {
    if (gpuMemoryServiceMode(component) !== 'IntraPod') return [];
    const template = gmsResourceClaimTemplate(component, objectMeta(dgd, gmsResourceClaimTemplateName(dgd.metadata.name ?? '', component.name), namespace, {}));
    return template === undefined ? [] : [template as RenderedObject];
  });
}

/** The discovery ServiceAccount, Role and RoleBinding (k8s-discovery.ts), when the DGD uses them. */
function discoveryObjects(dgd: Dgd, namespace: string, ordinary: readonly Component[], config: RenderConfig): RenderedObject[] {
  if (!usesK8sDiscoveryServiceAccount(dgd, ordinary, config)) return [];
  return renderK8sDiscoveryObjects(dgd.metadata.name ?? '', namespace, (name, labels) => objectMeta(dgd, name, namespace, { labels })) as RenderedObject[];
}

/**
 * Warnings for the experimental component features: the inter-pod GMS and failover layouts
 * this renderer does not lay out yet (the component renders without them), the
 * intra-pod GMS component whose main container asks for no GPU (no ResourceClaimTemplate is
 * made for it), and failover without a matching GMS
 * (gms.ts, failover.ts). Pure.
 */
export function unrenderedExperimentalWarnings(dgd: Dgd, namespace = dgd.metadata.namespace ?? 'default'): string[] {
  const warnings: string[] = [];
  dgd.spec.components.forEach((component, index) => {
    if (component.type === 'lpx') return;
    const at = `spec.components[${index}].experimental`;
    const multinode = isMultinode(component);
    if (multinode && gpuMemoryServiceMode(component) === 'InterPod') warnings.push(`${at}.gpuMemoryService.mode ("${component.name}"): InterPod on a multinode component is not rendered by this control plane yet; the component renders without the GPU memory service`);
    if (multinode && experimentalMode(component.experimental?.failover) === 'InterPod') warnings.push(`${at}.failover.mode ("${component.name}"): InterPod on a multinode component is not rendered by this control plane yet; the component renders without failover`);
    if (gpuMemoryServiceMode(component) === 'IntraPod' && gmsResourceClaimTemplateSpec(component).count <= 0) {
      warnings.push(
        `${at}.gpuMemoryService ("${component.name}"): the main container asks for no GPU, so no ResourceClaimTemplate ${namespace}/${gmsResourceClaimTemplateName(dgd.metadata.name ?? '', component.name)} is made (upstream makes one only for a GPU count above 0) and the pods cannot be scheduled`,
      );
    }
    warnings.push(...failoverWarnings(component, index, componentAnnotation({ dgd, component }, ANNOTATION_KUBE_DISCOVERY_MODE)));
  });
  return warnings;
}

/** Checks that a DGD can be rendered at all; admission runs the same checks earlier. */
function renderIssues(dgd: Dgd, ordinary: readonly Component[], config: RenderConfig): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const name = dgd.metadata.name;
  if (name === undefined || name === '') issues.push({ path: 'metadata.name', type: 'Required', detail: 'name is required' });
  else if (!isDns1123Subdomain(name)) {
    issues.push({ path: 'metadata.name', type: 'Invalid', value: name, detail: "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character" });
  } else if (k8sDiscoveryServiceAccountName(name).length > MAX_SERVICE_ACCOUNT_NAME_LENGTH && usesK8sDiscoveryServiceAccount(dgd, ordinary, config)) {
    issues.push({ path: 'metadata.name', type: 'TooLong', value: name, detail: `the Kubernetes discovery ServiceAccount name "<name>-k8s-service-discovery" must be no more than ${MAX_SERVICE_ACCOUNT_NAME_LENGTH} characters` });
  }
  const namespace = dgd.metadata.namespace;
  if (namespace !== undefined && !isDns1123Label(namespace)) {
    issues.push({ path: 'metadata.namespace', type: 'Invalid', value: namespace, detail: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character" });
  }
  if (dgd.spec.components.length === 0) issues.push({ path: 'spec.components', type: 'Required', detail: 'must have at least one component' });
  const strategy = resolveUpdateStrategy(dgd);
  if (!strategy.ok) {
    issues.push({
      path: renderPath(['metadata', 'annotations', { key: ANNOTATION_GROVE_UPDATE_STRATEGY }]),
      type: 'NotSupported',
      value: strategy.value,
      detail: `supported values: ${GROVE_UPDATE_STRATEGIES.map((s) => `"${s}"`).join(', ')}`,
    });
  }
  const enableGrove = dgd.metadata.annotations?.[ANNOTATION_ENABLE_GROVE];
  if (enableGrove?.toLowerCase() === 'false') {
    issues.push({
      path: renderPath(['metadata', 'annotations', { key: ANNOTATION_ENABLE_GROVE }]),
      type: 'NotSupported',
      value: enableGrove,
      detail: 'only the Grove workload provider is rendered by this control plane',
    });
  }
  if (name !== undefined && issues.length === 0) {
    const pcsName = podCliqueSetName(name, ordinary);
    dgd.spec.components.forEach((component, index) => {
      if (component.type === 'lpx') return;
      const combined = pcsName.length + componentNameBudget(component);
      if (combined > GROVE_MAX_COMBINED_NAME_LENGTH) {
        issues.push({
          path: `spec.components[${index}].name`,
          type: 'Invalid',
          value: component.name,
          detail: `combined Grove resource name length ${combined} exceeds the ${GROVE_MAX_COMBINED_NAME_LENGTH}-character limit; shorten the deployment or component name`,
        });
      }
    });
  }
  dgd.spec.components.forEach((component, index) => {
    if (component.type !== 'lpx') issues.push(...gmsComponentIssues(component, index), ...failoverComponentIssues(component, index, dgd.spec.backendFramework));
    const main = component.podTemplate?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME);
    const roleTemplates = (component.roles ?? []).filter((r) => r.podTemplate !== undefined);
    if (component.type !== 'lpx' && roleTemplates.length === 0 && (main?.image ?? '') === '') {
      issues.push({
        path: `spec.components[${index}].podTemplate.spec.containers`,
        type: 'Required',
        detail: `must contain a container named "${MAIN_CONTAINER_NAME}" with a non-empty image`,
      });
    }
  });
  return issues;
}

function ownerReferences(dgd: Dgd): Record<string, unknown>[] | undefined {
  const uid = dgd.metadata.uid;
  if (uid === undefined || uid === '') return undefined;
  return [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: dgd.metadata.name, uid, controller: true, blockOwnerDeletion: true }];
}

function objectMeta(dgd: Dgd, name: string, namespace: string, extra: { labels?: Record<string, string>; annotations?: Record<string, string> | undefined }): RenderedObject['metadata'] {
  const meta: Record<string, unknown> = { name, namespace };
  if (extra.labels !== undefined) meta['labels'] = extra.labels;
  if (extra.annotations !== undefined && Object.keys(extra.annotations).length > 0) meta['annotations'] = extra.annotations;
  const owners = ownerReferences(dgd);
  if (owners !== undefined) meta['ownerReferences'] = owners;
  return meta as RenderedObject['metadata'];
}

/**
 * A clique or scaling-group topology constraint from a typed `packDomain`: only
 * `pack.required`, because Grove inherits `topologyName` from the PodCliqueSet template
 * (grove.md §A.2 "It is inherited downward"); upstream `toGroveTopologyConstraint`. Pure.
 */
export function typedComponentTopology(packDomain: string | undefined): Record<string, unknown> | undefined {
  return packDomain === undefined ? undefined : { pack: { required: packDomain } };
}

/**
 * The PodCliqueSet template topology from `spec.topologyConstraint`: `topologyName` (the
 * ClusterTopologyBinding) and `pack.required` when a packDomain is set. Upstream
 * `specToGroveTopologyConstraint`. Pure.
 */
export function typedGraphTopology(dgd: Dgd): Record<string, unknown> | undefined {
  const typed = dgd.spec.topologyConstraint;
  if (typed === undefined) return undefined;
  return { topologyName: typed.clusterTopologyName, ...(typed.packDomain === undefined ? {} : { pack: { required: typed.packDomain } }) };
}

function overrideValue(value: Record<string, unknown> | undefined, ...path: string[]): unknown {
  let node: unknown = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined ? undefined : cloneJson(node);
}

/** The budget and topology a component's providerOverride puts on its owning clique or scaling group. */
function ownedOverrides(component: Component): Pick<PodCliqueTemplateSpec, 'rollingUpdate' | 'topologyConstraint'> {
  const out: Pick<PodCliqueTemplateSpec, 'rollingUpdate' | 'topologyConstraint'> = {};
  const budget = maxUnavailable(component);
  if (typeof budget === 'number') out.rollingUpdate = { maxUnavailable: budget };
  const topology = (overrideValue(component.providerOverride?.value, 'topologyConstraint') as PodCliqueTemplateSpec['topologyConstraint']) ?? typedComponentTopology(component.topologyConstraint?.packDomain);
  if (topology !== undefined) out.topologyConstraint = topology;
  return out;
}

function clique(
  ctx: CliqueContext,
  name: string,
  replicas: number,
  minAvailable: number,
  template: PodTemplateSpec | undefined,
  extra: Pick<PodCliqueTemplateSpec, 'rollingUpdate' | 'topologyConstraint'> = {},
): PodCliqueTemplateSpec {
  const annotations = cliqueAnnotations(ctx, template);
  return {
    name,
    labels: cliqueLabels(ctx, template),
    ...(annotations === undefined ? {} : { annotations }),
    ...extra,
    spec: { roleName: name, replicas, minAvailable, podSpec: withSchedulerName(buildPodSpec(ctx, template), ctx.settings?.scheduler ?? 'none') },
  };
}

/**
 * The gang scheduler of a clique: `kai-scheduler` under KAI, `volcano` under Volcano, unless
 * the pod template names another scheduler (upstream `injectKaiSchedulerIfEnabled`,
 * `injectVolcanoSchedulerIfEnabled`). Pure.
 */
export function withSchedulerName(podSpec: Record<string, unknown>, scheduler: PodSettings['scheduler']): Record<string, unknown> {
  if (scheduler === 'none') return podSpec;
  const name = scheduler === 'kai' ? KAI_SCHEDULER_NAME : VOLCANO_SCHEDULER_NAME;
  const authored = podSpec['schedulerName'];
  if (typeof authored === 'string' && authored !== '' && authored !== name) return podSpec;
  return { ...podSpec, schedulerName: name };
}

/**
 * The PodCliqueSet of the ordinary components (upstream-notes/dgd.md §4.1, §4.2):
 * - a single-node component: one clique `<name>` with the component's replicas and the
 *   effective minimum (deprecated field, else native providerOverride value, else 1);
 * - multinode: a scaling group `<name>` (replicas, effective minimum) with cliques
 *   `<name>-ldr` (1) and `<name>-wkr` (nodeCount-1), each clique's minAvailable its own
 *   replica count so a partial gang never counts as available;
 * - `experimental.grove.forceScalingGroup`: a scaling group `<name>` with one clique `<name>` (1);
 * - `rollingUpdate` and `topologyConstraint` from the component's providerOverride on the
 *   owning clique or scaling group; the root override only on `spec.template.topologyConstraint`;
 * - `spec.updateStrategy.type` from the strategy annotation, absent without one;
 * - a component at 0 replicas, or held at 0 while a `WaitForCheckpoint` checkpoint is not ready
 *   (clique or scaling group), seeds its effective minimum, and the scale subresource holds the
 *   live child at 0 (grove-scaling.ts `templateReplicas`, `desiredChildReplicas`);
 * - each clique's pod spec from pod-template.ts (`buildPodSpec`; multinode cliques with their
 *   leader/worker role), the scheduler name and KAI queue label of the installation, and the
 *   Volcano queue annotation on the PodCliqueSet.
 */
function renderPodCliqueSet(dgd: Dgd, namespace: string, components: readonly Component[], workerHash: string | undefined, config: RenderConfig): RenderedObject {
  const cliques: PodCliqueTemplateSpec[] = [];
  const scalingGroups: PodCliqueScalingGroupConfig[] = [];
  const resourceClaimTemplates: Record<string, unknown>[] = [];
  let explicitStartup = false;

  const settings = podSettings(config);
  for (const component of components) {
    const ctx: CliqueContext = { dgd, namespace, component, workerHash: isWorkerClass(component) ? workerHash : undefined, settings };
    // A component at 0 (or checkpoint-gated) seeds its minimum; the scale subresource takes it to 0 (grove-scaling.ts).
    const replicas = templateReplicas(component, isCheckpointGated(dgd, component));
    const minimum = effectiveMinAvailable(component);
    const owned = ownedOverrides(component);
    const base = componentBaseName(component);
    if (isInterPodGms(component) && !isMultinode(component)) {
      const layout = interPodGmsLayout(component, (name, n, min) => clique(ctx, name, n, min, component.podTemplate), { replicas, minAvailable: minimum, ...owned }, isCheckpointGated(dgd, component));
      cliques.push(...layout.cliques);
      scalingGroups.push(layout.scalingGroup);
      resourceClaimTemplates.push(...layout.resourceClaimTemplates);
      explicitStartup = true;
      continue;
    }
    if (!usesScalingGroup(component)) {
      cliques.push(clique(ctx, base, replicas, minimum, component.podTemplate, owned));
      continue;
    }
    if (isMultinode(component)) {
      const nodeCount = component.multinode?.nodeCount ?? 2;
      const leaderRole = component.roles?.find((r) => r.name === 'leader');
      const workerRole = component.roles?.find((r) => r.name === 'worker');
      const leaderName = leaderCliqueName(component);
      const workerName = workerCliqueName(component);
      // TRT-LLM's MPI leader must start after its workers (upstream-notes/dgd.md §4.1 StartsAfter).
      const leaderStartsAfter = dgd.spec.backendFramework === 'trtllm' ? [workerName] : undefined;
      if (leaderStartsAfter !== undefined) explicitStartup = true;
      const roleTopology = (role: typeof leaderRole) => {
        const topology = overrideValue(role?.providerOverride?.value, 'topologyConstraint') as PodCliqueTemplateSpec['topologyConstraint'];
        return topology === undefined ? {} : { topologyConstraint: topology };
      };
      const leader = clique({ ...ctx, role: 'leader' }, leaderName, 1, 1, leaderRole?.podTemplate ?? component.podTemplate, roleTopology(leaderRole));
      if (leaderStartsAfter !== undefined) leader.spec.startsAfter = leaderStartsAfter;
      cliques.push(leader, clique({ ...ctx, role: 'worker' }, workerName, nodeCount - 1, nodeCount - 1, workerRole?.podTemplate ?? component.podTemplate, roleTopology(workerRole)));
      scalingGroups.push({ name: base, cliqueNames: [leaderName, workerName], replicas, minAvailable: minimum, ...owned });
    } else {
      cliques.push(clique(ctx, base, 1, 1, component.podTemplate));
      scalingGroups.push({ name: base, cliqueNames: [base], replicas, minAvailable: minimum, ...owned });
    }
  }

  const template: Record<string, unknown> = {
    cliqueStartupType: explicitStartup ? 'CliqueStartupTypeExplicit' : 'CliqueStartupTypeAnyOrder',
    headlessServiceConfig: { publishNotReadyAddresses: true },
    terminationDelay: config.terminationDelay,
    cliques,
  };
  if (scalingGroups.length > 0) template['podCliqueScalingGroups'] = scalingGroups;
  if (resourceClaimTemplates.length > 0) template['resourceClaimTemplates'] = resourceClaimTemplates;
  if (dgd.spec.priorityClassName !== undefined) template['priorityClassName'] = dgd.spec.priorityClassName;
  const rootTopology = overrideValue(dgd.spec.providerOverride?.value, 'spec', 'template', 'topologyConstraint') ?? typedGraphTopology(dgd);
  if (rootTopology !== undefined) template['topologyConstraint'] = rootTopology;

  const spec: Record<string, unknown> = { replicas: 1, template };
  const strategy = resolveUpdateStrategy(dgd);
  if (strategy.ok && strategy.strategy !== undefined) spec['updateStrategy'] = { type: strategy.strategy };

  const name = podCliqueSetName(dgd.metadata.name ?? '', components);
  const labels = { ...(dgd.spec.labels ?? {}), [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgd.metadata.name ?? '') };
  const annotations = { ...(dgd.spec.annotations ?? {}) };
  const volcanoQueue = dgd.metadata.annotations?.[ANNOTATION_VOLCANO_QUEUE]?.trim() ?? '';
  // Grove's Volcano backend reads the queue from the PodCliqueSet (upstream `injectVolcanoQueueAnnotation`).
  if (settings.scheduler === 'volcano' && volcanoQueue !== '') annotations[GROVE_ANNOTATION_VOLCANO_QUEUE] = volcanoQueue;
  return { apiVersion: GROVE_API_VERSION, kind: 'PodCliqueSet', metadata: objectMeta(dgd, name, namespace, { labels, annotations }), spec };
}

/**
 * The component Service (upstream-notes/dgd.md §4.6): `<dgd>-<component>` lower-cased,
 * selecting the component's pods by type, Dynamo namespace and component name; port
 * `http` 8000 for a frontend, `grpc` 9002 (appProtocol http2) for an EPP, `system` 9090 otherwise.
 */
function renderComponentService(dgd: Dgd, namespace: string, component: Component): RenderedObject {
  const selector: Record<string, string> = {
    [LABEL_COMPONENT]: labelValue(component.name),
    [LABEL_DYNAMO_NAMESPACE]: labelValue(dynamoNamespace(dgd, namespace, component)),
  };
  if (component.type !== undefined) selector[LABEL_COMPONENT_TYPE] = component.type;
  const port =
    component.type === 'frontend'
      ? { name: 'http', port: FRONTEND_HTTP_PORT, targetPort: 'http', protocol: 'TCP' }
      : component.type === 'epp'
        ? { name: 'grpc', port: EPP_GRPC_PORT, targetPort: EPP_GRPC_PORT, protocol: 'TCP', appProtocol: 'http2' }
        : { name: 'system', port: WORKER_SYSTEM_PORT, targetPort: WORKER_SYSTEM_PORT, protocol: 'TCP' };
  const labels = { [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgd.metadata.name ?? ''), [LABEL_COMPONENT]: labelValue(component.name) };
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: objectMeta(dgd, componentServiceName(dgd, component), namespace, { labels }),
    spec: { selector: Object.fromEntries(Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : 1))), ports: [port] },
  };
}
