/**
 * Reconciles DynamoGraphDeploymentScalingAdapters (DGDSA): adapter replicas -> DGD component.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * events for kind `DynamoGraphDeploymentScalingAdapter` (group `nvidia.com`; an HPA's `/scale`
 * write is an update of the adapter), and, through {@link withScalingAdapters} around the DGD
 * route, every DGD event.
 * Reads: the adapter and the DGD it names (`spec.dgdRef.name`, same namespace); for a DGD event,
 * the adapters in the DGD's namespace.
 * Decides: `decideScalingAdapter` and `decideScalingAdapters` (shared/domain/dgd/dgdsa.ts, pure).
 * Writes: the DGD component's `replicas` (PUT with the read resourceVersion as precondition, as
 * upstream's `r.Update(dgd)`; a 409 is transient and retried), the adapter status through the
 * status subresource (server-side apply, forced: the status is ours), adapters created by
 * server-side apply (only when absent, so `spec.replicas` is written once) and deleted when
 * this DGD controls them and the component opts out; Events. Field manager `dynamo-reconcile`.
 * Answers: Done; Permanent when the adapter names a DGD or component that does not exist (an
 * Event says so; the next resync or DGD event retries); Transient on API errors that may pass.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import {
  DGD_KIND,
  DGD_V1BETA1,
  DGDSA_KIND,
  DGDSA_V1BETA1,
  DgdsaSchema,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  parseDgd,
  type Dgd,
  type Dgdsa,
} from '../../shared/api/index.js';
import { REASON_UPDATE_FAILED, controllerRefOf, decideScalingAdapter, decideScalingAdapters, type AdapterEvent, type ObservedAdapter, type ScalingAdapterDesired } from '../../shared/domain/index.js';
import { passKube, type KubeObject } from '../../shared/kube/index.js';
import { DONE, PermanentError, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import type { ReconcileDeps } from './dgd.js';

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-reconcile';

/** The binding: DGDSA events (either served version; they name the same object) and the DGDSA resync. */
export const route: Route<ReconcileDeps> = { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, handle: handleAdapterEvent, listKeys };

/**
 * An adapter's event: the DGDs of its namespace are no longer known quiet here (./quiet.ts: the
 * records are dropped), so their next event runs the adapters' side in full too; then `handle`.
 */
async function handleAdapterEvent(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  deps.quietPasses?.invalidateNamespace(event.key.namespace);
  return handle(event, deps);
}

export interface AdapterObserved {
  readonly adapter: Dgdsa;
  readonly raw: KubeObject;
  readonly dgdRaw: KubeObject | undefined;
  readonly dgd: Dgd | undefined;
}

/** Loads the adapter and its DGD; undefined when the adapter is gone or under deletion. */
export async function load(deps: ReconcileDeps, key: ObjectKey): Promise<AdapterObserved | { readonly invalid: string } | undefined> {
  const raw = await deps.kube.get({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace: key.namespace, name: key.name });
  if (raw === undefined || raw.metadata['deletionTimestamp'] !== undefined) return undefined;
  const parsed = DgdsaSchema.safeParse(raw);
  if (!parsed.success) return { invalid: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  const dgdRaw = await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: key.namespace, name: parsed.data.spec.dgdRef.name });
  const dgdParsed = dgdRaw === undefined || dgdRaw.metadata['deletionTimestamp'] !== undefined ? undefined : parseDgd(dgdRaw);
  return { adapter: parsed.data, raw, dgdRaw, dgd: dgdParsed?.ok === true ? dgdParsed.dgd : undefined };
}

async function emit(deps: ReconcileDeps, namespace: string, event: AdapterEvent, uid: string | undefined): Promise<void> {
  const apiVersion = event.regarding.kind === DGD_KIND ? DGD_V1BETA1 : DGDSA_V1BETA1;
  await deps.kube.createEvent({
    regarding: { apiVersion, kind: event.regarding.kind, namespace, name: event.regarding.name, ...(uid === undefined ? {} : { uid }) },
    type: event.type,
    reason: event.reason,
    note: event.note,
    action: event.regarding.kind === DGD_KIND ? 'Reconcile' : 'Scale',
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: deps.instance,
  });
}

/**
 * Performs one adapter decision: the DGD component's replicas (PUT, resourceVersion precondition),
 * then the adapter status, then Events. Out: Done, or Permanent when the DGD update is refused
 * for good (reported as an `UpdateFailed` Warning on the adapter, upstream's Event).
 */
