/**
 * Lossless DynamoGraphDeployment conversion between the served versions, as the conversion
 * webhook answers it: v1beta1 is the hub (storage), v1alpha1 a spoke.
 *
 * Round trip, as upstream's hub/spoke conversion promises (upstream
 * api/v1alpha1/dynamographdeployment_conversion.go, api/CONVERSION.md): what one version cannot
 * express travels in the reserved annotation `nvidia.com/dgd-spec` of the converted object and is
 * consumed (removed) by the conversion back. On a v1beta1 object it holds the v1alpha1 services
 * whose conversion was lossy, whole, and the v1alpha1-only spec fields (`pvcs`, unknown fields);
 * on a v1alpha1 object it holds the v1beta1 components whose reverse conversion was lossy, whole,
 * and the component order when it is not sorted by name (a v1alpha1 map has no order).
 *
 * A saved form is used only while it still describes the live object: fields both versions
 * spell the same (`replicas`, `multinode`, `providerOverride`, ...) always come from the live
 * object, so an edit made in either version shows in the other; the rest of a component is
 * restored from the saved form only when converting the saved form gives exactly the live
 * object's rest, otherwise it is converted field by field. Upstream saves sparse per-field
 * payloads; we save whole components, which is simpler and lossless, at the cost of a larger
 * annotation for lossy components only (annotations are limited to 256 KiB per object).
 * Status: `services` <-> `components` and `rollingUpdate.updatedServices` <-> `updatedComponents`
 * (a renaming, hence lossless). Pure.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { ANNOTATION_DGD_SPEC, DGD_CONVERSION_ANNOTATION_PREFIX, DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, MAIN_CONTAINER_NAME } from './constants.js';
import { ServiceV1Alpha1Schema, convertService } from './dgd-v1alpha1.js';

type Obj = Record<string, unknown>;

/** The outcome of converting one object: the converted object, or why it cannot be converted. */
export type DgdConversion = { readonly ok: true; readonly object: Obj } | { readonly ok: false; readonly message: string };

/** Component fields spelled the same in both versions: always taken from the live object. */
export const VERBATIM_COMPONENT_FIELDS = ['replicas', 'minAvailable', 'multinode', 'globalDynamoNamespace', 'modelRef', 'eppConfig', 'frontendSidecar', 'topologyConstraint', 'providerOverride', 'lpx', 'roles'] as const;
/** Spec fields spelled the same in both versions. */
export const VERBATIM_SPEC_FIELDS = ['backendFramework', 'labels', 'annotations', 'priorityClassName', 'restart', 'topologyConstraint', 'providerOverride', 'experimental'] as const;
/**
 * v1beta1 component fields converted field by field ({@link reverseComponent}), and those with no
 * v1alpha1 home that travel only in the saved payload. With {@link VERBATIM_COMPONENT_FIELDS} and
 * `name` they cover the whole v1beta1 component (a test holds every schema field to that).
 */
export const MAPPED_COMPONENT_FIELDS = ['type', 'podTemplate', 'sharedMemorySize', 'experimental', 'scalingAdapter'] as const;
export const HUB_ONLY_COMPONENT_FIELDS = ['runtimeVersionOverride', 'compilationCache'] as const;

/** v1alpha1 service fields with no v1beta1 home (dropped by the forward conversion). */
const ALPHA_ONLY_SERVICE_FIELDS = ['dynamoNamespace', 'autoscaling', 'ingress'] as const;
/** v1beta1 component types that v1alpha1 spells as `componentType: worker` + `subComponentType`. */
const SUB_COMPONENT_TYPES = new Set(['prefill', 'decode']);

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function omit(object: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const [key, value] of Object.entries(object)) if (!keys.includes(key)) out[key] = value;
  return out;
}

function pick(object: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const key of keys) if (object[key] !== undefined) out[key] = structuredClone(object[key]);
  return out;
}

/** The parts of a component that are not spelled the same in both versions. */
function componentRest(component: Obj): Obj {
  return omit(component, [...VERBATIM_COMPONENT_FIELDS, 'name']);
}

function serviceRest(service: Obj): Obj {
  return omit(service, VERBATIM_COMPONENT_FIELDS);
}

