/**
 * The typed topology rules of DGD admission: `spec.topologyConstraint`, the components'
 * `topologyConstraint.packDomain` against the graph's, and `spec.experimental.kvTransferPolicy`
 * against the ClusterTopologyBinding it names.
 *
 * Upstream reads the named Grove `ClusterTopologyBinding` (cluster-scoped,
 * `grove.io/v1alpha1`) on create only (`generation <= 1`) and on the Grove pathway; its
 * `spec.levels[*].domain`, in order from the widest level to the narrowest, decide whether a
 * pack domain exists and whether a component's domain is "equal to or narrower than" the
 * graph's. The shell reads the bindings {@link clusterTopologyNamesToRead} names and hands the
 * observations in; these rules stay pure. Without an observation (no reader configured) the
 * live checks are skipped, as upstream skips them when "live topology validation is not
 * applicable".
 *
 * Source: upstream `internal/webhook/validation/dynamographdeployment.go`
 * (`validateDynamoGraphDeploymentSpec` topology block, `validateSpecTopologyConstraint`,
 * `validateKvTransferPolicy`), `shared_v1beta1.go` (`validateTopologyConstraint`),
 * `dynamographdeployment_helpers.go` (`readGroveClusterTopology`: domains listed sorted);
 * upstream-notes/dgd.md §2.3 ("topologyConstraint{packDomain}: Must be ≤ the graph-level
 * domain").
 * @module
 */
import type { Dgd, FieldIssue } from '../../api/index.js';
import type { AdmissionContext } from './common.js';

/**
 * What the shell saw of one ClusterTopologyBinding: its level domains in the binding's order
 * (widest first), that it does not exist, or the read error's text.
 */
export type ClusterTopologyObservation =
  | { readonly found: true; readonly domains: readonly string[] }
  | { readonly found: false }
  | { readonly error: string };

/** Observed ClusterTopologyBindings by name. */
export type ClusterTopologies = ReadonlyMap<string, ClusterTopologyObservation>;

/** Upstream's bound for the creation-time topology reads: `generation <= 1` (a create). */
function isCreateGeneration(dgd: Dgd): boolean {
  return (dgd.metadata.generation ?? 0) <= 1;
}

function hasTypedTopology(dgd: Dgd): boolean {
  return dgd.spec.topologyConstraint !== undefined || dgd.spec.components.some((c) => c.topologyConstraint !== undefined);
}

function kvTransferClusterTopologyName(dgd: Dgd): string | undefined {
  const name = dgd.spec.experimental?.kvTransferPolicy?.clusterTopologyName;
  return name === undefined || name === '' ? undefined : name;
}

/**
 * The ClusterTopologyBinding names admission reads for a DGD under review, of either served
 * version (v1alpha1 `spec.services` or v1beta1 `spec.components`), read defensively from the raw
 * request object (the shell calls it before validation parses anything): on a create
 * (`generation <= 1`), the graph constraint's `clusterTopologyName` when any typed constraint is
 * set, and the kvTransferPolicy's `clusterTopologyName` when it is a valid DNS-1123 subdomain.
 * Sorted, unique; empty for anything else. Pure.
 */