export async function write(deps: ReconcileDeps, observed: AdapterObserved, desired: ScalingAdapterDesired): Promise<Outcome> {
  const name = observed.raw.metadata.name;
  const namespace = observed.raw.metadata.namespace ?? '';
  const uid = observed.raw.metadata.uid;
  if (desired.problem !== undefined) {
    await emit(deps, namespace, { type: 'Warning', reason: desired.problem.reason, note: desired.problem.message, regarding: { kind: DGDSA_KIND, name } }, uid);
    deps.log.warn({ reason: desired.problem.reason }, 'Skipped DynamoGraphDeploymentScalingAdapter');
    return { kind: 'Permanent', ...desired.problem };
  }
  const scale = desired.componentReplicas;
  if (scale !== undefined && observed.dgdRaw !== undefined) {
    // The DGD as the decision read it; the resourceVersion precondition makes the PUT fail
    // (409, retried) if it changed since.
    const dgd = structuredClone(observed.dgdRaw) as KubeObject & { spec: { components: Record<string, unknown>[] } };
    const component = dgd.spec.components.find((c) => c['name'] === scale.componentName);
    if (component !== undefined) component['replicas'] = scale.to;
    try {
      await deps.kube.replace(dgd);
    } catch (error) {
      if (!(error instanceof PermanentError)) throw error;
      // Refused for good (admission, validation, RBAC): say so on the adapter and do not make
      // the broker retry; the next adapter or DGD change, or the resync, tries again.
      const message = `Failed to update DGD ${observed.dgdRaw.metadata.name}: ${error.message}`;
      await emit(deps, namespace, { type: 'Warning', reason: REASON_UPDATE_FAILED, note: message, regarding: { kind: DGDSA_KIND, name } }, uid);
      deps.log.warn({ err: error }, 'Failed to scale DynamoGraphDeployment component');
      return { kind: 'Permanent', reason: REASON_UPDATE_FAILED, message };
    }
    deps.log.info({ component: scale.componentName, from: scale.from, to: scale.to }, 'Scaled DynamoGraphDeployment component');
  }
  if (desired.status !== undefined && !isDeepStrictEqual(desired.status, observed.adapter.status ?? {})) {
    await deps.kube.applyStatus({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, metadata: { name, namespace }, status: desired.status }, { force: true });
  }
  for (const intent of desired.events) await emit(deps, namespace, intent, uid);
  return DONE;
}

/** load -> decideScalingAdapter (pure) -> write. Never branches on the event type. */
export async function handle(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  const observed = await load(deps, event.key);
  if (observed === undefined) return DONE;
  if ('invalid' in observed) return { kind: 'Permanent', reason: 'InvalidSpec', message: observed.invalid };
  return write(deps, observed, decideScalingAdapter(observed.adapter, observed.dgd, deps.now()));
}

/** Every adapter in the cluster, for the periodic resync. */
export async function listKeys(deps: ReconcileDeps): Promise<readonly ObjectKey[]> {
  const adapters = await deps.kube.list(DGDSA_V1BETA1, DGDSA_KIND);
  return adapters.map((a) => ({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace: a.metadata.namespace ?? '', name: a.metadata.name }));
}

function controllerUidOf(object: KubeObject): string | undefined {
  return controllerRefOf(object)?.uid;
}

/**
 * The DGD side: creates and deletes the DGD's adapters (decideScalingAdapters), then lets every
 * adapter that names this DGD propagate its replicas (so an adapter created before its DGD, or a
 * DGD edited by hand, converges on the adapter's intent). Returns the first non-Done outcome.
 */
export async function reconcileDgdAdapters(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  const raw = await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: event.key.namespace, name: event.key.name });
  if (raw === undefined || raw.metadata['deletionTimestamp'] !== undefined) return DONE; // Owned adapters go with it (owner references).
  const parsed = parseDgd(raw);
  if (!parsed.ok) return DONE; // The DGD route reports an invalid spec on the DGD's status.
  const adapters = (await deps.kube.list(DGDSA_V1BETA1, DGDSA_KIND, event.key.namespace)).flatMap((object) => {
    const adapter = DgdsaSchema.safeParse(object);
    return adapter.success ? [{ object, adapter: adapter.data }] : [];
  });
  const observed: ObservedAdapter[] = adapters
    .filter(({ object, adapter }) => adapter.spec.dgdRef.name === event.key.name || object.metadata.labels?.[LABEL_GRAPH_DEPLOYMENT_NAME] === event.key.name)
    .map(({ object, adapter }) => ({ name: object.metadata.name, controllerUid: controllerUidOf(object), componentName: adapter.spec.dgdRef.serviceName }));
  const desired = decideScalingAdapters(parsed.dgd, observed);
  for (const adapter of desired.create) {
    // Server-side apply creates it; it is applied only while absent, so `spec.replicas` is
    // written once and the autoscaler owns it afterwards.
    await deps.kube.apply({ apiVersion: adapter.apiVersion, kind: adapter.kind, metadata: { ...adapter.metadata, name: adapter.metadata.name ?? '' }, spec: adapter.spec });
    deps.log.info({ adapter: adapter.metadata.name }, 'Created DynamoGraphDeploymentScalingAdapter');
  }
  for (const name of desired.delete) {
    await deps.kube.delete({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace: event.key.namespace, name });
    deps.log.info({ adapter: name }, 'Deleted DynamoGraphDeploymentScalingAdapter');
  }
  for (const intent of desired.events) await emit(deps, event.key.namespace, intent, raw.metadata.uid);
  const targets = [...adapters.filter(({ adapter }) => adapter.spec.dgdRef.name === event.key.name).map(({ object }) => object.metadata.name), ...desired.create.map((a) => a.metadata.name ?? '')]
    .filter((name) => !desired.delete.includes(name))
    .sort();
  for (const name of new Set(targets)) {
    const outcome = await handle({ ...event, key: { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace: event.key.namespace, name }, object: undefined }, deps);
    if (outcome.kind === 'Transient') return outcome;
  }
  return DONE;
}

/**
 * Wraps the DGD route so each DGD event also reconciles the DGD's adapters, after the DGD's own
 * reconcile. The DGD's outcome wins unless it is Done.
 */
export function withScalingAdapters(dgdRoute: Route<ReconcileDeps>): Route<ReconcileDeps> {
  return {
    ...dgdRoute,
    handle: async (event, deps) => {
      // One pass: the adapters' reads of the DGD are the DGD pass's, unless that pass wrote it.
      const pass = { ...deps, kube: passKube(deps.kube) };
      const outcome = await dgdRoute.handle(event, pass);
      const adapters = await reconcileDgdAdapters(event, pass);
      return outcome.kind === 'Done' ? adapters : outcome;
    },
  };
}
