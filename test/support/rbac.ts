/**
 * Running a function under its own ServiceAccount on the real API server: the chart's rendered
 * ClusterRole rules, a test ServiceAccount bound to exactly those rules, a TokenRequest token
 * and a kubeconfig for it, and a loopback recorder between the function and the API server that
 * notes the verb and resource of every request (as the API server's authorizer sees them), so a
 * test can assert that every grant of a role is used by some call and that none was refused.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AuthorizationV1Api, CoreV1Api, KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { CHART_DIR, ensureHelm, runHelm } from '../harness/helm.js';
import { createLineLog } from '../harness/log.js';
import { eventually } from './eventually.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

export interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
}

/** One (group, resource, verb) a role grants; `resource` may carry a subresource (`pods/log`). */
export interface Grant {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
}

/** Every (group, resource, verb) of the rules, one per combination. */
export function grants(rules: readonly PolicyRule[]): Grant[] {
  return rules.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => ({ group, resource, verb })))));
}

/** `verb group/resource`, `core` for the core group, as the tests print grants. */
export function label(g: Grant): string {
  return `${g.verb} ${g.group === '' ? 'core' : g.group}/${g.resource}`;
}

/**
 * The rules of each ClusterRole in one chart template, rendered by `helm template` with `values`
 * (`--set key=value`). Out: role name -> rules.
 */
export async function chartClusterRoles(template: string, values: Readonly<Record<string, string>> = {}): Promise<Map<string, PolicyRule[]>> {
  const helm = await ensureHelm({ log: createLineLog() });
  const sets = Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  const rendered = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, '--namespace', 'dynamo-system', ...sets, '--show-only', template]);
  if (rendered.code !== 0) throw new Error(`helm template ${template} failed: ${rendered.stderr}`);
  const roles = new Map<string, PolicyRule[]>();
  for (const document of parseAllDocuments(rendered.stdout)) {
    const object = document.toJS() as { kind?: string; metadata?: { name?: string }; rules?: PolicyRule[] } | null;
    if (object?.kind === 'ClusterRole') roles.set(object.metadata?.name ?? '', object.rules ?? []);
  }
  return roles;
}

/** Whether RBAC allows the ServiceAccount `grant` in `namespace` (a SubjectAccessReview). */
export async function canI(kubeConfig: KubeConfig, namespace: string, serviceAccount: string, grant: Grant): Promise<boolean> {
  const api = kubeConfig.makeApiClient(AuthorizationV1Api);
  const [resource, subresource] = grant.resource.split('/');
  const result = await api.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { group: grant.group, resource: resource ?? '', subresource: subresource ?? '', verb: grant.verb, namespace },
      },
    },
  });
  return result.status?.allowed === true;
}

/**
 * A ServiceAccount `<prefix>-<random>` in `namespace`, bound (ClusterRoleBinding, test-unique
 * names) to a ClusterRole of exactly `rules`; resolves once the authorizer answers for it.
 */
export async function serviceAccountWith(admin: Kube, kubeConfig: KubeConfig, namespace: string, prefix: string, rules: readonly PolicyRule[]): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const clusterRole = `dynamo-rbac-test-${namespace}-${name}`;
  await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  await admin.apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: clusterRole }, rules } as unknown as KubeObject);
  await admin.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: clusterRole },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  } as unknown as KubeObject);
  // The authorizer sees a new binding through its informer: wait until a granted verb is allowed.
  const probe = grants(rules)[0];
  if (probe !== undefined) await eventually(`RBAC for ${name}`, async () => ((await canI(kubeConfig, namespace, name, probe)) ? true : undefined), 15_000);
  return name;
}

/**
 * A kubeconfig file in `dir` for the ServiceAccount: a TokenRequest token (one hour), and the
 * test API server with its CA, or `server` instead (a loopback recorder, plain HTTP, which
 * client-node accepts only with `insecure-skip-tls-verify`; the recorder speaks TLS upstream).
 */
