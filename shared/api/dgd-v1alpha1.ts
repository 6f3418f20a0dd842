/**
 * DynamoGraphDeployment `nvidia.com/v1alpha1` (`spec.services` map form) and its conversion
 * to v1beta1, so both versions can be admitted and rendered.
 *
 * The conversion follows the field moves upstream documents (upstream-notes/dgd.md §2.1-§2.3):
 * `services` map -> `components` list (sorted by name), `envs` -> `env`, `componentType`
 * (+ `subComponentType` prefill/decode) -> `type`, `extraPodSpec` + `mainContainer` ->
 * `podTemplate` with a container named `main`, service `resources`/`envs`/`envFromSecret`/
 * probes/`volumeMounts` -> the main container, `sharedMemory` -> `sharedMemorySize`,
 * `gpuMemoryService`/`failover` -> `experimental`; every `volumeMounts`/`pvc` mount gets a PVC
 * volume named after it (`spec.pvcs` declares claims, it does not name the volume), a
 * `useAsCompilationCache` mount becomes `compilationCache`, `subComponentType` also becomes
 * the pod label `nvidia.com/dynamo-sub-component-type`, and the `frontendSidecar` object form
 * (`{image, args, envFromSecret, envs}`) becomes a `sidecar-frontend` container the component
 * names. Fields with no v1beta1 home
 * (`dynamoNamespace`, `autoscaling`, `ingress`) are dropped with a note. Pure.
 * @module
 */
import { z } from 'zod';
import { DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, LABEL_SUB_COMPONENT_TYPE, MAIN_CONTAINER_NAME } from './constants.js';
import { ObjectMetaSchema, looseObject } from './core.js';
import { fromZodIssues, type FieldIssue } from './issues.js';

const ResourceItemSchema = z
  .object({
    cpu: z.union([z.string(), z.number()]).optional(),
    memory: z.string().optional(),
    gpu: z.union([z.string(), z.number()]).optional(),
    gpuType: z.string().optional(),
    custom: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  })
  .loose();

const VolumeMountSchema = z.object({ name: z.string().min(1), mountPoint: z.string().optional(), useAsCompilationCache: z.boolean().optional() }).loose();

export const ServiceV1Alpha1Schema = z
  .object({
    componentType: z.string().optional(),
    subComponentType: z.string().optional(),
    replicas: z.number().int().min(0).optional(),
    minAvailable: z.number().int().min(1).optional(),
    envs: z.array(looseObject()).optional(),
    envFromSecret: z.string().optional(),
    resources: z.object({ requests: ResourceItemSchema.optional(), limits: ResourceItemSchema.optional(), claims: z.array(looseObject()).optional() }).loose().optional(),
    livenessProbe: looseObject().optional(),
    readinessProbe: looseObject().optional(),
    volumeMounts: z.array(VolumeMountSchema).optional(),
    pvc: z.object({ name: z.string().min(1), mountPoint: z.string().optional() }).loose().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    extraPodMetadata: z.object({ annotations: z.record(z.string(), z.string()).optional(), labels: z.record(z.string(), z.string()).optional() }).loose().optional(),
    extraPodSpec: z.object({ mainContainer: looseObject().optional() }).loose().optional(),
    sharedMemory: z.object({ disabled: z.boolean().optional(), size: z.union([z.string(), z.number()]).optional() }).loose().optional(),
    multinode: looseObject().optional(),
    scalingAdapter: z.object({ enabled: z.boolean().optional() }).loose().optional(),
    gpuMemoryService: looseObject().optional(),
    failover: looseObject().optional(),
    checkpoint: looseObject().optional(),
    dynamoNamespace: z.string().optional(),
    /** The object form (upstream v1alpha1 `FrontendSidecarSpec`); v1beta1 names a container instead. */
    frontendSidecar: z
      .union([
        z.string(),
        z.object({ image: z.string().min(1), args: z.array(z.string()).optional(), envFromSecret: z.string().optional(), envs: z.array(looseObject()).optional() }).loose(),
      ])
      .optional(),
    globalDynamoNamespace: z.boolean().optional(),
  })
  .loose();
export type ServiceV1Alpha1 = z.infer<typeof ServiceV1Alpha1Schema>;

