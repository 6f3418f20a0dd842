import { describe, expect, it } from 'vitest';
import type { Dgd } from '../../api/index.js';
import { deepFreeze } from '../../../test/support/builders.js';
import { dns1123LabelProblems } from '../dgd/names.js';
import type { LpxBuild } from './build.js';
import { validateLpxMaterialization, validateLpxReplicaCount, validateMaterializedPodHostname, validateModelAnnotation } from './materialization.js';
import { deriveLpxWorkloads, resolveLpxWorkloads } from './workloads.js';

// Upstream materialization.go @274172b2: maxWorkloadReplicas = 2496 (lpx.md §1.1 "Up to 2496 for hybrid and LPU-only engines").
describe('validateLpxReplicaCount (upstream ValidateReplicaCount: "LPX replica count must be between 0 and %d")', () => {
  it.each([
    { name: 'zero (omitted replicas are counted as 1 by the caller)', replicas: 0, want: undefined },
    { name: 'one', replicas: 1, want: undefined },
    { name: '2496, the largest', replicas: 2496, want: undefined },
    { name: '2497', replicas: 2497, want: 'LPX replica count must be between 0 and 2496' },
  ])('$name', ({ replicas, want }) => {
    expect(validateLpxReplicaCount(replicas)).toEqual(want);
  });
});

// apimachinery validation.IsDNS1123Label (DNS1123LabelMaxLength 63; MaxLenError; RegexError with its examples).
describe('dns1123LabelProblems (apimachinery IsDNS1123Label)', () => {
  it.each([
    { name: '63 characters is a label', value: 'a'.repeat(63), want: [] },
    { name: '64 characters: "must be no more than 63 characters"', value: 'a'.repeat(64), want: ['must be no more than 63 characters'] },
    { name: 'a valid subdomain with dots: "must not contain dots"', value: 'a.b', want: ['must not contain dots'] },
    {
      name: 'upper case: the RFC 1123 regex message',
      value: 'Agent-0',
      want: ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
    },
  ])('$name', ({ value, want }) => {
    expect(dns1123LabelProblems(value)).toEqual(want);
  });
});

describe('validateMaterializedPodHostname (upstream validatePodHostname: "materialized %s Pod hostname %q is invalid: %s")', () => {
  it('a hostname within 63 characters passes; one over it names the role, the hostname and the problem', () => {
    expect(validateMaterializedPodHostname('Agent', 'g-1a2b-0-lpx-0-agt', 3)).toBeUndefined();
    const clique = `${'p'.repeat(50)}-0-lpx-0-agt`;
    expect(validateMaterializedPodHostname('Agent', clique, 15)).toBe(`materialized Agent Pod hostname "${clique}-15" is invalid: must be no more than 63 characters`);
    expect(validateMaterializedPodHostname('conductor', clique, 0)).toBe(`materialized conductor Pod hostname "${clique}-0" is invalid: must be no more than 63 characters`);
  });
});

// Upstream scheduler API types.go: MaxModelAnnotationBytes = 261054, ValidateModelAnnotation (lpx.md §3.1).
describe('validateModelAnnotation (upstream ValidateModelAnnotation; "…/model: ≤ 261054 UTF-8 bytes, no boundary whitespace")', () => {
  it.each([
    { name: 'our model names are valid', value: 'default', want: undefined },
    { name: 'empty', value: '', want: 'model annotation must not be empty' },
    { name: '261054 bytes is the largest', value: 'm'.repeat(261_054), want: undefined },
    { name: '261055 bytes', value: 'm'.repeat(261_055), want: 'model annotation contains 261055 UTF-8 bytes; at most 261054 are supported' },
    { name: 'counted in UTF-8 bytes, not characters (é is 2 bytes)', value: 'é'.repeat(130_528), want: 'model annotation contains 261056 UTF-8 bytes; at most 261054 are supported' },
    { name: 'a leading space', value: ' target', want: 'model annotation " target" has noncanonical boundary whitespace' },
    { name: 'a trailing ideographic space (U+3000)', value: 'target\u3000', want: 'model annotation "target\u3000" has noncanonical boundary whitespace' },
    { name: 'inner whitespace is allowed', value: 'draft 0', want: undefined },
  ])('$name', ({ value, want }) => {
    expect(validateModelAnnotation(value)).toEqual(want);
  });
});