export async function kubeconfigFor(kubeConfig: KubeConfig, namespace: string, serviceAccount: string, dir: string, server?: string): Promise<string> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (token === undefined || token === '') throw new Error(`no token for ServiceAccount ${namespace}/${serviceAccount}`);
  const cluster = kubeConfig.getCurrentCluster();
  const file = path.join(dir, `${serviceAccount}${server === undefined ? '' : '-recorded'}.kubeconfig`);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: server === undefined ? { server: cluster?.server, 'certificate-authority-data': cluster?.caData } : { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: serviceAccount } }],
      'current-context': 'test',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** A resource request as the API server's authorizer sees it, and how it was answered. */
export interface RecordedRequest {
  readonly verb: string;
  readonly group: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly status: number;
  /**
   * For a create, update or patch whose object names owners with `blockOwnerDeletion: true`:
   * each owner's `<resource>/finalizers` (and group), on which the OwnerReferencesPermissionEnforcement
   * admission plugin authorizes `update` for that request (see {@link blockingOwnerRefs}).
   */
  readonly ownerFinalizers?: readonly { readonly group: string; readonly resource: string }[];
}

/** `watch` query values read as true (Go's strconv.ParseBool, as requestinfo.go parses it). */
const WATCH_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
/** Subresources of a Namespace itself (requestinfo.go namespaceSubresources). */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * The authorizer's attributes of a request, as k8s.io/apiserver `pkg/endpoints/request`
 * requestinfo.go `NewRequestInfo` derives them: the verb from the method (GET and HEAD: `get`
 * with a name, else `list`, or `watch` with a true `watch` query or the `/watch/` prefix; POST
 * `create`; PUT `update`; PATCH `patch`; DELETE `delete` with a name, else `deletecollection`),
 * the group, namespace, resource and subresource from the path (`namespaces/<ns>/...` is
 * namespaced; `namespaces/<ns>` alone, or with `status` or `finalize`, is the Namespace itself).
 * Undefined for non-resource paths (discovery, `/version`, `/openapi`).
 */
export function requestAttributes(method: string, url: string): Omit<RecordedRequest, 'status'> | undefined {
  const parsed = new URL(url, 'http://127.0.0.1');
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  let rest: string[];
  let group: string;
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 3) {
    group = segments[1] ?? '';
    rest = segments.slice(3);
  } else return undefined;
  let isWatch = WATCH_TRUE.has(parsed.searchParams.get('watch') ?? '');
  if (rest[0] === 'watch') {
    isWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] ?? '')) rest = rest.slice(2);
  }
  const [resource, name, subresource] = rest;
  if (resource === undefined) return undefined;
  const hasName = name !== undefined;
  const verbs: Record<string, string> = {
    GET: hasName ? 'get' : isWatch ? 'watch' : 'list',
    HEAD: hasName ? 'get' : isWatch ? 'watch' : 'list',
    POST: 'create',
    PUT: 'update',
    PATCH: 'patch',
    DELETE: hasName ? 'delete' : 'deletecollection',
  };
  const verb = verbs[method.toUpperCase()];
  if (verb === undefined) return undefined;
  return { verb, group, resource: subresource === undefined ? resource : `${resource}/${subresource}`, namespace };
}