export const DgdV1Alpha1Schema = z.object({
  apiVersion: z.literal(DGD_V1ALPHA1),
  kind: z.literal(DGD_KIND),
  metadata: ObjectMetaSchema,
  spec: z
    .object({
      services: z.record(z.string(), ServiceV1Alpha1Schema),
      envs: z.array(looseObject()).optional(),
      pvcs: z.array(z.object({ name: z.string().min(1) }).loose()).max(100).optional(),
    })
    .loose(),
  status: looseObject().optional(),
});
export type DgdV1Alpha1 = z.infer<typeof DgdV1Alpha1Schema>;

/**
 * One v1alpha1 `spec.pvcs[]` entry (upstream `api/v1alpha1/common.go` `PVC`): the claim `name`,
 * and with `create: true` the `storageClass`, `size` (a quantity) and `volumeAccessMode` of the
 * claim the operator creates (CEL "When create is true, size, storageClass, and
 * volumeAccessMode are required"). Parsed where the claims are created, not in the CRD schema
 * (which keeps `spec.pvcs[]` open).
 */
export const PvcV1Alpha1Schema = z
  .object({
    name: z.string().min(1),
    create: z.boolean().optional(),
    storageClass: z.string().optional(),
    size: z.union([z.string(), z.number()]).optional(),
    volumeAccessMode: z.string().optional(),
  })
  .loose();
export type PvcV1Alpha1 = z.infer<typeof PvcV1Alpha1Schema>;

/** Result of converting one v1alpha1 object: a v1beta1-shaped object (not yet validated). */
export type ConversionResult =
  | { readonly ok: true; readonly object: Record<string, unknown>; readonly notes: readonly string[] }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

const TYPE_BY_COMPONENT_TYPE: Readonly<Record<string, string>> = {
  frontend: 'frontend',
  worker: 'worker',
  prefill: 'prefill',
  decode: 'decode',
  planner: 'planner',
  epp: 'epp',
  lpx: 'lpx',
};

const SPEC_FIELDS_KEPT = ['backendFramework', 'labels', 'annotations', 'priorityClassName', 'restart', 'topologyConstraint', 'providerOverride', 'experimental'] as const;

/**
 * Converts a v1alpha1 DGD to the v1beta1 shape.
 * In: any object with `apiVersion: nvidia.com/v1alpha1`. Out: the converted object and notes
 * for fields dropped, or field issues (paths under `spec.services[<name>]`) when the v1alpha1
 * shape itself is invalid. Pure: the input is not modified.
 */
export function convertDgdV1Alpha1(input: unknown): ConversionResult {
  const parsed = DgdV1Alpha1Schema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  const alpha = parsed.data;
  const notes: string[] = [];
  const components = Object.keys(alpha.spec.services)
    .sort()
    .map((name) => convertService(name, alpha.spec.services[name] ?? {}, new Set(), notes));

  const spec: Record<string, unknown> = { components };
  for (const field of SPEC_FIELDS_KEPT) {
    if (alpha.spec[field] !== undefined) spec[field] = structuredClone(alpha.spec[field]);
  }
  if (alpha.spec.envs !== undefined) spec['env'] = structuredClone(alpha.spec.envs);
  const object: Record<string, unknown> = {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: structuredClone(alpha.metadata),
    spec,
  };
  return { ok: true, object, notes };
}

/**
 * Converts one v1alpha1 service (the `spec.services` entry `name`) to a v1beta1 component.
 * In: the service and the names in `spec.pvcs`. Every mount gets a PVC volume named after it
 * whether or not `spec.pvcs` lists it (upstream `appendMissingPVCVolumesForMounts`), so
 * `pvcNames` no longer changes the result; it stays in the signature for the conversion
 * webhook's callers. Out: a fresh component; notes for dropped fields are appended to
 * `notes`. Pure.
 */
