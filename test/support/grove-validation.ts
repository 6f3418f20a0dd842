/**
 * TEST-ONLY: Grove's PodCliqueSet admission (defaulting, then create validation), transcribed so
 * tests can prove that what we render is a PodCliqueSet Grove accepts. It stands in for Grove's
 * mutating and validating webhooks, which do not run here (dev and the integration tests have
 * Grove's CRDs but no Grove operator). Production code never imports it.
 *
 * Sources (each rule names the function it transcribes):
 * - ../shared/upstream-notes/grove.md §A.5 "Defaulting" and §A.6 "Validation";
 * - upstream Grove `operator/internal/webhook/admission/pcs/validation/podcliqueset.go`
 *   (ai-dynamo/grove; `validate`, `validatePodCliqueSetSpec`, `validatePodCliqueTemplates`,
 *   `validatePodCliqueSpec`, `validatePodCliqueScalingGroupConfigs`, `validateTerminationDelay`,
 *   `validateResourceClaimTemplates`, `validateResourceSharingSpecs`, `validateSchedulerNames`,
 *   `validateCliqueDependencies`, `validatePodSpec`, `validatePodNameConstraints`,
 *   `validateResolvableTopologyConstraint`), and `.../pcs/defaulting/podcliqueset.go` as
 *   grove.md §A.5 summarises it.
 *
 * - upstream Grove `.../pcs/validation/generatednames.go` (`generatedResourceClaimNameValidator`:
 *   every ResourceClaim name Grove would generate from a `resourceSharing` entry, at the largest
 *   replica index the template allows, must be a DNS-1123 label). grove.md pins a Grove `main`
 *   where this was still PR #767; current upstream has it, so it is checked here too (a render
 *   that passes only the older rules would be refused by a newer Grove).
 *
 * Not transcribed (say so rather than pretend): the topology checks against a
 * ClusterTopologyBinding's levels (TAS needs the cluster object), scheduler-backend-specific
 * validation, and the update-only immutability rules (see {@link groveUpdateIssues} for the
 * ones a replica change can hit).
 * @module
 */

/** One refusal, as Grove's `field.Error` prints: path, then the reason. */
export interface GroveIssue {
  readonly path: string;
  readonly detail: string;
}

export interface GroveValidationOptions {
  /**
   * Scheduler names enabled in Grove's OperatorConfiguration. An empty `schedulerName` resolves
   * to the default backend (`default-scheduler`), which is always enabled (`validateSchedulerNames`).
   */
  readonly enabledSchedulers?: readonly string[];
}

type Json = Record<string, unknown>;

const MAX_COMBINED_RESOURCE_NAME_LENGTH = 45;
const DEFAULT_SCHEDULER = 'default-scheduler';
const STARTUP_TYPES = ['CliqueStartupTypeInOrder', 'CliqueStartupTypeAnyOrder', 'CliqueStartupTypeExplicit'];
const SHARING_SCOPES = ['AllReplicas', 'PerReplica'];
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `apivalidation.NameIsDNSSubdomain`: a lowercase RFC 1123 subdomain of at most 253 characters. */
export function isDnsSubdomain(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((part) => DNS1123_LABEL.test(part));
}
function isDnsLabel(name: string): boolean {
  return name.length > 0 && name.length <= 63 && DNS1123_LABEL.test(name);
}
/** `validation.IsQualifiedName`: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
function isQualifiedName(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1] ?? '';
  if (parts.length === 2 && !isDnsSubdomain(parts[0] ?? '')) return false;
  return name.length > 0 && name.length <= 63 && QUALIFIED_NAME.test(name);
}
/** `validation.IsValidLabelValue`: empty, or at most 63 characters of the qualified-name shape. */
function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && QUALIFIED_NAME.test(value));
}

/** `metav1validation.ValidateLabels`. */
function labelIssues(labels: unknown, path: string): GroveIssue[] {
  if (labels === undefined) return [];
  if (!isObject(labels)) return [{ path, detail: 'must be a map of strings' }];
  const issues: GroveIssue[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (!isQualifiedName(key)) issues.push({ path, detail: `label key ${JSON.stringify(key)} is not a qualified name` });
    if (typeof value !== 'string' || !isLabelValue(value)) issues.push({ path: `${path}[${key}]`, detail: `label value ${JSON.stringify(value)} is not a valid label value` });
  }
  return issues;
}