/** An owner reference of a request's object, by its apiVersion and kind. */
export interface OwnerKind {
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The owners a write's body names with `blockOwnerDeletion: true` (`metadata.ownerReferences`
 * of a create, update or server-side apply body, JSON or YAML); none for any other body. The
 * OwnerReferencesPermissionEnforcement admission plugin authorizes `update` on each such owner's
 * `<resource>/finalizers` (k8s.io/kubernetes plugin/pkg/admission/gc/gc_admission.go: "cannot set
 * blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on").
 * It checks only references new to the stored object; a write repeating them is counted too,
 * after the write that set them first.
 */
export function blockingOwnerRefs(verb: string, body: Buffer): OwnerKind[] {
  if (!['create', 'update', 'patch'].includes(verb) || body.length === 0) return [];
  // Bodies are JSON but for a server-side apply, which may be YAML: JSON.parse first (YAML's
  // parser took a quarter of a benchmark's own CPU, every request of both sides through it).
  const text = body.toString('utf8');
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch {
    try {
      object = parse(text);
    } catch {
      return [];
    }
  }
  const refs = (object as { metadata?: { ownerReferences?: unknown } } | null)?.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return (refs as { apiVersion?: unknown; kind?: unknown; blockOwnerDeletion?: unknown }[])
    .filter((r) => r.blockOwnerDeletion === true && typeof r.apiVersion === 'string' && typeof r.kind === 'string')
    .map((r) => ({ apiVersion: r.apiVersion as string, kind: r.kind as string }));
}

/** client-node's discovery (with its per-client cache) of the resource serving a kind. */
class Discovery extends KubernetesObjectApi {
  resourceOf(apiVersion: string, kind: string): ReturnType<KubernetesObjectApi['resource']> {
    return this.resource(apiVersion, kind);
  }
}

/** A loopback recorder in front of the test API server (test/support/fault-proxy.ts with no faults). */
export interface RequestRecorder {
  /** `http://127.0.0.1:<port>`, for {@link kubeconfigFor}'s `server`. */
  readonly url: string;
  /** Every resource request so far, in order. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startRequestRecorder(kubeConfig: KubeConfig): Promise<RequestRecorder> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig has no cluster');
  const requests: RecordedRequest[] = [];
  // The owner kind's resource, as the plugin's RESTMapper finds it: from discovery (the admin's).
  const discovery = kubeConfig.makeApiClient(Discovery);
  const finalizersOf = async (owner: OwnerKind): Promise<{ group: string; resource: string }> => {
    const group = owner.apiVersion.includes('/') ? (owner.apiVersion.split('/')[0] ?? '') : '';
    const resource = await discovery.resourceOf(owner.apiVersion, owner.kind).then((r) => r?.name, () => undefined);
    // Unknown to discovery: a label no role grants, so an "every grant used" check shows it.
    return { group, resource: `${resource ?? `unresolved ${owner.kind}`}/finalizers` };
  };
  const proxy: FaultProxy = await startFaultProxy({
    target: cluster.server,
    caPem: Buffer.from(cluster.caData ?? '', 'base64').toString('utf8'),
    handlers: () => [],
    observe: async ({ method, url, status, body }) => {
      const attributes = requestAttributes(method, url);
      if (attributes === undefined) return;
      const owners = blockingOwnerRefs(attributes.verb, body);
      const ownerFinalizers = await Promise.all(owners.map(finalizersOf));
      requests.push({ ...attributes, status, ...(ownerFinalizers.length > 0 ? { ownerFinalizers } : {}) });
    },
  });
  return { url: proxy.url, requests, close: () => proxy.close() };
}

/**
 * The grants the recorded requests used, as {@link label}s: each request's own verb, and also
 * `create` for a PATCH answered 201 (a server-side apply that creates the object is authorized
 * for both, k8s.io/apiserver `handlers/patch.go` createAuthorizerAttributes), and `update` on
 * each `<owner resource>/finalizers` of a write the API server accepted (2xx) that set
 * `blockOwnerDeletion: true` (the OwnerReferencesPermissionEnforcement plugin authorizes it for
 * that write; a finalizers grant is never a request's own verb).
 */
export function usedGrants(requests: readonly RecordedRequest[]): Set<string> {
  const used = new Set<string>();
  for (const r of requests) {
    if (r.status === 403) continue;
    used.add(label(r));
    if (r.verb === 'patch' && r.status === 201) used.add(label({ ...r, verb: 'create' }));
    if (r.status >= 200 && r.status < 300) for (const owner of r.ownerFinalizers ?? []) used.add(label({ ...owner, verb: 'update' }));
  }
  return used;
}

/** The recorded requests the API server refused (403), as {@link label}s, sorted and unique. */
export function forbidden(requests: readonly RecordedRequest[]): string[] {
  return [...new Set(requests.filter((r) => r.status === 403).map(label))].sort();
}