export function convertService(name: string, service: ServiceV1Alpha1, _pvcNames: ReadonlySet<string>, notes: string[]): Record<string, unknown> {
  const at = `spec.services[${name}]`;
  const component: Record<string, unknown> = { name };
  const type = resolveType(service);
  if (type !== undefined) component['type'] = type;
  else if (service.componentType !== undefined) notes.push(`${at}.componentType: "${service.componentType}" has no v1beta1 component type; the component is converted without a type`);
  for (const field of ['replicas', 'minAvailable', 'multinode', 'globalDynamoNamespace', 'modelRef', 'eppConfig', 'topologyConstraint', 'providerOverride', 'lpx', 'roles'] as const) {
    if (service[field] !== undefined) component[field] = structuredClone(service[field]);
  }
  if (typeof service.frontendSidecar === 'string') component['frontendSidecar'] = service.frontendSidecar;
  else if (service.frontendSidecar !== undefined) component['frontendSidecar'] = FRONTEND_SIDECAR_CONTAINER_NAME;
  const cache = (service.volumeMounts ?? []).find((m) => m.useAsCompilationCache === true);
  if (cache !== undefined) component['compilationCache'] = { pvcName: cache.name, ...(cache.mountPoint === undefined ? {} : { mountPath: cache.mountPoint }) };
  if (service.scalingAdapter?.enabled === true) component['scalingAdapter'] = {};
  if (service.sharedMemory?.disabled === true) component['sharedMemorySize'] = '0';
  else if (service.sharedMemory?.size !== undefined) component['sharedMemorySize'] = service.sharedMemory.size;
  const experimental: Record<string, unknown> = {};
  for (const field of ['gpuMemoryService', 'failover', 'checkpoint'] as const) {
    if (service[field] !== undefined) experimental[field] = structuredClone(service[field]);
  }
  if (Object.keys(experimental).length > 0) component['experimental'] = experimental;
  for (const dropped of ['dynamoNamespace', 'autoscaling', 'ingress'] as const) {
    if (service[dropped] !== undefined) notes.push(`${at}.${dropped}: deprecated v1alpha1 field has no v1beta1 equivalent and was dropped`);
  }
  // LPX pod templates live on roles (upstream-notes/lpx.md §1.1); synthesize none unless authored.
  if (type !== 'lpx' || service.extraPodSpec !== undefined) component['podTemplate'] = buildPodTemplate(service);
  return component;
}

function resolveType(service: ServiceV1Alpha1): string | undefined {
  const sub = service.subComponentType;
  if (service.componentType === 'worker' && (sub === 'prefill' || sub === 'decode')) return sub;
  return service.componentType === undefined ? undefined : TYPE_BY_COMPONENT_TYPE[service.componentType];
}

function buildPodTemplate(service: ServiceV1Alpha1): Record<string, unknown> {
  const { mainContainer, ...podSpecFields } = structuredClone(service.extraPodSpec ?? {}) as Record<string, unknown> & { mainContainer?: Record<string, unknown> };
  const podSpec: Record<string, unknown> = podSpecFields;
  const authoredContainers = Array.isArray(podSpec['containers']) ? (podSpec['containers'] as Record<string, unknown>[]) : [];
  const existingMain = authoredContainers.find((c) => c['name'] === MAIN_CONTAINER_NAME) ?? {};
  const main: Record<string, unknown> = { ...existingMain, ...(mainContainer ?? {}), name: MAIN_CONTAINER_NAME };

  const env = mergeByName((service.envs ?? []) as Record<string, unknown>[], asList(main['env']));
  if (env.length > 0) main['env'] = env;
  if (service.envFromSecret !== undefined) main['envFrom'] = [...asList(main['envFrom']), { secretRef: { name: service.envFromSecret } }];
  const resources = convertResources(service.resources, main['resources']);
  if (resources !== undefined) main['resources'] = resources;
  if (service.livenessProbe !== undefined && main['livenessProbe'] === undefined) main['livenessProbe'] = structuredClone(service.livenessProbe);
  if (service.readinessProbe !== undefined && main['readinessProbe'] === undefined) main['readinessProbe'] = structuredClone(service.readinessProbe);

  // A compilation-cache mount becomes `compilationCache`, which rendering mounts (upstream
  // v1alpha1 conversion); every other mount names a PVC and gets its volume here.
  const mounts = [...(service.volumeMounts ?? []).filter((m) => m.useAsCompilationCache !== true), ...(service.pvc === undefined ? [] : [service.pvc])];
  if (mounts.length > 0) {
    const volumes = asList(podSpec['volumes']);
    const volumeNames = new Set(volumes.map((v) => v['name']));
    const volumeMounts = asList(main['volumeMounts']);
    for (const mount of mounts) {
      if (mount.mountPoint !== undefined) volumeMounts.push({ name: mount.name, mountPath: mount.mountPoint });
      if (!volumeNames.has(mount.name)) {
        volumes.push({ name: mount.name, persistentVolumeClaim: { claimName: mount.name } });
        volumeNames.add(mount.name);
      }
    }
    if (volumeMounts.length > 0) main['volumeMounts'] = volumeMounts;
    if (volumes.length > 0) podSpec['volumes'] = volumes;
  }
  const sidecar = typeof service.frontendSidecar === 'object' ? frontendSidecarContainer(service.frontendSidecar) : undefined;
  podSpec['containers'] = [main, ...authoredContainers.filter((c) => c['name'] !== MAIN_CONTAINER_NAME && c['name'] !== sidecar?.['name']), ...(sidecar === undefined ? [] : [sidecar])];

  const labels: Record<string, string> = { ...(service.labels ?? {}), ...(service.extraPodMetadata?.labels ?? {}) };
  // Upstream renders the alpha `subComponentType` as this pod label (graph.go `generateLabels`).
  if (service.subComponentType !== undefined && service.subComponentType !== '') labels[LABEL_SUB_COMPONENT_TYPE] = service.subComponentType;
  const annotations = { ...(service.annotations ?? {}), ...(service.extraPodMetadata?.annotations ?? {}) };
  const metadata: Record<string, unknown> = {};
  if (Object.keys(labels).length > 0) metadata['labels'] = labels;
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  return Object.keys(metadata).length > 0 ? { metadata, spec: podSpec } : { spec: podSpec };
}

