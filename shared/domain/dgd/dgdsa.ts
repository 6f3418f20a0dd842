/**
 * DynamoGraphDeploymentScalingAdapter (DGDSA) decisions: which adapters a DGD owns, and how an
 * adapter's replicas reach its DGD component. Pure: plain objects in, plain objects out.
 *
 * Flow (issue 8 part 4; modelexpress-checkpoint-loader, the DGDSA + HPA demo: "HPA can then drive
 * `dgdsa.spec.replicas`, and the DGDSA controller propagates the value to the DGD's
 * `spec.services.<name>.replicas`"): an autoscaler writes the adapter's `/scale`; the adapter's
 * `spec.replicas` is the source of truth and is copied into the DGD component's `replicas`; the
 * DGD reconcile renders and scales Grove from the DGD. Nothing here ever writes an adapter's
 * `spec.replicas` after its creation, so no reconcile overwrites the autoscaler's intent.
 *
 * Source: upstream internal/controller/dgd_scaling_adapters_reconciler.go (one adapter per
 * component with `scalingAdapter`, named `<dgd>-<lower(component)>`, labelled, controlled by the
 * DGD, replicas seeded only at creation, deleted when the component opts out or is removed;
 * Events AdapterCreated/AdapterDeleted) and
 * internal/controller/dynamographdeploymentscalingadapter_controller.go (DGD replicas default 1,
 * updated when they differ from the adapter's, Event Scaled, `status.replicas` =
 * `spec.replicas`, `status.selector` from the DGD and component labels, `lastScaleTime`).
 * @module
 */
import {
  DGD_KIND,
  DGD_V1BETA1,
  DGDSA_KIND,
  DGDSA_V1BETA1,
  LABEL_DYNAMO_COMPONENT,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  type Dgd,
  type Dgdsa,
  type DgdsaStatus,
} from '../../api/index.js';

/** Reasons of the Events the adapter decisions emit (upstream, word for word). */
export const REASON_ADAPTER_CREATED = 'AdapterCreated';
export const REASON_ADAPTER_DELETED = 'AdapterDeleted';
export const REASON_SCALED = 'Scaled';
/** The DGD refused the adapter's replicas (upstream Event `UpdateFailed`, "Failed to update DGD <name>: <error>"). */
export const REASON_UPDATE_FAILED = 'UpdateFailed';
/** Why an adapter cannot drive its component now (our reasons; upstream only logs these). */
export const REASON_DGD_NOT_FOUND = 'DGDNotFound';
export const REASON_COMPONENT_NOT_FOUND = 'ComponentNotFound';

/** The replicas a component runs when `replicas` is omitted (upstream `ptr.Deref(component.Replicas, 1)`). */
export const DEFAULT_COMPONENT_REPLICAS = 1;

export interface AdapterEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  /** The object the Event is about (the DGD for create/delete, the adapter for Scaled). */
  readonly regarding: { readonly kind: string; readonly name: string };
}

/** An adapter as the DGD side observes it: name, controller owner uid, target component. */
export interface ObservedAdapter {
  readonly name: string;
  readonly controllerUid: string | undefined;
  readonly componentName: string;
}

/** What the DGD side wants: adapters to create (full objects) and adapters to delete (names). */
export interface ScalingAdaptersDesired {
  readonly create: readonly Dgdsa[];
  readonly delete: readonly string[];
  readonly events: readonly AdapterEvent[];
}

/**
 * The adapter name of a DGD component: `<dgd>-<lower(component)>`. DGD names are DNS-1123
 * subdomains and component names `^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$` of at most 63
 * characters, so the lower-cased join is a valid object name up to the 253-character limit.
 * Source: upstream `generateAdapterName`. Pure.
 */
export function scalingAdapterName(dgdName: string, componentName: string): string {
  return `${dgdName}-${componentName.toLowerCase()}`;
}

/**
 * The label selector of the pods an adapter scales, as a string (keys sorted, as
 * `labels.SelectorFromSet(...).String()` prints them):
 * `nvidia.com/dynamo-component=<component>,nvidia.com/dynamo-graph-deployment-name=<dgd>`.
 * Source: upstream `buildPodSelector`. Pure.
 */
export function scalingAdapterSelector(dgdName: string, componentName: string): string {
  return [`${LABEL_DYNAMO_COMPONENT}=${componentName}`, `${LABEL_GRAPH_DEPLOYMENT_NAME}=${dgdName}`].sort().join(',');
}

/**
 * Decides the DGD's adapters.
 * In: the DGD (metadata.name/namespace/uid, spec.components[].name/scalingAdapter/replicas) and
 * the adapters observed in its namespace. Out: adapters to create for components that enable
 * `scalingAdapter` and have none (replicas seeded from the component, default 1); adapters this
 * DGD controls to delete when their component opts out or is gone; an Event per change.
 * An adapter with the generated name that this DGD does not control is left alone (never adopted).
 * Source: upstream dgd_scaling_adapters_reconciler.go. Pure.
 */