/** Reads and removes every reserved `nvidia.com/dgd-*` annotation; returns the saved payload if it parses. */
function takeSavedPayload(metadata: Obj): Obj | undefined {
  const annotations = isObj(metadata['annotations']) ? { ...(metadata['annotations'] as Record<string, string>) } : undefined;
  if (annotations === undefined) return undefined;
  const raw = annotations[ANNOTATION_DGD_SPEC];
  for (const key of Object.keys(annotations)) if (key.startsWith(DGD_CONVERSION_ANNOTATION_PREFIX)) delete annotations[key];
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  else delete metadata['annotations'];
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObj(parsed) ? parsed : undefined;
  } catch {
    // Best effort, as upstream: a hand-edited or foreign payload is consumed and ignored.
    return undefined;
  }
}

function putSavedPayload(metadata: Obj, payload: Obj): void {
  if (Object.keys(payload).length === 0) return;
  metadata['annotations'] = { ...(isObj(metadata['annotations']) ? metadata['annotations'] : {}), [ANNOTATION_DGD_SPEC]: JSON.stringify(payload) };
}

/**
 * The v1alpha1 `spec.pvcs` a converted DGD still carries: the `spec.pvcs` list of the saved
 * payload in `metadata.annotations["nvidia.com/dgd-spec"]` (upstream
 * `GetDGDPreservedAlphaPVCs`). In: the DGD's metadata. Out: the raw entries, in order, or an
 * empty list when there is no payload, it does not parse or it has no `pvcs`. Pure.
 */
export function preservedAlphaPvcs(metadata: { readonly annotations?: Readonly<Record<string, string>> | undefined }): unknown[] {
  const raw = metadata.annotations?.[ANNOTATION_DGD_SPEC];
  if (raw === undefined) return [];
  try {
    const payload: unknown = JSON.parse(raw);
    const spec = isObj(payload) && isObj(payload['spec']) ? payload['spec'] : undefined;
    return spec !== undefined && Array.isArray(spec['pvcs']) ? structuredClone(spec['pvcs'] as unknown[]) : [];
  } catch {
    return [];
  }
}

/** v1alpha1 service -> v1beta1 component, with the spec's PVC names (their mounts become volumes). */
function forwardService(name: string, service: Obj, pvcNames: ReadonlySet<string>): Obj | undefined {
  const parsed = ServiceV1Alpha1Schema.safeParse(service);
  return parsed.success ? convertService(name, parsed.data, pvcNames, []) : undefined;
}

function sameRest(forwarded: Obj | undefined, component: Obj): boolean {
  return forwarded !== undefined && isDeepStrictEqual(componentRest(forwarded), componentRest(component));
}

/**
 * v1beta1 component -> v1alpha1 service, field by field: `type` -> `componentType`
 * (prefill/decode as `worker` + `subComponentType`), `podTemplate` -> `extraPodSpec` with the
 * `main` container as `mainContainer` and the template metadata as `extraPodMetadata`,
 * `sharedMemorySize` -> `sharedMemory`, `experimental.{gpuMemoryService,failover,checkpoint}` ->
 * the service, `scalingAdapter` -> `{enabled: true}`. Pure.
 */
export function reverseComponent(component: Obj): Obj {
  const service: Obj = pick(component, VERBATIM_COMPONENT_FIELDS);
  const type = component['type'];
  if (typeof type === 'string') {
    if (SUB_COMPONENT_TYPES.has(type)) {
      service['componentType'] = 'worker';
      service['subComponentType'] = type;
    } else service['componentType'] = type;
  }
  if (component['scalingAdapter'] !== undefined) service['scalingAdapter'] = { enabled: true };
  const shm = component['sharedMemorySize'];
  if (shm === '0' || shm === 0) service['sharedMemory'] = { disabled: true };
  else if (shm !== undefined) service['sharedMemory'] = { size: shm };
  const experimental = isObj(component['experimental']) ? component['experimental'] : {};
  for (const field of ['gpuMemoryService', 'failover', 'checkpoint']) {
    if (experimental[field] !== undefined) service[field] = structuredClone(experimental[field]);
  }
  const template = isObj(component['podTemplate']) ? component['podTemplate'] : undefined;
  if (template !== undefined) {
    const podSpec = isObj(template['spec']) ? structuredClone(template['spec']) : {};
    const containers = Array.isArray(podSpec['containers']) ? (podSpec['containers'] as unknown[]) : [];
    const main = containers.find((c) => isObj(c) && c['name'] === MAIN_CONTAINER_NAME);
    const others = containers.filter((c) => c !== main);
    const extraPodSpec: Obj = omit(podSpec, ['containers']);
    if (others.length > 0) extraPodSpec['containers'] = others;
    if (isObj(main)) extraPodSpec['mainContainer'] = omit(main, ['name']);
    service['extraPodSpec'] = extraPodSpec;
    const metadata = isObj(template['metadata']) ? template['metadata'] : {};
    const podMetadata = pick(metadata, ['labels', 'annotations']);
    if (Object.keys(podMetadata).length > 0) service['extraPodMetadata'] = podMetadata;
  }
  return service;
}