describe('validateLpxMaterialization (upstream PlanNodeLocalMaterialization -> ValidateReplicaCount), reported as the LPXGD\'s Failed message naming the field', () => {
  const role = (name: string) => ({ name, podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1` }] } } });
  const dgd = (engine: Record<string, unknown>): Dgd =>
    deepFreeze({
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'g', namespace: 'ns' },
      spec: { components: [{ name: 'frontend', type: 'frontend' }, { name: 'lpu', type: 'lpx', lpx: { buildId: 'b' }, roles: [role('conductor'), role('agent')], ...engine }] as Dgd['spec']['components'] },
    });
  const PCS = 'g-1a2b';

  it.each([
    { name: 'omitted replicas count as one', engine: {}, want: undefined },
    { name: '2496 replicas', engine: { replicas: 2496 }, want: undefined },
    { name: '2497 replicas: at the serving component\'s replicas', engine: { replicas: 2497 }, want: 'spec.components[1].replicas: Invalid value: 2497: LPX replica count must be between 0 and 2496' },
  ])('$name', ({ engine, want }) => {
    const graph = dgd(engine);
    expect(validateLpxMaterialization(graph, PCS, resolveLpxWorkloads(graph))).toEqual(want);
  });

  it('the conductor of an LPU-only engine: its pod 0 at the last replica, at the conductor role', () => {
    const graph = dgd({ replicas: 10 });
    const pcsName = 'p'.repeat(49);
    // <pcs>-0-lpx-9-cond-0 is 49 + 15 = 64 characters (the Agent's <pcs>-0-lpx-9-agt-0 is 63).
    expect(validateLpxMaterialization(graph, pcsName, resolveLpxWorkloads(graph))).toBe(`spec.components[1].roles[0]: Invalid value: materialized conductor Pod hostname "${pcsName}-0-lpx-9-cond-0" is invalid: must be no more than 63 characters`);
  });

  it('the last Agent pod of the compiled count at the last replica, at the agent role; a hybrid Cyborg conductor is not checked (upstream checks ConductorTemplate only)', () => {
    // A hybrid conductor (Cyborg) needs a GPU (upstream EffectiveCyborgGPUCount).
    const gpu = { 'nvidia.com/gpu': '1' };
    const cyborg = { name: 'conductor', podTemplate: { spec: { containers: [{ name: 'main', image: 'lpx-conductor:1', resources: { limits: gpu, requests: gpu } }] } } };
    const graph = dgd({ replicas: 10, roles: [cyborg, role('agent')] });
    // A hybrid build of one 32-chip partition: 4 Agent pods per engine (xtShape c32).
    const build: LpxBuild = {
      path: 'file:///models/b', family: 'xt8888', compilationMode: 'lpx',
      partitions: [{ sourcePartitionId: 0, partPath: 'part-0', topology: { raw: 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA', chipCount: 32, nodeCount: 4 }, hxExtent: undefined }],
      selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined,
    };
    const derived = deriveLpxWorkloads(graph, resolveLpxWorkloads(graph), new Map([['lpu', { build, buildId: 'b' }]]));
    if (!derived.ok) throw new Error(derived.error);
    // <pcs>-0-lpx-9-agt-3 is 14 characters after the name, <pcs>-0-lpx-9-cond-0 15.
    const pcsName = 'p'.repeat(50);
    expect(validateLpxMaterialization(graph, pcsName, derived.value)).toBe(`spec.components[1].roles[1]: Invalid value: materialized Agent Pod hostname "${pcsName}-0-lpx-9-agt-3" is invalid: must be no more than 63 characters`);
    // 49: the Agent hostname is 63; the Cyborg conductor's would be 64, and is not checked.
    expect(validateLpxMaterialization(graph, 'p'.repeat(49), derived.value)).toBeUndefined();
  });

  it('with our names (the LPX PodCliqueSet at most 31 characters) an admitted graph at 2496 replicas always materializes', () => {
    const graph = dgd({ replicas: 2496 });
    expect(validateLpxMaterialization(graph, 'p'.repeat(31), resolveLpxWorkloads(graph))).toBeUndefined();
  });
});