/** `apivalidation.ValidateAnnotations`: qualified keys (checked lower-cased), total size at most 256 KiB. */
function annotationIssues(annotations: unknown, path: string): GroveIssue[] {
  if (annotations === undefined) return [];
  if (!isObject(annotations)) return [{ path, detail: 'must be a map of strings' }];
  const issues: GroveIssue[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    if (!isQualifiedName(key.toLowerCase())) issues.push({ path, detail: `annotation key ${JSON.stringify(key)} is not a qualified name` });
    if (typeof value !== 'string') issues.push({ path: `${path}[${key}]`, detail: 'annotation values must be strings' });
    size += key.length + (typeof value === 'string' ? value.length : 0);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) issues.push({ path, detail: `must have at most ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  return issues;
}

/** `sliceMustHaveUniqueElements`: one Duplicate per repeated value. */
function duplicateIssues(values: readonly string[], path: string): GroveIssue[] {
  const seen = new Set<string>();
  const issues: GroveIssue[] = [];
  for (const value of values) {
    if (seen.has(value)) issues.push({ path, detail: `Duplicate value: ${JSON.stringify(value)}` });
    seen.add(value);
  }
  return issues;
}

/** Go's `time.ParseDuration`, in nanoseconds; undefined when it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (text === '0') return 0;
  if (match === null) return undefined;
  let total = 0;
  for (const part of text.replace(/^[-+]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(part[1]) * (units[part[2] ?? ''] ?? 0);
  return match[1] === '-' ? -total : total;
}

/**
 * Grove's defaulting webhook and CRD defaults (grove.md §A.5), on a copy:
 * - PCS: namespace `default`; `terminationDelay` 4h; `headlessServiceConfig`
 *   `{publishNotReadyAddresses: true}`; `cliqueStartupType` AnyOrder (CRD default);
 * - each clique: `minAvailable` from the ORIGINAL `replicas` when nil (so replicas 0 gives
 *   minAvailable 0), then `replicas` 0 -> 1; `autoScalingConfig.minReplicas` from replicas;
 *   pod spec `restartPolicy: Always`, `terminationGracePeriodSeconds: 30`;
 * - each scaling group: `replicas` 1 and `minAvailable` 1 when nil (CRD defaults);
 *   `scaleConfig.minReplicas` from replicas. Pure.
 */
export function groveDefault(pcs: Json): Json {
  const copy = structuredClone(pcs);
  const metadata = isObject(copy['metadata']) ? copy['metadata'] : (copy['metadata'] = {});
  if (metadata['namespace'] === undefined || metadata['namespace'] === '') metadata['namespace'] = 'default';
  const spec = isObject(copy['spec']) ? copy['spec'] : (copy['spec'] = {});
  if (spec['replicas'] === undefined) spec['replicas'] = 0;
  const template = isObject(spec['template']) ? spec['template'] : (spec['template'] = {});
  if (template['terminationDelay'] === undefined) template['terminationDelay'] = '4h';
  template['headlessServiceConfig'] = isObject(template['headlessServiceConfig']) ? { publishNotReadyAddresses: true, ...template['headlessServiceConfig'] } : { publishNotReadyAddresses: true };
  if (template['cliqueStartupType'] === undefined) template['cliqueStartupType'] = 'CliqueStartupTypeAnyOrder';
  for (const clique of objects(template['cliques'])) {
    const cliqueSpec = isObject(clique['spec']) ? clique['spec'] : (clique['spec'] = {});
    const original = typeof cliqueSpec['replicas'] === 'number' ? cliqueSpec['replicas'] : 0;
    if (cliqueSpec['minAvailable'] === undefined || cliqueSpec['minAvailable'] === null) cliqueSpec['minAvailable'] = original;
    if (original === 0) cliqueSpec['replicas'] = 1;
    const scale = cliqueSpec['autoScalingConfig'];
    if (isObject(scale) && scale['minReplicas'] === undefined) scale['minReplicas'] = cliqueSpec['replicas'];
    const podSpec = isObject(cliqueSpec['podSpec']) ? cliqueSpec['podSpec'] : (cliqueSpec['podSpec'] = {});
    if (podSpec['restartPolicy'] === undefined) podSpec['restartPolicy'] = 'Always';
    if (podSpec['terminationGracePeriodSeconds'] === undefined) podSpec['terminationGracePeriodSeconds'] = 30;
  }
  for (const group of objects(template['podCliqueScalingGroups'])) {
    if (group['replicas'] === undefined || group['replicas'] === null) group['replicas'] = 1;
    if (group['minAvailable'] === undefined || group['minAvailable'] === null) group['minAvailable'] = 1;
    const scale = group['scaleConfig'];
    if (isObject(scale) && scale['minReplicas'] === undefined) scale['minReplicas'] = group['replicas'];
  }
  return copy;
}

/**
 * Every reason Grove refuses to CREATE this PodCliqueSet: its defaulting ({@link groveDefault})
 * applied first, then `pcsValidator.validate` (and the topology-name resolution of
 * `validateTopologyConstraintsOnCreate`). Empty when Grove admits it. Pure.
 */
export function groveCreateIssues(pcs: Json, options: GroveValidationOptions = {}): GroveIssue[] {
  const defaulted = groveDefault(pcs);
  const metadata = defaulted['metadata'] as Json;
  const spec = defaulted['spec'] as Json;
  const template = spec['template'] as Json;
  const pcsName = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  const issues: GroveIssue[] = [];

  // validate: apivalidation.ValidateObjectMeta(requiresNamespace, NameIsDNSSubdomain).
  if (!isDnsSubdomain(pcsName)) issues.push({ path: 'metadata.name', detail: 'must be a DNS subdomain' });
  if (!isDnsLabel(String(metadata['namespace']))) issues.push({ path: 'metadata.namespace', detail: 'must be a DNS label' });
  issues.push(...labelIssues(metadata['labels'], 'metadata.labels'), ...annotationIssues(metadata['annotations'], 'metadata.annotations'));
  const owners = objects(metadata['ownerReferences']);
  owners.forEach((owner, i) => {
    for (const key of ['apiVersion', 'kind', 'name', 'uid']) if (typeof owner[key] !== 'string' || owner[key] === '') issues.push({ path: `metadata.ownerReferences[${i}].${key}`, detail: 'Required value' });
  });
  if (owners.filter((o) => o['controller'] === true).length > 1) issues.push({ path: 'metadata.ownerReferences', detail: 'Only one reference can have Controller set to true' });

  // validatePodCliqueSetSpec: replicas non-negative.
  const replicas = spec['replicas'];
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) issues.push({ path: 'spec.replicas', detail: 'must be greater than or equal to 0' });

  // validatePodCliqueSetTemplateSpec.
  const startupType = template['cliqueStartupType'];
  if (typeof startupType !== 'string' || !STARTUP_TYPES.includes(startupType)) issues.push({ path: 'spec.template.cliqueStartupType', detail: `Unsupported value: ${JSON.stringify(startupType)}` });
  const explicit = startupType === 'CliqueStartupTypeExplicit';
  const claimTemplates = objects(template['resourceClaimTemplates']);
  claimTemplates.forEach((rct, i) => {
    if (typeof rct['name'] !== 'string' || rct['name'] === '') issues.push({ path: `spec.template.resourceClaimTemplates[${i}].name`, detail: 'template name is required' });
    const requests = (((rct['templateSpec'] as Json | undefined)?.['spec'] as Json | undefined)?.['devices'] as Json | undefined)?.['requests'];
    if (!Array.isArray(requests) || requests.length === 0) issues.push({ path: `spec.template.resourceClaimTemplates[${i}].templateSpec.spec.devices.requests`, detail: 'at least one device request is required' });
  });
  issues.push(...duplicateIssues(claimTemplates.map((r) => String(r['name'])), 'spec.template.resourceClaimTemplates.name'));
  const claimTemplateNames = new Set(claimTemplates.map((r) => String(r['name'])));

  const cliques = objects(template['cliques']);
  const groups = objects(template['podCliqueScalingGroups']);
  const cliqueNames = cliques.map((c) => String(c['name'] ?? ''));
  const groupNames = groups.map((g) => String(g['name'] ?? ''));
  issues.push(...pcsResourceSharingIssues(template['resourceSharing'], claimTemplateNames, new Set(cliqueNames), new Set(groupNames)));

  // validatePodCliqueTemplates.
  if (cliques.length === 0) issues.push({ path: 'spec.template.cliques', detail: 'at least one PodClique must be defined' });
  const grouped = new Set(groups.flatMap((g) => strings(g['cliqueNames'])));
  const schedulerNames: string[] = [];
  cliques.forEach((clique, i) => {
    const path = `spec.template.cliques[${i}]`;
    const name = typeof clique['name'] === 'string' ? clique['name'] : '';
    const cliqueSpec = isObject(clique['spec']) ? clique['spec'] : {};
    if (name === '') issues.push({ path: `${path}.name`, detail: 'field is required' });
    else {
      if (!isDnsSubdomain(name)) issues.push({ path: `${path}.name`, detail: 'invalid PodCliqueTemplateSpec name, must be a valid DNS subdomain' });
      if (!grouped.has(name)) issues.push(...podNameIssues(pcsName, '', name, `${path}.name`));
    }
    issues.push(...labelIssues(clique['labels'], `${path}.labels`), ...annotationIssues(clique['annotations'], `${path}.annotations`));
    issues.push(...resourceSharingIssues(objects(clique['resourceSharing']), claimTemplateNames, `${path}.resourceSharing`));
    issues.push(...podCliqueSpecIssues(name, cliqueSpec, explicit, `${path}.spec`));
    const podSpec = isObject(cliqueSpec['podSpec']) ? cliqueSpec['podSpec'] : {};
    schedulerNames.push(typeof podSpec['schedulerName'] === 'string' ? podSpec['schedulerName'] : '');
  });
  issues.push(...duplicateIssues(cliqueNames, 'spec.template.cliques.name'));
  issues.push(...duplicateIssues(cliques.map((c) => String((c['spec'] as Json | undefined)?.['roleName'] ?? '')), 'spec.template.cliques.roleName'));
  // validateSchedulerNames: one resolved scheduler for every pod, and it is enabled.
  const resolved = [...new Set(schedulerNames.map((n) => (n === '' ? DEFAULT_SCHEDULER : n)))];
  if (resolved.length > 1) issues.push({ path: 'spec.template.cliques.spec.podSpec.schedulerName', detail: `the schedulerName for all pods have to be the same (${resolved.join(', ')})` });
  const enabled = new Set([DEFAULT_SCHEDULER, ...(options.enabledSchedulers ?? [])]);
  if (resolved[0] !== undefined && !enabled.has(resolved[0])) issues.push({ path: 'spec.template.cliques.spec.podSpec.schedulerName', detail: 'schedulerName must be an enabled scheduler backend; this scheduler is not enabled in OperatorConfiguration' });
  if (explicit) issues.push(...cliqueDependencyIssues(cliques));

  // validatePodCliqueScalingGroupConfigs.
  const known = new Set(cliqueNames);
  groups.forEach((group, i) => {
    const path = `spec.template.podCliqueScalingGroups[${i}]`;
    const name = typeof group['name'] === 'string' ? group['name'] : '';
    if (!isDnsSubdomain(name)) issues.push({ path: `${path}.name`, detail: 'invalid PodCliqueScalingGroupConfig name, must be a valid DNS subdomain' });
    const members = strings(group['cliqueNames']);
    const unknown = [...new Set(members)].filter((m) => !known.has(m));
    if (unknown.length > 0) issues.push({ path: `${path}.cliqueNames`, detail: `unidentified PodClique names found: ${unknown.join(',')}` });
    members.forEach((member, j) => issues.push(...podNameIssues(pcsName, name, member, `${path}.cliqueNames[${j}].name`)));
    const groupReplicas = group['replicas'];
    const minAvailable = group['minAvailable'];
    if (typeof groupReplicas === 'number' && groupReplicas <= 0) issues.push({ path: `${path}.replicas`, detail: `Invalid value: ${groupReplicas}: must be greater than 0` });
    if (typeof minAvailable === 'number' && minAvailable <= 0) issues.push({ path: `${path}.minAvailable`, detail: `Invalid value: ${minAvailable}: must be greater than 0` });
    if (typeof groupReplicas === 'number' && typeof minAvailable === 'number' && minAvailable > groupReplicas) {
      issues.push({ path: `${path}.minAvailable`, detail: `Invalid value: ${minAvailable}: minAvailable must not be greater than replicas` });
    }
    const scale = group['scaleConfig'];
    if (isObject(scale) && typeof scale['minReplicas'] === 'number' && typeof minAvailable === 'number' && scale['minReplicas'] < minAvailable) {
      issues.push({ path: `${path}.scaleConfig.minReplicas`, detail: 'scaleConfig.minReplicas must be greater than or equal to minAvailable' });
    }
    const sharing = objects(group['resourceSharing']);
    issues.push(...resourceSharingIssues(sharing, claimTemplateNames, `${path}.resourceSharing`));
    const memberSet = new Set(members);
    sharing.forEach((ref, j) => {
      if (!isObject(ref['filter'])) return;
      const children = strings(ref['filter']['childCliqueNames']);
      if (children.length === 0) issues.push({ path: `${path}.resourceSharing[${j}].filter`, detail: 'filter must specify at least one childCliqueNames entry' });
      children.forEach((child, k) => {
        if (!memberSet.has(child)) issues.push({ path: `${path}.resourceSharing[${j}].filter.childCliqueNames[${k}]`, detail: `Not found: ${JSON.stringify(child)}` });
      });
    });
  });
  issues.push(...duplicateIssues(groupNames, 'spec.template.podCliqueScalingGroups.name'));
  issues.push(...duplicateIssues(groups.flatMap((g) => strings(g['cliqueNames'])), 'spec.template.podCliqueScalingGroups.cliqueNames'));
  for (const clique of cliques) {
    if (grouped.has(String(clique['name'])) && (clique['spec'] as Json | undefined)?.['autoScalingConfig'] !== undefined) {
      issues.push({ path: 'spec.template.podCliqueScalingGroups', detail: `${String(clique['name'])}: AutoScalingConfig is not allowed to be defined for PodClique that is part of scaling group` });
    }
  }

  // validateTerminationDelay.
  const delay = typeof template['terminationDelay'] === 'string' ? parseGoDuration(template['terminationDelay']) : undefined;
  if (delay === undefined) issues.push({ path: 'spec.template.terminationDelay', detail: `invalid duration ${JSON.stringify(template['terminationDelay'])}` });
  else if (delay <= 0) issues.push({ path: 'spec.template.terminationDelay', detail: 'terminationDelay must be greater than 0' });

  issues.push(...topologyNameIssues(template, groups, cliques));
  issues.push(...generatedResourceClaimNameIssues(pcsName, typeof replicas === 'number' ? replicas : 0, template, groups, cliques));
  return issues;
}

/** `maxReplicaIndex`: the largest replica index of `replicas` replicas (0 for 0 or 1). */
function maxReplicaIndex(replicas: number): number {
  return replicas <= 1 ? 0 : replicas - 1;
}

/** `maxConfiguredReplicas`: the template's replicas, or the autoscaler's maximum when larger. */
function maxConfiguredReplicas(replicas: unknown, scaleConfig: unknown): number {
  const base = typeof replicas === 'number' ? replicas : 0;
  const max = isObject(scaleConfig) && typeof scaleConfig['maxReplicas'] === 'number' ? scaleConfig['maxReplicas'] : 0;
  return Math.max(base, max);
}

/**
 * `generatedResourceClaimNameValidator.validate` (generatednames.go): for every `resourceSharing`
 * entry of the PodCliqueSet, of a scaling group and of a clique, the ResourceClaim name Grove
 * generates (`<owner>-all-<name>` for AllReplicas, `<owner>-<max replica index>-<name>` for
 * PerReplica; owner the PodCliqueSet, `<pcs>-<i>-<group>` or the PodClique name) must be a DNS-1123
 * label, since it becomes `pod.spec.resourceClaims[].name`.
 */
function generatedResourceClaimNameIssues(pcsName: string, pcsReplicas: number, template: Json, groups: readonly Json[], cliques: readonly Json[]): GroveIssue[] {
  const issues: GroveIssue[] = [];
  const pcsIndex = maxReplicaIndex(pcsReplicas);
  const check = (owner: string, ref: Json, limit: number, path: string, description: string): void => {
    const name = typeof ref['name'] === 'string' ? ref['name'] : '';
    if (name === '') return;
    const generated = ref['scope'] === 'AllReplicas' ? `${owner}-all-${name}` : ref['scope'] === 'PerReplica' ? `${owner}-${maxReplicaIndex(limit)}-${name}` : undefined;
    if (generated === undefined || isDnsLabel(generated)) return;
    issues.push({ path, detail: `generated ResourceClaim name ${JSON.stringify(generated)} for ${description} must be a valid DNS label because it is used as pod.spec.resourceClaims[].name` });
  };
  objects(template['resourceSharing']).forEach((ref, i) => check(pcsName, ref, pcsReplicas, `spec.template.resourceSharing[${i}].name`, 'PodCliqueSet'));
  const groupsOfClique = new Map<string, number[]>();
  groups.forEach((group, i) => {
    const groupName = String(group['name'] ?? '');
    const owner = `${pcsName}-${pcsIndex}-${groupName}`;
    const limit = maxConfiguredReplicas(typeof group['replicas'] === 'number' ? group['replicas'] : 1, group['scaleConfig']);
    objects(group['resourceSharing']).forEach((ref, j) => check(owner, ref, limit, `spec.template.podCliqueScalingGroups[${i}].resourceSharing[${j}].name`, `PodCliqueScalingGroup ${JSON.stringify(groupName)}`));
    for (const member of strings(group['cliqueNames'])) groupsOfClique.set(member, [...(groupsOfClique.get(member) ?? []), i]);
  });
  cliques.forEach((clique, i) => {
    const cliqueName = String(clique['name'] ?? '');
    const cliqueSpec = isObject(clique['spec']) ? clique['spec'] : {};
    const limit = maxConfiguredReplicas(cliqueSpec['replicas'], cliqueSpec['autoScalingConfig']);
    const refs = objects(clique['resourceSharing']);
    const memberOf = groupsOfClique.get(cliqueName) ?? [];
    if (memberOf.length === 0) {
      refs.forEach((ref, j) => check(`${pcsName}-${pcsIndex}-${cliqueName}`, ref, limit, `spec.template.cliques[${i}].resourceSharing[${j}].name`, `standalone PodClique ${JSON.stringify(cliqueName)}`));
      return;
    }
    for (const index of memberOf) {
      const group = groups[index] ?? {};
      const groupName = String(group['name'] ?? '');
      const groupLimit = maxConfiguredReplicas(typeof group['replicas'] === 'number' ? group['replicas'] : 1, group['scaleConfig']);
      const owner = `${pcsName}-${pcsIndex}-${groupName}-${maxReplicaIndex(groupLimit)}-${cliqueName}`;
      refs.forEach((ref, j) => check(owner, ref, limit, `spec.template.cliques[${i}].resourceSharing[${j}].name`, `PodClique ${JSON.stringify(cliqueName)} in PodCliqueScalingGroup ${JSON.stringify(groupName)}`));
    }
  });
  return issues;
}

/** `validatePodNameConstraints`: pcs + (pcsg) + pclq names at most 45 characters. */
function podNameIssues(pcsName: string, pcsgName: string, pclqName: string, path: string): GroveIssue[] {
  const length = pcsName.length + pclqName.length + pcsgName.length;
  return length > MAX_COMBINED_RESOURCE_NAME_LENGTH ? [{ path, detail: `combined resource name length ${length} exceeds 45-character limit required for pod naming` }] : [];
}

/** `validatePodCliqueSpec` (and `validateScaleConfig`, `validatePodSpec` on create). */
function podCliqueSpecIssues(name: string, spec: Json, explicit: boolean, path: string): GroveIssue[] {
  const issues: GroveIssue[] = [];
  const replicas = typeof spec['replicas'] === 'number' ? spec['replicas'] : 0;
  if (replicas <= 0) issues.push({ path: `${path}.replicas`, detail: `Invalid value: ${replicas}: must be greater than 0` });
  const minAvailable = spec['minAvailable'];
  if (typeof minAvailable !== 'number') issues.push({ path: `${path}.minAvailable`, detail: 'field is required' });
  else {
    if (minAvailable <= 0) issues.push({ path: `${path}.minAvailable`, detail: `Invalid value: ${minAvailable}: must be greater than 0` });
    if (minAvailable > replicas) issues.push({ path: `${path}.minAvailable`, detail: `Invalid value: ${minAvailable}: minAvailable must not be greater than replicas` });
  }
  const startsAfter = strings(spec['startsAfter']);
  if (explicit && startsAfter.length > 0) {
    for (const dep of startsAfter) {
      if (dep === '') issues.push({ path: `${path}.startsAfter`, detail: 'clique dependency must not be empty' });
      if (dep === name) issues.push({ path: `${path}.startsAfter`, detail: 'clique dependency cannot refer to itself' });
    }
    issues.push(...duplicateIssues(startsAfter, `${path}.startsAfter`));
  }
  const scale = spec['autoScalingConfig'];
  if (isObject(scale)) {
    const minReplicas = scale['minReplicas'];
    const maxReplicas = typeof scale['maxReplicas'] === 'number' ? scale['maxReplicas'] : 0;
    if (typeof minReplicas !== 'number') issues.push({ path: `${path}.autoScalingConfig.minReplicas`, detail: 'field is required' });
    else {
      if (typeof minAvailable === 'number' && minReplicas < minAvailable) issues.push({ path: `${path}.autoScalingConfig.minReplicas`, detail: 'must be greater than or equal to podCliqueSpec.minAvailable' });
      if (maxReplicas < minReplicas) issues.push({ path: `${path}.autoScalingConfig.maxReplicas`, detail: 'must be greater than or equal to podCliqueSpec.minReplicas' });
    }
    if (maxReplicas < replicas) issues.push({ path: `${path}.autoScalingConfig.maxReplicas`, detail: 'must be greater than or equal to replicas' });
  }
  const podSpec = isObject(spec['podSpec']) ? spec['podSpec'] : {};
  const restartPolicy = podSpec['restartPolicy'];
  if (restartPolicy !== undefined && restartPolicy !== '' && restartPolicy !== 'Always' && restartPolicy !== 'Never') issues.push({ path: `${path}.podSpec.restartPolicy`, detail: `Unsupported value: ${JSON.stringify(restartPolicy)}` });
  // On create: topologySpreadConstraints and nodeName must not be set.
  if (podSpec['topologySpreadConstraints'] !== undefined && podSpec['topologySpreadConstraints'] !== null) issues.push({ path: `${path}.podSpec.spec.topologySpreadConstraints`, detail: 'must not be set' });
  if (typeof podSpec['nodeName'] === 'string' && podSpec['nodeName'] !== '') issues.push({ path: `${path}.podSpec.spec.nodeName`, detail: 'must not be set' });
  for (const kind of ['containers', 'initContainers']) {
    objects(podSpec[kind]).forEach((container, i) => {
      const env = objects(container['env']);
      env.forEach((variable, j) => {
        const envName = typeof variable['name'] === 'string' ? variable['name'] : '';
        if (!ENV_VAR_NAME.test(envName)) issues.push({ path: `${path}.podSpec.spec.${kind}[${i}].env[${j}].name`, detail: `Invalid value: ${JSON.stringify(envName)}: a valid environment variable name` });
      });
      issues.push(...duplicateIssues(env.map((v) => String(v['name'])), `${path}.podSpec.spec.${kind}[${i}].env`));
    });
  }
  return issues;
}

/** `validateResourceSharingSpecs`: names required and unique, no namespace on an internal template, scope known. */
function resourceSharingIssues(refs: readonly Json[], claimTemplateNames: ReadonlySet<string>, path: string): GroveIssue[] {
  const issues: GroveIssue[] = [];
  const seen = new Set<string>();
  refs.forEach((ref, i) => {
    const name = typeof ref['name'] === 'string' ? ref['name'] : '';
    if (name === '') issues.push({ path: `${path}[${i}].name`, detail: 'reference name is required' });
    if (name !== '' && seen.has(name)) issues.push({ path: `${path}[${i}].name`, detail: `Duplicate value: ${JSON.stringify(name)}` });
    seen.add(name);
    const namespace = typeof ref['namespace'] === 'string' ? ref['namespace'] : '';
    if (namespace !== '' && name !== '' && claimTemplateNames.has(name)) issues.push({ path: `${path}[${i}].namespace`, detail: 'namespace must be empty when name matches an internal resourceClaimTemplate' });
    if (typeof ref['scope'] !== 'string' || !SHARING_SCOPES.includes(ref['scope'])) issues.push({ path: `${path}[${i}].scope`, detail: `Unsupported value: ${JSON.stringify(ref['scope'])}` });
  });
  return issues;
}

/** `validatePCSResourceSharing`: the common checks, and filters that name existing children. */
function pcsResourceSharingIssues(value: unknown, claimTemplateNames: ReadonlySet<string>, cliqueNames: ReadonlySet<string>, groupNames: ReadonlySet<string>): GroveIssue[] {
  const refs = objects(value);
  const path = 'spec.template.resourceSharing';
  const issues = resourceSharingIssues(refs, claimTemplateNames, path);
  refs.forEach((ref, i) => {
    if (!isObject(ref['filter'])) return;
    const cliques = strings(ref['filter']['childCliqueNames']);
    const groups = strings(ref['filter']['childScalingGroupNames']);
    if (cliques.length === 0 && groups.length === 0) issues.push({ path: `${path}[${i}].filter`, detail: 'filter must specify at least one childCliqueNames or childScalingGroupNames entry' });
    cliques.forEach((c, j) => (cliqueNames.has(c) ? undefined : issues.push({ path: `${path}[${i}].filter.childCliqueNames[${j}]`, detail: `Not found: ${JSON.stringify(c)}` })));
    groups.forEach((g, j) => (groupNames.has(g) ? undefined : issues.push({ path: `${path}[${i}].filter.childScalingGroupNames[${j}]`, detail: `Not found: ${JSON.stringify(g)}` })));
  });
  return issues;
}

/** `validateCliqueDependencies`: every startsAfter names a clique, and the graph has no cycle. */
function cliqueDependencyIssues(cliques: readonly Json[]): GroveIssue[] {
  const issues: GroveIssue[] = [];
  const names = new Set(cliques.map((c) => String(c['name'])));
  const edges = new Map(cliques.map((c) => [String(c['name']), strings((c['spec'] as Json | undefined)?.['startsAfter'])]));
  const unknown = [...new Set([...edges.values()].flat())].filter((d) => !names.has(d));
  if (unknown.length > 0) issues.push({ path: 'spec.template.cliques.startsAfter', detail: `unknown clique names found, all clique dependencies must be defined as cliques: ${unknown.join(',')}` });
  const state = new Map<string, 'visiting' | 'done'>();
  let cyclic = false;
  const visit = (node: string): void => {
    if (state.get(node) === 'done' || cyclic) return;
    if (state.get(node) === 'visiting') {
      cyclic = true;
      return;
    }
    state.set(node, 'visiting');
    for (const next of edges.get(node) ?? []) if (names.has(next)) visit(next);
    state.set(node, 'done');
  };
  for (const name of names) visit(name);
  if (cyclic) issues.push({ path: 'spec.template.cliques', detail: 'clique must not have circular dependencies' });
  return issues;
}

/**
 * `resolveEffectiveTopologyNameFieldErrors` (the part that needs no ClusterTopologyBinding): a
 * constraint without `topologyName` must inherit one (PCS -> scaling group -> clique), and every
 * effective `topologyName` in the PodCliqueSet must be the same.
 */
function topologyNameIssues(template: Json, groups: readonly Json[], cliques: readonly Json[]): GroveIssue[] {
  const issues: GroveIssue[] = [];
  const resolvedNames = new Set<string>();
  const resolve = (tc: unknown, path: string, inherited: string | undefined): string | undefined => {
    if (!isObject(tc)) return undefined;
    const own = typeof tc['topologyName'] === 'string' ? tc['topologyName'] : '';
    if (own === '' && inherited === undefined) {
      issues.push({ path: `${path}.topologyName`, detail: 'topologyName is required when topologyConstraint is set and cannot be inherited' });
      return undefined;
    }
    const effective = own === '' ? (inherited as string) : own;
    resolvedNames.add(effective);
    return effective;
  };
  const pcsName = resolve(template['topologyConstraint'], 'spec.template.topologyConstraint', undefined);
  const byClique = new Map<string, string>();
  groups.forEach((group, i) => {
    const name = resolve(group['topologyConstraint'], `spec.template.podCliqueScalingGroups[${i}].topologyConstraint`, pcsName);
    if (name !== undefined) for (const member of strings(group['cliqueNames'])) if (!byClique.has(member)) byClique.set(member, name);
  });
  cliques.forEach((clique, i) => {
    resolve(clique['topologyConstraint'], `spec.template.cliques[${i}].topologyConstraint`, byClique.get(String(clique['name'])) ?? pcsName);
  });
  if (resolvedNames.size > 1) issues.push({ path: 'spec.template', detail: 'all topologyConstraint.topologyName values within a PodCliqueSet must match in the current implementation' });
  return issues;
}

/**
 * The UPDATE rules a re-render can hit (`validatePodCliqueSetTemplateSpecUpdate`, grove.md §A.6
 * "On update"): the clique set, per clique `roleName`, `minAvailable`, `startsAfter` and
 * `podSpec.schedulerName`; `cliqueStartupType`; the scaling-group set and per group
 * `cliqueNames` and `minAvailable`. Both objects are defaulted first. Pure.
 */
export function groveUpdateIssues(next: Json, old: Json): GroveIssue[] {
  const a = (groveDefault(next)['spec'] as Json)['template'] as Json;
  const b = (groveDefault(old)['spec'] as Json)['template'] as Json;
  const issues: GroveIssue[] = [];
  const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
  if (!same(a['cliqueStartupType'], b['cliqueStartupType'])) issues.push({ path: 'spec.template.cliqueStartupType', detail: 'field is immutable' });
  const oldCliques = new Map(objects(b['cliques']).map((c) => [String(c['name']), c['spec'] as Json]));
  const newCliques = objects(a['cliques']);
  if (newCliques.length !== oldCliques.size) issues.push({ path: 'spec.template.cliques', detail: 'not allowed to change clique composition' });
  for (const clique of newCliques) {
    const before = oldCliques.get(String(clique['name']));
    if (before === undefined) {
      issues.push({ path: 'spec.template.cliques.name', detail: `not allowed to change clique composition, new clique name '${String(clique['name'])}' is not allowed` });
      continue;
    }
    const after = clique['spec'] as Json;
    for (const key of ['roleName', 'minAvailable', 'startsAfter']) if (!same(after[key], before[key])) issues.push({ path: `spec.template.cliques.spec.${key}`, detail: 'field is immutable' });
    if (!same((after['podSpec'] as Json)['schedulerName'], (before['podSpec'] as Json)['schedulerName'])) issues.push({ path: 'spec.template.cliques.spec.podSpec.schedulerName', detail: 'field is immutable' });
  }
  const oldGroups = new Map(objects(b['podCliqueScalingGroups']).map((g) => [String(g['name']), g]));
  const newGroups = objects(a['podCliqueScalingGroups']);
  if (newGroups.length !== oldGroups.size) issues.push({ path: 'spec.template.podCliqueScalingGroups', detail: 'not allowed to add or remove PodCliqueScalingGroupConfigs' });
  else {
    for (const group of newGroups) {
      const before = oldGroups.get(String(group['name']));
      if (before === undefined) {
        issues.push({ path: 'spec.template.podCliqueScalingGroups.name', detail: `not allowed to change scaling group composition, new scaling group name '${String(group['name'])}' is not allowed` });
        continue;
      }
      for (const key of ['cliqueNames', 'minAvailable']) if (!same(group[key], before[key])) issues.push({ path: `spec.template.podCliqueScalingGroups.${key}`, detail: 'field is immutable' });
    }
  }
  return issues;
}