export function decideScalingAdapters(dgd: Dgd, adapters: readonly ObservedAdapter[]): ScalingAdaptersDesired {
  const name = dgd.metadata.name ?? '';
  const namespace = dgd.metadata.namespace ?? '';
  const uid = dgd.metadata.uid;
  const byName = new Map(adapters.map((a) => [a.name, a]));
  const create: Dgdsa[] = [];
  const events: AdapterEvent[] = [];
  for (const component of dgd.spec.components) {
    if (component.scalingAdapter === undefined) continue;
    const adapterName = scalingAdapterName(name, component.name);
    if (byName.has(adapterName)) continue;
    create.push({
      apiVersion: DGDSA_V1BETA1,
      kind: DGDSA_KIND,
      metadata: {
        name: adapterName,
        namespace,
        labels: { [LABEL_GRAPH_DEPLOYMENT_NAME]: name, [LABEL_DYNAMO_COMPONENT]: component.name },
        ...(uid === undefined ? {} : { ownerReferences: [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name, uid, controller: true, blockOwnerDeletion: true }] }),
      },
      spec: { dgdRef: { name, serviceName: component.name }, replicas: component.replicas ?? DEFAULT_COMPONENT_REPLICAS },
    });
    events.push({ type: 'Normal', reason: REASON_ADAPTER_CREATED, note: `Created scaling adapter ${adapterName} for component ${component.name}`, regarding: { kind: DGD_KIND, name } });
  }
  const withAdapter = new Set(dgd.spec.components.filter((c) => c.scalingAdapter !== undefined).map((c) => c.name));
  const remove: string[] = [];
  for (const adapter of [...adapters].sort((a, b) => a.name.localeCompare(b.name))) {
    if (uid === undefined || adapter.controllerUid !== uid || withAdapter.has(adapter.componentName)) continue;
    remove.push(adapter.name);
    events.push({ type: 'Normal', reason: REASON_ADAPTER_DELETED, note: `Deleted scaling adapter ${adapter.name} for component ${adapter.componentName}`, regarding: { kind: DGD_KIND, name } });
  }
  return { create: create.sort((a, b) => a.metadata.name?.localeCompare(b.metadata.name ?? '') ?? 0), delete: remove, events };
}

/** What one adapter wants. */
export interface ScalingAdapterDesired {
  /** The DGD component replicas to write (the adapter is the source of truth), or none. */
  readonly componentReplicas?: { readonly index: number; readonly componentName: string; readonly from: number; readonly to: number };
  /** The adapter's status, or undefined when it cannot be computed (see `problem`). */
  readonly status: DgdsaStatus | undefined;
  readonly events: readonly AdapterEvent[];
  /** Why the adapter cannot drive its component now (the DGD or the component is missing). */
  readonly problem?: { readonly reason: string; readonly message: string };
}

/**
 * Decides how an adapter's replicas reach its DGD component.
 * In: the adapter (spec.dgdRef, spec.replicas, status.lastScaleTime), its DGD or undefined when
 * absent, the time now. Out: the component's new replicas when they differ from the adapter's
 * (`replicas` omitted counts as 1), an Event `Scaled` ("Scaled component <c> from <n> to <m>
 * replicas"), and the status: `replicas` = `spec.replicas`, `selector` (see
 * {@link scalingAdapterSelector}), `lastScaleTime` = now when scaled, else kept. An adapter whose
 * DGD or component is missing gets a problem (reason DGDNotFound / ComponentNotFound), no
 * write and no status change. Adapters a user created for a component without `scalingAdapter`
 * drive it too, as the ModelExpress HPA demo does. Source: upstream
 * dynamographdeploymentscalingadapter_controller.go; modelexpress-checkpoint-loader. Pure.
 */
export function decideScalingAdapter(adapter: Dgdsa, dgd: Dgd | undefined, now: Date): ScalingAdapterDesired {
  const adapterName = adapter.metadata.name ?? '';
  const { name: dgdName, serviceName } = adapter.spec.dgdRef;
  if (dgd === undefined) {
    return { status: undefined, events: [], problem: { reason: REASON_DGD_NOT_FOUND, message: `DynamoGraphDeployment ${dgdName} referenced by scaling adapter ${adapterName} not found` } };
  }
  const index = dgd.spec.components.findIndex((c) => c.name === serviceName);
  const component = dgd.spec.components[index];
  if (component === undefined) {
    const available = dgd.spec.components.map((c) => c.name).join(', ');
    return { status: undefined, events: [], problem: { reason: REASON_COMPONENT_NOT_FOUND, message: `component ${serviceName} referenced by scaling adapter ${adapterName} not found in DynamoGraphDeployment ${dgdName} (components: ${available})` } };
  }
  const current = component.replicas ?? DEFAULT_COMPONENT_REPLICAS;
  const desired = adapter.spec.replicas;
  const isScaling = current !== desired;
  const lastScaleTime = isScaling ? now.toISOString().replace(/\.\d{3}Z$/, 'Z') : adapter.status?.lastScaleTime;
  const status: DgdsaStatus = { replicas: desired, selector: scalingAdapterSelector(dgdName, serviceName), ...(lastScaleTime === undefined ? {} : { lastScaleTime }) };
  if (!isScaling) return { status, events: [] };
  return {
    componentReplicas: { index, componentName: serviceName, from: current, to: desired },
    status,
    events: [{ type: 'Normal', reason: REASON_SCALED, note: `Scaled component ${serviceName} from ${current} to ${desired} replicas`, regarding: { kind: DGDSA_KIND, name: adapterName } }],
  };
}