export function clusterTopologyNamesToRead(object: unknown): string[] {
  const dgd = asRecord(object);
  const metadata = asRecord(dgd?.['metadata']);
  const spec = asRecord(dgd?.['spec']);
  if (spec === undefined) return [];
  const generation = metadata?.['generation'];
  if (typeof generation === 'number' && generation > 1) return [];
  const names = new Set<string>();
  const graph = asRecord(spec['topologyConstraint']);
  const components = Array.isArray(spec['components']) ? (spec['components'] as unknown[]) : Object.values(asRecord(spec['services']) ?? {});
  const hasAny = graph !== undefined || components.some((c) => asRecord(c)?.['topologyConstraint'] != null);
  const graphName = graph?.['clusterTopologyName'];
  if (hasAny && typeof graphName === 'string' && graphName !== '') names.add(graphName);
  const kvName = asRecord(asRecord(asRecord(spec['experimental'])?.['kvTransferPolicy']))?.['clusterTopologyName'];
  if (typeof kvName === 'string' && kvName !== '' && isDns1123Subdomain(kvName)) names.add(kvName);
  return [...names].sort();
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Go's `%v` of a `[]string`: `[a b c]`. */
function goList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

/** Upstream `readGroveClusterTopology`: the domain index by level, and the domains sorted. */
interface TopologyInfo {
  readonly name: string;
  readonly index: ReadonlyMap<string, number>;
  readonly sortedDomains: readonly string[];
}

function topologyInfo(name: string, observation: ClusterTopologyObservation): TopologyInfo | undefined {
  if (!('found' in observation) || !observation.found) return undefined;
  return { name, index: new Map(observation.domains.map((d, i) => [d, i])), sortedDomains: [...observation.domains].sort() };
}

/** The read failure of a binding as upstream reports it at `path`, or nothing when it was read. */
function readFailure(path: string, name: string, observation: ClusterTopologyObservation): FieldIssue[] {
  if ('error' in observation) return [{ path, type: 'Invalid', value: name, detail: `failed to read ClusterTopologyBinding: ${observation.error}` }];
  if (!observation.found) return [{ path, type: 'Invalid', value: name, detail: 'references a ClusterTopologyBinding resource that was not found' }];
  return [];
}

/**
 * validateTopologyConstraints: when the graph or any component sets a typed `topologyConstraint`:
 * - Required `spec.topologyConstraint` "is required when any component topology constraint is set";
 * - Required `spec.topologyConstraint.packDomain` "is required when no component topologyConstraint is set";
 * - on a create whose binding was read: Invalid `spec.topologyConstraint.clusterTopologyName`
 *   "references a ClusterTopologyBinding resource that was not found" (or "failed to read
 *   ClusterTopologyBinding: <error>"); Invalid `spec.topologyConstraint.packDomain` `does not
 *   exist in ClusterTopologyBinding "<name>"; available domains: [<sorted>]`;
 * - per component: Invalid `spec.components[i].topologyConstraint.packDomain` `does not exist in
 *   ClusterTopology "<name>"; available domains: [<sorted>]`, or, when the graph names a pack
 *   domain, `must be equal to or narrower than the deployment-level domain "<graph domain>"`
 *   when the component's level is wider (earlier in the binding's levels) than the graph's.
 * Texts are upstream's word for word (its component text says "ClusterTopology"). Create only:
 * upstream's update path does not run this stateless traversal (and the constraints are
 * immutable, ./graph.ts `validateGraphImmutableFields`). Pure.
 */
export function validateTopologyConstraints(ctx: Pick<AdmissionContext, 'dgd' | 'isUpdate' | 'clusterTopologies'>): FieldIssue[] {
  const { dgd } = ctx;
  if (ctx.isUpdate || !hasTypedTopology(dgd)) return [];
  const graph = dgd.spec.topologyConstraint;
  if (graph === undefined) return [{ path: 'spec.topologyConstraint', type: 'Required', detail: 'is required when any component topology constraint is set' }];
  const issues: FieldIssue[] = [];
  const hasComponentConstraint = dgd.spec.components.some((c) => c.topologyConstraint !== undefined);
  const graphDomain = graph.packDomain ?? '';
  if (graphDomain === '' && !hasComponentConstraint) {
    issues.push({ path: 'spec.topologyConstraint.packDomain', type: 'Required', detail: 'is required when no component topologyConstraint is set' });
  }
  const observation = isCreateGeneration(dgd) ? ctx.clusterTopologies?.get(graph.clusterTopologyName) : undefined;
  if (observation === undefined) return issues;
  issues.push(...readFailure('spec.topologyConstraint.clusterTopologyName', graph.clusterTopologyName, observation));
  const info = topologyInfo(graph.clusterTopologyName, observation);
  if (info === undefined) return issues;
  if (graphDomain !== '' && !info.index.has(graphDomain)) {
    issues.push({ path: 'spec.topologyConstraint.packDomain', type: 'Invalid', value: graphDomain, detail: `does not exist in ClusterTopologyBinding ${JSON.stringify(info.name)}; available domains: ${goList(info.sortedDomains)}` });
  }
  dgd.spec.components.forEach((component, i) => {
    if (component.topologyConstraint === undefined) return;
    const path = `spec.components[${i}].topologyConstraint.packDomain`;
    const domain = component.topologyConstraint.packDomain ?? '';
    const componentLevel = info.index.get(domain);
    if (componentLevel === undefined) {
      issues.push({ path, type: 'Invalid', value: domain, detail: `does not exist in ClusterTopology ${JSON.stringify(info.name)}; available domains: ${goList(info.sortedDomains)}` });
      return;
    }
    const graphLevel = graphDomain === '' ? undefined : info.index.get(graphDomain);
    if (graphLevel !== undefined && componentLevel < graphLevel) {
      issues.push({ path, type: 'Invalid', value: domain, detail: `must be equal to or narrower than the deployment-level domain ${JSON.stringify(graphDomain)}` });
    }
  });
  return issues;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** Kubernetes `IsDNS1123Subdomain` messages, joined as upstream joins them ("; "). */
function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push('must be no more than 253 characters');
  if (!DNS1123_SUBDOMAIN.test(value)) errors.push(DNS1123_SUBDOMAIN_MESSAGE);
  return errors;
}

/**
 * validateKvTransferPolicyTopology: a kvTransferPolicy naming a `clusterTopologyName`:
 * Invalid `spec.experimental.kvTransferPolicy.clusterTopologyName` with the DNS-1123 subdomain
 * messages; on a create whose binding was read, the not-found / read-failure text there, and
 * Invalid `spec.experimental.kvTransferPolicy.domain` `does not exist in ClusterTopologyBinding
 * "<name>"; available domains: [<sorted>]`. Create only, as above. Pure.
 */
export function validateKvTransferPolicyTopology(ctx: Pick<AdmissionContext, 'dgd' | 'isUpdate' | 'clusterTopologies'>): FieldIssue[] {
  const name = kvTransferClusterTopologyName(ctx.dgd);
  if (ctx.isUpdate || name === undefined) return [];
  const path = 'spec.experimental.kvTransferPolicy';
  const nameErrors = dns1123SubdomainErrors(name);
  if (nameErrors.length > 0) return [{ path: `${path}.clusterTopologyName`, type: 'Invalid', value: name, detail: nameErrors.join('; ') }];
  const observation = isCreateGeneration(ctx.dgd) ? ctx.clusterTopologies?.get(name) : undefined;
  if (observation === undefined) return [];
  const failure = readFailure(`${path}.clusterTopologyName`, name, observation);
  if (failure.length > 0) return failure;
  const info = topologyInfo(name, observation);
  const domain = ctx.dgd.spec.experimental?.kvTransferPolicy?.domain ?? '';
  if (info === undefined || info.index.has(domain)) return [];
  return [{ path: `${path}.domain`, type: 'Invalid', value: domain, detail: `does not exist in ClusterTopologyBinding ${JSON.stringify(info.name)}; available domains: ${goList(info.sortedDomains)}` }];
}