function statusForward(status: Obj): Obj {
  const out = structuredClone(status);
  if (out['services'] !== undefined) {
    out['components'] = out['services'];
    delete out['services'];
  }
  if (isObj(out['rollingUpdate']) && out['rollingUpdate']['updatedServices'] !== undefined) {
    const rolling: Obj = { ...out['rollingUpdate'], updatedComponents: out['rollingUpdate']['updatedServices'] };
    delete rolling['updatedServices'];
    out['rollingUpdate'] = rolling;
  }
  return out;
}

function statusReverse(status: Obj): Obj {
  const out = structuredClone(status);
  if (out['components'] !== undefined) {
    out['services'] = out['components'];
    delete out['components'];
  }
  if (isObj(out['rollingUpdate']) && out['rollingUpdate']['updatedComponents'] !== undefined) {
    const rolling: Obj = { ...out['rollingUpdate'], updatedServices: out['rollingUpdate']['updatedComponents'] };
    delete rolling['updatedComponents'];
    out['rollingUpdate'] = rolling;
  }
  return out;
}

function pvcNamesOf(alphaSpec: Obj): Set<string> {
  const pvcs = Array.isArray(alphaSpec['pvcs']) ? alphaSpec['pvcs'] : [];
  return new Set(pvcs.flatMap((p) => (isObj(p) && typeof p['name'] === 'string' ? [p['name']] : [])));
}

/**
 * Converts a v1alpha1 DGD to v1beta1 (spoke -> hub).
 * In: a `nvidia.com/v1alpha1` DGD, possibly carrying a hub payload in `nvidia.com/dgd-spec`.
 * Out: the v1beta1 object; its `nvidia.com/dgd-spec` holds the services the hub cannot express.
 * Failures: `spec.services` missing or not a map. Source: see the module docs. Pure.
 */
export function convertDgdToHub(input: Obj): DgdConversion {
  const spec = isObj(input['spec']) ? input['spec'] : undefined;
  const services = spec !== undefined && isObj(spec['services']) ? spec['services'] : undefined;
  if (spec === undefined || services === undefined) return { ok: false, message: 'spec.services: Required value: a v1alpha1 DynamoGraphDeployment lists its services as a map' };
  const metadata = isObj(input['metadata']) ? structuredClone(input['metadata']) : {};
  const saved = takeSavedPayload(metadata);
  const savedComponents = isObj(saved?.['components']) ? saved['components'] : {};
  const pvcNames = pvcNamesOf(spec);

  const spokeServices: Obj = {};
  const byName = new Map<string, Obj>();
  for (const name of Object.keys(services).sort()) {
    const service = isObj(services[name]) ? services[name] : {};
    const savedComponent = savedComponents[name];
    let component: Obj;
    if (isObj(savedComponent) && isDeepStrictEqual(serviceRest(reverseComponent(savedComponent)), serviceRest(service))) {
      component = { ...structuredClone(componentRest(savedComponent)), name, ...pick(service, VERBATIM_COMPONENT_FIELDS) };
    } else {
      const forwarded = forwardService(name, service, pvcNames);
      if (forwarded === undefined) return { ok: false, message: `spec.services[${name}]: Invalid value: not a v1alpha1 service` };
      component = forwarded;
    }
    if (!isDeepStrictEqual(serviceRest(reverseComponent(component)), serviceRest(service))) spokeServices[name] = structuredClone(service);
    byName.set(name, component);
  }
  const order = Array.isArray(saved?.['order']) ? (saved['order'] as unknown[]).filter((n): n is string => typeof n === 'string' && byName.has(n)) : [];
  const names = [...order, ...[...byName.keys()].filter((n) => !order.includes(n))];

  const hubSpec: Obj = { components: names.map((n) => byName.get(n) as Obj), ...pick(spec, VERBATIM_SPEC_FIELDS) };
  if (spec['envs'] !== undefined) hubSpec['env'] = structuredClone(spec['envs']);
  const alphaOnlySpec = omit(spec, ['services', 'envs', ...VERBATIM_SPEC_FIELDS]);

  const payload: Obj = {};
  if (Object.keys(spokeServices).length > 0) payload['services'] = spokeServices;
  if (Object.keys(alphaOnlySpec).length > 0) payload['spec'] = structuredClone(alphaOnlySpec);
  putSavedPayload(metadata, payload);
  const object: Obj = { ...input, apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata, spec: hubSpec };
  if (isObj(input['status'])) object['status'] = statusForward(input['status']);
  return { ok: true, object };
}