/** The container name of a converted frontend sidecar (upstream `FrontendSidecarContainerName`). */
export const FRONTEND_SIDECAR_CONTAINER_NAME = 'sidecar-frontend';

/** The v1alpha1 frontend sidecar object as a container: image, args, envFrom secret, env. */
function frontendSidecarContainer(spec: { image: string; args?: string[] | undefined; envFromSecret?: string | undefined; envs?: Record<string, unknown>[] | undefined }): Record<string, unknown> {
  const container: Record<string, unknown> = { name: FRONTEND_SIDECAR_CONTAINER_NAME, image: spec.image };
  if (spec.args !== undefined) container['args'] = [...spec.args];
  if (spec.envFromSecret !== undefined) container['envFrom'] = [{ secretRef: { name: spec.envFromSecret } }];
  if (spec.envs !== undefined) container['env'] = structuredClone(spec.envs);
  return container;
}

type ResourceItem = z.infer<typeof ResourceItemSchema>;

function convertResourceItem(item: ResourceItem | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (item === undefined) return out;
  if (item.cpu !== undefined) out['cpu'] = String(item.cpu);
  if (item.memory !== undefined) out['memory'] = item.memory;
  if (item.gpu !== undefined) out[item.gpuType ?? 'nvidia.com/gpu'] = String(item.gpu);
  for (const [key, value] of Object.entries(item.custom ?? {})) out[key] = String(value);
  return out;
}

function convertResources(resources: ServiceV1Alpha1['resources'], authored: unknown): Record<string, unknown> | undefined {
  if (resources === undefined) return authored === undefined ? undefined : (authored as Record<string, unknown>);
  const base = (authored ?? {}) as Record<string, Record<string, unknown> | unknown[] | undefined>;
  const out: Record<string, unknown> = { ...base };
  const requests = { ...convertResourceItem(resources.requests), ...((base['requests'] as Record<string, unknown> | undefined) ?? {}) };
  const limits = { ...convertResourceItem(resources.limits), ...((base['limits'] as Record<string, unknown> | undefined) ?? {}) };
  if (Object.keys(requests).length > 0) out['requests'] = requests;
  if (Object.keys(limits).length > 0) out['limits'] = limits;
  if (resources.claims !== undefined) out['claims'] = [...asList(base['claims']), ...structuredClone(resources.claims)];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Merges env lists by `name`; later lists win, first-seen order is kept. */
function mergeByName(...lists: Record<string, unknown>[][]): Record<string, unknown>[] {
  const byName = new Map<unknown, Record<string, unknown>>();
  for (const list of lists) for (const item of list) byName.set(item['name'], structuredClone(item));
  return [...byName.values()];
}

function asList(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? (value as Record<string, unknown>[]).map((v) => structuredClone(v)) : [];
}
