/**
 * Kubernetes discovery identity: the ServiceAccount, Role and RoleBinding a DGD's pods run
 * under when they discover each other through the Kubernetes API (EndpointSlices, pods,
 * DynamoWorkerMetadata) instead of etcd, and the pod spec's `serviceAccountName`.
 *
 * Source: upstream `deploy/operator/internal/discovery/resource.go` (`GetK8sDiscoveryServiceAccount`,
 * `GetK8sDiscoveryRole`, `GetK8sDiscoveryRoleBinding`, `getK8sDiscoveryLabelValue`) and its
 * `resource_test.go`; `internal/controller/dynamographdeployment_controller.go`
 * (`reconcileK8sDiscoveryResources`: created with the DGD as controller, only when
 * `IsK8sDiscoveryEnabled(config.Discovery.Backend, dgd.Annotations)`); `internal/dynamo/graph.go`
 * (`GenerateBasePodSpec`: the pod runs as that ServiceAccount unless it names one).
 * @module
 */
import { createHash } from 'node:crypto';
import {
  ANNOTATION_DISCOVERY_BACKEND,
  K8S_DISCOVERY_COMPONENT,
  K8S_DISCOVERY_MANAGED_BY,
  K8S_DISCOVERY_SERVICE_ACCOUNT_SUFFIX,
  LABEL_APP_COMPONENT,
  LABEL_APP_MANAGED_BY,
  LABEL_APP_NAME,
  type Dgd,
} from '../../api/index.js';

/** Kubernetes' label value limit (63) and the hash length upstream keeps when it shortens one. */
const MAX_LABEL_VALUE_LENGTH = 63;
const LABEL_HASH_LENGTH = 8;
/** A ServiceAccount name is a DNS-1123 subdomain: at most 253 characters. */
export const MAX_SERVICE_ACCOUNT_NAME_LENGTH = 253;

/** `<dgd>-k8s-service-discovery` (upstream `GetK8sDiscoveryServiceAccountName`). Pure. */
export function k8sDiscoveryServiceAccountName(dgdName: string): string {
  return `${dgdName}${K8S_DISCOVERY_SERVICE_ACCOUNT_SUFFIX}`;
}

/**
 * The `app.kubernetes.io/name` value of all three objects: the ServiceAccount name, or when it
 * exceeds 63 characters its first 54 characters, `-` and the first 8 hex digits of its
 * SHA-256 (upstream `getK8sDiscoveryLabelValue`; `TestGetK8sDiscoveryLabelValue`). Pure.
 */
export function k8sDiscoveryLabelValue(serviceAccountName: string): string {
  if (serviceAccountName.length <= MAX_LABEL_VALUE_LENGTH) return serviceAccountName;
  const hash = createHash('sha256').update(serviceAccountName).digest('hex').slice(0, LABEL_HASH_LENGTH);
  return `${serviceAccountName.slice(0, MAX_LABEL_VALUE_LENGTH - LABEL_HASH_LENGTH - 1)}-${hash}`;
}

/**
 * Whether the DGD uses Kubernetes discovery: its `nvidia.com/dynamo-discovery-backend`
 * metadata annotation, else the operator default, is `kubernetes` (upstream
 * `IsK8sDiscoveryEnabled(config.Discovery.Backend, dgd.Annotations)`). Pure.
 */
export function isK8sDiscoveryEnabled(dgd: Pick<Dgd, 'metadata'>, defaultBackend: string): boolean {
  return (dgd.metadata.annotations?.[ANNOTATION_DISCOVERY_BACKEND] ?? defaultBackend) === 'kubernetes';
}

/**
 * The pod runs as the discovery ServiceAccount when its component uses Kubernetes discovery
 * and the pod spec names no ServiceAccount (an authored one, or the planner's and EPP's own,
 * wins). Upstream `GenerateBasePodSpec`. Pure: returns a new pod spec.
 */
export function withK8sDiscoveryServiceAccount(podSpec: Record<string, unknown>, dgdName: string, usesK8sDiscovery: boolean): Record<string, unknown> {
  const named = podSpec['serviceAccountName'];
  if (!usesK8sDiscovery || (typeof named === 'string' && named !== '')) return podSpec;
  return { ...podSpec, serviceAccountName: k8sDiscoveryServiceAccountName(dgdName) };
}

type Json = Record<string, unknown>;

/**
 * The three discovery objects of a DGD, in kind order (Role, RoleBinding, ServiceAccount):
 * - ServiceAccount `<dgd>-k8s-service-discovery`;
 * - Role `<sa>-role`: get/list/watch on `endpoints` and `pods`, get/list/watch on
 *   `discovery.k8s.io` `endpointslices`, create/get/list/watch/update/patch/delete on
 *   `nvidia.com` `dynamoworkermetadatas`, and get on `coordination.k8s.io` `leases`
 *   (`TestGetK8sDiscoveryRoleCanReadLeases`);
 * - RoleBinding `<sa>-binding` of that Role to that ServiceAccount;
 * each labelled `app.kubernetes.io/managed-by: dynamo-operator`, `app.kubernetes.io/component:
 * rbac`, `app.kubernetes.io/name: <label value of the SA name>`, with `metadata` from `meta`
 * (the caller adds namespace and owner references). Source: upstream `resource.go`. Pure.
 */
export function renderK8sDiscoveryObjects(dgdName: string, namespace: string, meta: (name: string, labels: Record<string, string>) => Json): Json[] {
  const account = k8sDiscoveryServiceAccountName(dgdName);
  const role = `${account}-role`;
  const labels = (): Record<string, string> => ({
    [LABEL_APP_COMPONENT]: K8S_DISCOVERY_COMPONENT,
    [LABEL_APP_MANAGED_BY]: K8S_DISCOVERY_MANAGED_BY,
    [LABEL_APP_NAME]: k8sDiscoveryLabelValue(account),
  });
  const read = ['get', 'list', 'watch'];
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(role, labels()),
      rules: [
        { apiGroups: [''], resources: ['endpoints', 'pods'], verbs: [...read] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: [...read] },
        { apiGroups: ['nvidia.com'], resources: ['dynamoworkermetadatas'], verbs: ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(`${account}-binding`, labels()),
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(account, labels()) },
  ];
}