/**
 * Converts a v1beta1 DGD to v1alpha1 (hub -> spoke).
 * In: a `nvidia.com/v1beta1` DGD, possibly carrying a spoke payload in `nvidia.com/dgd-spec`.
 * Out: the v1alpha1 object; its `nvidia.com/dgd-spec` holds the components (and order) v1alpha1
 * cannot express. Failures: `spec.components` not a list of named components. Pure.
 */
export function convertDgdFromHub(input: Obj): DgdConversion {
  const spec = isObj(input['spec']) ? input['spec'] : undefined;
  const components = spec !== undefined && Array.isArray(spec['components']) ? (spec['components'] as unknown[]) : undefined;
  if (spec === undefined || components === undefined || !components.every((c) => isObj(c) && typeof c['name'] === 'string')) {
    return { ok: false, message: 'spec.components: Invalid value: a v1beta1 DynamoGraphDeployment lists its components by name' };
  }
  const metadata = isObj(input['metadata']) ? structuredClone(input['metadata']) : {};
  const saved = takeSavedPayload(metadata);
  const savedServices = isObj(saved?.['services']) ? saved['services'] : {};
  const savedSpec = isObj(saved?.['spec']) ? saved['spec'] : {};
  const pvcNames = pvcNamesOf(savedSpec);

  const services: Obj = {};
  const hubComponents: Obj = {};
  for (const raw of components as Obj[]) {
    const name = raw['name'] as string;
    const savedService = savedServices[name];
    let service: Obj;
    if (isObj(savedService) && sameRest(forwardService(name, savedService, pvcNames), raw)) {
      service = { ...structuredClone(serviceRest(savedService)), ...pick(raw, VERBATIM_COMPONENT_FIELDS) };
    } else {
      service = { ...reverseComponent(raw), ...(isObj(savedService) ? pick(savedService, ALPHA_ONLY_SERVICE_FIELDS) : {}) };
    }
    if (!sameRest(forwardService(name, service, pvcNames), raw)) hubComponents[name] = structuredClone(raw);
    services[name] = service;
  }
  const names = (components as Obj[]).map((c) => c['name'] as string);
  const isSorted = names.every((n, i) => i === 0 || (names[i - 1] as string) <= n);

  const alphaSpec: Obj = { ...structuredClone(savedSpec), ...pick(spec, VERBATIM_SPEC_FIELDS), services };
  if (spec['env'] !== undefined) alphaSpec['envs'] = structuredClone(spec['env']);
  const payload: Obj = {};
  if (Object.keys(hubComponents).length > 0) payload['components'] = hubComponents;
  if (!isSorted) payload['order'] = names;
  putSavedPayload(metadata, payload);
  const object: Obj = { ...input, apiVersion: DGD_V1ALPHA1, kind: DGD_KIND, metadata, spec: alphaSpec };
  if (isObj(input['status'])) object['status'] = statusReverse(input['status']);
  return { ok: true, object };
}

/**
 * Converts a DGD of either served version to `desiredApiVersion` (the conversion webhook's
 * per-kind converter). An object already in the desired version is returned unchanged.
 * Failures: an unknown source or desired version. Pure.
 */
export function convertDgd(object: Obj, desiredApiVersion: string): DgdConversion {
  const from = object['apiVersion'];
  if (from === desiredApiVersion) return { ok: true, object };
  if (from === DGD_V1ALPHA1 && desiredApiVersion === DGD_V1BETA1) return convertDgdToHub(object);
  if (from === DGD_V1BETA1 && desiredApiVersion === DGD_V1ALPHA1) return convertDgdFromHub(object);
  return { ok: false, message: `cannot convert ${DGD_KIND} from ${JSON.stringify(from)} to ${JSON.stringify(desiredApiVersion)}: served versions are ${DGD_V1BETA1} and ${DGD_V1ALPHA1}` };
}
