/**
 * The DGD admission table: one row per rule and edge of the reference, each run through the
 * chain the API server runs (our CRD schema, the mutating webhook, the schema again, the
 * validating webhook; see ./admission-chain.ts), asserting allowed or denied, every issue
 * (`<path>: <type>: [<value>: ]<detail>`), every warning and, where the row is about
 * defaulting, the JSON Patch.
 *
 * Row names quote the reference (dgd-reference.txt) or name the upstream rule they pin
 * (upstream-notes/dgd.md §3, lpx.md §1.3); `reason` gives the source.
 */
import { describe, expect, it } from 'vitest';
import {
  aComponent,
  aDgd,
  admitThroughChain,
  anAlphaDgd,
  anAlphaService,
  anLpxComponent,
  anLpxDgd,
  anOverride,
  aPodTemplate,
  edit,
  GROVE,
  ORIGIN,
  PROVIDER,
  STAMP_PATCH,
  STRATEGY,
  type Obj,
} from './admission-chain.js';

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly object: Obj; readonly old?: Obj; readonly lpxEnabled?: boolean };
  readonly want: {
    readonly issues: readonly string[];
    readonly warnings: readonly string[];
    /** Where a denial came from; default the webhook. */
    readonly stage?: 'schema';
    /** The mutating webhook's patch (sorted by path), when the row is about defaulting. */
    readonly patch?: readonly { op: string; path: string; value?: unknown }[];
  };
}

const COHERENT = { [STRATEGY]: 'Coherent' };
const ON_DELETE = { [STRATEGY]: 'OnDelete' };

const frontend = (fields: Obj = {}): Obj => aComponent('frontend', 'frontend', fields);
const worker = (fields: Obj = {}): Obj => aComponent('worker', 'worker', fields);
const prefill = (fields: Obj = {}): Obj => aComponent('prefill', 'prefill', fields);
const decode = (fields: Obj = {}): Obj => aComponent('decode', 'decode', fields);
const budget = (maxUnavailable: unknown, value: Obj = {}): Obj => anOverride({ ...value, rollingUpdate: { maxUnavailable } });
const nativeMin = (minAvailable: unknown, value: Obj = {}): Obj => anOverride({ ...value, spec: { minAvailable } });

/** The complete-outage warning (upstream-notes/dgd.md §3.4; "RollingRecreate updates may ..." for that strategy). */
function outage(strategy: 'Coherent' | 'RollingRecreate', index: number, name: string, replicas: number, minAvailable: number, maxUnavailable: number): string {
  return `spec.components[${index}] ("${name}"): ${strategy} updates may temporarily make this entire component unavailable (replicas=${replicas}, minAvailable=${minAvailable}, maxUnavailable=${maxUnavailable}); provision spare serving capacity before updating`;
}

const deprecated = (index: number, name: string, replacement = 'providerOverride.value.spec.minAvailable'): string =>
  `spec.components[${index}].minAvailable ("${name}"): deprecated; use ${replacement} instead, migrating all components in one update`;

const UPDATE_STRATEGY_ROWS: Row[] = [
  {
    name: 'the minimal example is admitted, changed only by the CREATE stamps (origin version, workload provider)',
    reason: 'dgd-reference "Minimal example"; upstream DGDDefaulter (the stamps are added to every CREATE row\'s patch below)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [], patch: [] },
  },
  {
    name: 'Accepted values are Coherent, RollingRecreate, and OnDelete (exact, case-sensitive)',
    reason: 'dgd-reference "Grove update strategy"; upstream-notes/dgd.md §3.1',
    input: { object: aDgd({ annotations: { [STRATEGY]: 'coherent' } }) },
    want: { issues: ['metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: "coherent": supported values: "Coherent", "RollingRecreate", "OnDelete"'], warnings: [] },
  },
  {
    name: 'a value with surrounding whitespace is not trimmed',
    reason: 'upstream-notes/dgd.md §3.1 "exact and case-sensitive, with no trimming"',
    input: { object: aDgd({ annotations: { [STRATEGY]: ' OnDelete' } }) },
    want: { issues: ['metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: " OnDelete": supported values: "Coherent", "RollingRecreate", "OnDelete"'], warnings: [] },
  },
  {
    name: 'OnDelete is accepted',
    reason: 'dgd-reference "Grove update strategy"',
    input: { object: aDgd({ annotations: ON_DELETE, components: [frontend({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'spec.annotations propagates annotations to child resources instead (it selects nothing)',
    reason: 'dgd-reference "This annotation belongs to the DGD’s metadata"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 })], spec: { annotations: { [STRATEGY]: 'Coherent' } } }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'an unsupported value in spec.annotations is not validated as a strategy',
    reason: 'dgd-reference "spec.annotations propagates annotations to child resources instead"',
    input: { object: aDgd({ spec: { annotations: { [STRATEGY]: 'bogus' } } }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Neither the deprecated component minAvailable nor a native minimum in providerOverride enables Coherent (deprecated form)',
    reason: 'dgd-reference "Grove update strategy": no Coherent warning for a singleton without the annotation',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1, minAvailable: 1 })] }) },
    want: { issues: [], warnings: [deprecated(1, 'worker')] },
  },
  {
    name: 'Neither the deprecated component minAvailable nor a native minimum in providerOverride enables Coherent (native form)',
    reason: 'dgd-reference "A native minimum or budget does not enable Coherent; only the explicit strategy annotation does"',
    input: { object: aDgd({ components: [frontend({ replicas: 1, providerOverride: nativeMin(1) })] }) },
    want: { issues: [], warnings: [] },
  },
];

const NATIVE_MINIMUM_ROWS: Row[] = [
  {
    name: 'A standalone prefill component can specify value.spec.minAvailable',
    reason: 'dgd-reference "Configure native minimum availability"; target resolved to PodCliqueTemplateSpec',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 4, providerOverride: nativeMin(1) })] }) },
    want: { issues: [], warnings: [], patch: [{ op: 'add', path: '/spec/components/1/providerOverride/target', value: 'PodCliqueTemplateSpec' }] },
  },
  {
    name: 'For a scaling-group component, use value.minAvailable (multinode)',
    reason: 'dgd-reference "Configure native minimum availability"; target resolved to PodCliqueScalingGroupConfig',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 2, multinode: { nodeCount: 2 }, providerOverride: anOverride({ minAvailable: 1 }) })] }) },
    want: { issues: [], warnings: [], patch: [{ op: 'add', path: '/spec/components/1/providerOverride/target', value: 'PodCliqueScalingGroupConfig' }] },
  },
  {
    name: 'a forced scaling group refuses value.spec.minAvailable',
    reason: 'upstream-notes/dgd.md §3.2 step 7 (PodCliqueScalingGroupConfig keys: topologyConstraint, minAvailable, rollingUpdate)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, experimental: { grove: { forceScalingGroup: true } }, providerOverride: nativeMin(1) })] }) },
    want: {
      issues: [
        'spec.components[1].providerOverride.value.spec: Forbidden: is Dynamo-owned or not enabled for provider override',
        'spec.components[1].providerOverride.value: Required value: topologyConstraint, minAvailable or rollingUpdate is required',
      ],
      warnings: [],
    },
  },
  {
    name: 'a standalone component refuses value.minAvailable',
    reason: 'upstream-notes/dgd.md §3.2 step 7 (PodCliqueTemplateSpec keys: topologyConstraint, spec.minAvailable, rollingUpdate)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, providerOverride: anOverride({ minAvailable: 1 }) })] }) },
    want: {
      issues: [
        'spec.components[1].providerOverride.value.minAvailable: Forbidden: is Dynamo-owned or not enabled for provider override',
        'spec.components[1].providerOverride.value: Required value: topologyConstraint, minAvailable or rollingUpdate is required',
      ],
      warnings: [],
    },
  },
  {
    name: 'The effective minimum must be a positive integer (0)',
    reason: 'dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §3.2 step 7',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, providerOverride: nativeMin(0) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: 0: must be a positive 32-bit integer'], warnings: [] },
  },
  {
    name: 'The effective minimum must be a positive integer (a string is not)',
    reason: 'dgd-reference "Configure native minimum availability"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, providerOverride: nativeMin('2') })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: "2": must be a positive 32-bit integer'], warnings: [] },
  },
  {
    name: 'a native minimum written as null is required',
    reason: 'upstream-notes/dgd.md §3.2 step 7 ("missing or null: is required")',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, providerOverride: nativeMin(null) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Required value: is required'], warnings: [] },
  },
  {
    name: 'a minimum must fit a positive replica count (native)',
    reason: 'dgd-reference "fit a positive replica count"; upstream-notes/dgd.md §3.3',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, providerOverride: nativeMin(3) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: 3: minAvailable must be less than or equal to replicas unless replicas is 0'], warnings: [] },
  },
  {
    name: 'ordinary Grove components may scale to zero without clearing their minimum',
    reason: 'dgd-reference "Configure native minimum availability"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 0, providerOverride: nativeMin(2) })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'a minimum must fit a positive replica count (deprecated field), and it warns',
    reason: 'upstream-notes/dgd.md §2.3 minAvailable CEL; dgd-reference deprecation warning',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, minAvailable: 3 })] }) },
    want: { issues: ['spec.components[1].minAvailable: Invalid value: 3: minAvailable must be less than or equal to replicas unless replicas is 0'], warnings: [deprecated(1, 'prefill')] },
  },
  {
    name: 'omitted ordinary replicas default to 1 before the minimum is fitted',
    reason: 'lpx.md §1.1 "Admission allows omitted replicas with minAvailable > 1 only for LPX"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ minAvailable: 2 })] }) },
    want: {
      issues: ['spec.components[1].minAvailable: Invalid value: 2: minAvailable must be less than or equal to replicas unless replicas is 0'],
      warnings: [deprecated(1, 'prefill')],
      patch: [{ op: 'add', path: '/spec/components/1/replicas', value: 1 }],
    },
  },
];

const DEFAULTING_ROWS: Row[] = [
  {
    name: 'admission leaves an absent providerOverride absent (only replicas are defaulted)',
    reason: 'dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §2.3 replicas default 1',
    input: { object: aDgd() },
    want: {
      issues: [],
      warnings: [],
      patch: [
        { op: 'add', path: '/spec/components/0/replicas', value: 1 },
        { op: 'add', path: '/spec/components/1/replicas', value: 1 },
      ],
    },
  },
  {
    name: 'admission does not add availability fields to a topology-only override',
    reason: 'dgd-reference "does not add availability fields to a topology-only override"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 1, providerOverride: anOverride({ topologyConstraint: { packDomain: 'rack' } }) })] }) },
    want: { issues: [], warnings: [], patch: [{ op: 'add', path: '/spec/components/1/providerOverride/target', value: 'PodCliqueTemplateSpec' }] },
  },
  {
    name: 'Omit target; admission resolves it from the component shape (root, scaling group, role)',
    reason: 'dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §2.3 targets',
    input: {
      object: aDgd({
        components: [
          frontend({ replicas: 1 }),
          decode({ replicas: 2, multinode: { nodeCount: 2 }, providerOverride: anOverride({ minAvailable: 1 }), roles: [{ name: 'leader', providerOverride: anOverride({ topologyConstraint: { packDomain: 'host' } }) }] }),
        ],
        spec: { providerOverride: anOverride({ spec: { template: { topologyConstraint: { packDomain: 'zone' } } } }) },
      }),
    },
    want: {
      issues: [],
      warnings: [],
      patch: [
        { op: 'add', path: '/spec/components/1/providerOverride/target', value: 'PodCliqueScalingGroupConfig' },
        { op: 'add', path: '/spec/components/1/roles/0/providerOverride/target', value: 'PodCliqueTemplateSpec' },
        { op: 'add', path: '/spec/providerOverride/target', value: 'PodCliqueSet' },
      ],
    },
  },
  {
    name: 'omitted LPX replicas are not defaulted (an external scaler owns live capacity)',
    reason: 'dgd-reference "omit them to let an external scaler manage live capacity"',
    input: { object: anLpxDgd([frontend({ replicas: 1 }), anLpxComponent('lpx')]), lpxEnabled: true },
    want: { issues: [], warnings: [], patch: [] },
  },
  {
    name: 'a multinode component without nodeCount gets the CRD default of 2 (a scaling group)',
    reason: 'upstream-notes/dgd.md §2.3 multinode default 2; the CRD default is applied before the webhook',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 2, multinode: {}, providerOverride: anOverride({ minAvailable: 1 }) })] }) },
    want: { issues: [], warnings: [], patch: [{ op: 'add', path: '/spec/components/1/providerOverride/target', value: 'PodCliqueScalingGroupConfig' }] },
  },
];

const oldWithLegacy = aDgd({ components: [frontend({ replicas: 1, minAvailable: 1 }), worker({ replicas: 2, minAvailable: 2 })] });

const MIXING_AND_IMMUTABILITY_ROWS: Row[] = [
  {
    name: 'Mixing the old and native minimum forms anywhere in the DGD is rejected',
    reason: 'dgd-reference "Grove update strategy"; upstream-notes/dgd.md §3.3 "Mixing"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, minAvailable: 1 }), prefill({ replicas: 2, providerOverride: nativeMin(1) })] }) },
    want: { issues: ['spec.components[2].providerOverride.value: Forbidden: cannot mix provider-native minAvailable with deprecated component minAvailable; migrate all components together'], warnings: [deprecated(1, 'worker')] },
  },
  {
    name: 'mixing both forms on one component is rejected',
    reason: 'upstream-notes/dgd.md §3.3 "Mixing"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), prefill({ replicas: 2, minAvailable: 1, providerOverride: nativeMin(1) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value: Forbidden: cannot mix provider-native minAvailable with deprecated component minAvailable; migrate all components together'], warnings: [deprecated(1, 'prefill')] },
  },
  {
    name: 'migrate all components in one update, including defaulted values on frontends',
    reason: 'dgd-reference "To migrate an existing DGD, remove every deprecated component minAvailable and put the same values in the corresponding component provider overrides in one update"',
    input: { old: oldWithLegacy, object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(2) })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Admission enforces effective-value immutability across both forms (deprecated 2 -> native 1)',
    reason: 'dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §3.3 "Immutability"',
    input: { old: oldWithLegacy, object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(1) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: 1: minAvailable is immutable after creation'], warnings: [] },
  },
  {
    name: 'minAvailable is immutable after DGD creation (native 1 -> native 2)',
    reason: 'dgd-reference "minAvailable is immutable after DGD creation"',
    input: {
      old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(1) })] }),
      object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(2) })] }),
    },
    want: { issues: ['spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: 2: minAvailable is immutable after creation'], warnings: [] },
  },
  {
    name: 'removing a deprecated minimum of 2 changes the effective value to 1',
    reason: 'upstream-notes/dgd.md §3.3 "Immutability" (legacy -> native -> default 1)',
    input: { old: oldWithLegacy, object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2 })] }) },
    want: { issues: ['spec.components[1].minAvailable: Invalid value: 1: minAvailable is immutable after creation'], warnings: [] },
  },
  {
    name: 'An omitted minimum resolves to 1: writing native 1 later keeps the effective value',
    reason: 'dgd-reference "An omitted minimum resolves to 1 during rendering"',
    input: { old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2 })] }), object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(1) })] }) },
    want: { issues: [], warnings: [] },
  },
];

const DEPRECATION_ROWS: Row[] = [
  {
    name: 'Admission returns a deprecation warning when a component introduces the old minAvailable field',
    reason: 'dgd-reference "Configure native minimum availability"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, minAvailable: 1 })] }) },
    want: { issues: [], warnings: [deprecated(1, 'worker')] },
  },
  {
    name: 'the deprecation warning names value.minAvailable for a scaling-group component',
    reason: 'dgd-reference "For a scaling-group component, use value.minAvailable: 1 instead"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 2, multinode: { nodeCount: 2 }, minAvailable: 1 })] }) },
    want: { issues: [], warnings: [deprecated(1, 'decode', 'providerOverride.value.minAvailable')] },
  },
  {
    name: 'moving a native value back to the deprecated field is allowed and warns (it introduces the field)',
    reason: 'dgd-reference "introduces or changes the old minAvailable field"; effective value unchanged',
    input: { old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(2) })] }), object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, minAvailable: 2 })] }) },
    want: { issues: [], warnings: [deprecated(1, 'worker')] },
  },
  {
    name: 'Updates that leave the legacy value unchanged, including replica-only and metadata edits, do not repeat the warning',
    reason: 'dgd-reference "Configure native minimum availability"',
    input: {
      old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, minAvailable: 1 })] }),
      object: aDgd({ labels: { team: 'inference' }, components: [frontend({ replicas: 1 }), worker({ replicas: 3, minAvailable: 1 })] }),
    },
    want: { issues: [], warnings: [] },
  },
];

const BUDGET_ROWS: Row[] = [
  {
    name: 'maxUnavailable must be a positive integer (0)',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(0) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 0: must be a positive 32-bit integer'], warnings: [] },
  },
  {
    name: 'maxUnavailable must be a positive integer (a percentage is not)',
    reason: 'dgd-reference "maxUnavailable must be a positive integer"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget('50%') })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: "50%": must be a positive 32-bit integer'], warnings: [] },
  },
  {
    name: 'maxUnavailable must fit in 32 bits',
    reason: 'upstream-notes/dgd.md §3.2 step 7 ("Not an int32, or ≤ 0")',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(2_147_483_648) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 2147483648: must be a positive 32-bit integer'], warnings: [] },
  },
  {
    name: 'an empty rollingUpdate requires maxUnavailable',
    reason: 'upstream-notes/dgd.md §3.2 step 7 ("maxUnavailable missing or null: is required")',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: anOverride({ rollingUpdate: {} }) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Required value: is required'], warnings: [] },
  },
  {
    name: 'Only maxUnavailable is enabled in this subtree; other rollout knobs are rejected',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: anOverride({ rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } }) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxSurge: Forbidden: is Dynamo-owned or not enabled for provider override'], warnings: [] },
  },
  {
    name: 'Set the budget on the component, never on its member roles',
    reason: 'dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.2 step 9',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 2, multinode: { nodeCount: 2 }, roles: [{ name: 'worker', providerOverride: budget(1) }] })] }) },
    want: { issues: ["spec.components[1].roles[0].providerOverride.value.rollingUpdate: Forbidden: member cliques use the owning component's rollingUpdate budget"], warnings: [] },
  },
  {
    name: 'Set the budget on the component, never on the graph root',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2 })], spec: { providerOverride: anOverride({ rollingUpdate: { maxUnavailable: 1 }, spec: { template: { topologyConstraint: { packDomain: 'zone' } } } }) } }) },
    want: { issues: ['spec.providerOverride.value.rollingUpdate: Forbidden: the rollingUpdate budget is set per component in spec.components[*].providerOverride, never on the graph root'], warnings: [] },
  },
  {
    name: 'Under Coherent, it must also be at least the component’s effective minAvailable',
    reason: 'dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.2 step 9',
    input: { object: aDgd({ annotations: COHERENT, components: [frontend({ replicas: 2 }), worker({ replicas: 4, providerOverride: budget(1, { spec: { minAvailable: 2 } }) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 1: must not be less than minAvailable (2) under the Coherent update strategy'], warnings: [] },
  },
  {
    name: 'under Coherent a budget equal to the effective minimum is accepted',
    reason: 'dgd-reference "at least the component’s effective minAvailable"',
    input: { object: aDgd({ annotations: COHERENT, components: [frontend({ replicas: 2 }), worker({ replicas: 4, providerOverride: budget(2, { spec: { minAvailable: 2 } }) })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Grove rejects rolling update configuration under OnDelete',
    reason: 'dgd-reference "rolling update configuration is rejected with OnDelete"',
    input: { object: aDgd({ annotations: ON_DELETE, components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(1) })] }) },
    want: { issues: ['spec.components[1].providerOverride.value.rollingUpdate: Forbidden: must not be set when the update strategy is OnDelete'], warnings: [] },
  },
  {
    name: 'maxUnavailable may exceed the component’s desired replicas',
    reason: 'dgd-reference "Grove rollout budget overrides" (upstream rejected it; the reference wins), with the RollingRecreate outage warning',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(5) })] }) },
    want: { issues: [], warnings: [outage('RollingRecreate', 1, 'worker', 2, 1, 5)] },
  },
  {
    name: 'The budget remains valid when a component scales below it or to zero',
    reason: 'dgd-reference "Grove rollout budget overrides"; no outage warning without replicas',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 0, providerOverride: budget(2) })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'It may exceed the immutable PCS template seed, including for LPX',
    reason: 'dgd-reference "Grove rollout budget overrides" (upstream-notes/dgd.md §3.2 step 9 rejected it)',
    input: { object: anLpxDgd([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 2, providerOverride: budget(3, { minAvailable: 1 }) })]), lpxEnabled: true },
    want: { issues: [], warnings: [outage('RollingRecreate', 1, 'lpx', 2, 1, 3)] },
  },
];

const coherentGraph = (components: Obj[], fixture: { labels?: Record<string, string> } = {}): Obj => aDgd({ annotations: COHERENT, components, ...fixture });

const OUTAGE_ROWS: Row[] = [
  {
    name: 'Coherent also warns when its default budget introduces this risk, including for singleton frontends',
    reason: 'dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.4',
    input: { object: coherentGraph([frontend({ replicas: 1 }), worker({ replicas: 2 })]) },
    want: { issues: [], warnings: [outage('Coherent', 0, 'frontend', 1, 1, 1)] },
  },
  {
    name: 'Admission warns on creation when an explicit budget could make every replica unavailable under RollingRecreate',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(2) })] }) },
    want: { issues: [], warnings: [outage('RollingRecreate', 1, 'worker', 2, 1, 2)] },
  },
  {
    name: 'Admission warns on creation when an explicit budget could make every replica unavailable under Coherent',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 2, providerOverride: budget(2) })]) },
    want: { issues: [], warnings: [outage('Coherent', 1, 'worker', 2, 1, 2)] },
  },
  {
    name: 'RollingRecreate retains its established warning behavior when no budget is configured',
    reason: 'dgd-reference "Grove rollout budget overrides" (no warning for a RollingRecreate singleton without a budget)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'unrelated metadata updates do not repeat the warning',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { old: coherentGraph([frontend({ replicas: 1 }), worker({ replicas: 2 })]), object: coherentGraph([frontend({ replicas: 1 }), worker({ replicas: 2 })], { labels: { team: 'inference' } }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Replica-only edits warn when they introduce this risk',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { old: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 2 })]), object: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 1 })]) },
    want: { issues: [], warnings: [outage('Coherent', 1, 'worker', 1, 1, 1)] },
  },
  {
    name: 'replica-only edits that leave existing risk unchanged do not repeat the warning',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { old: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 2, providerOverride: budget(4) })]), object: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 3, providerOverride: budget(4) })]) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Pod-template edits still warn before a rollout that could take the component offline',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: {
      old: coherentGraph([frontend({ replicas: 1 }), worker({ replicas: 2 })]),
      object: coherentGraph([frontend({ replicas: 1, podTemplate: aPodTemplate('nvcr.io/nvidia/ai-dynamo/dynamo-frontend:1.5.0') }), worker({ replicas: 2 })]),
    },
    want: { issues: [], warnings: [outage('Coherent', 0, 'frontend', 1, 1, 1)] },
  },
  {
    name: 'A pod-template edit to one worker can therefore roll every worker component (shared worker hash)',
    reason: 'dgd-reference "Grove update strategy" (shared worker-generation hash)',
    input: {
      old: coherentGraph([frontend({ replicas: 2 }), prefill({ replicas: 1 }), decode({ replicas: 1 })]),
      object: coherentGraph([frontend({ replicas: 2 }), prefill({ replicas: 1, podTemplate: aPodTemplate('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0') }), decode({ replicas: 1 })]),
    },
    want: { issues: [], warnings: [outage('Coherent', 1, 'prefill', 1, 1, 1), outage('Coherent', 2, 'decode', 1, 1, 1)] },
  },
  {
    name: 'opting into Coherent is a relevant rollout edit',
    reason: 'upstream-notes/dgd.md §3.4 ("strategy changed")',
    input: { old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2 })] }), object: coherentGraph([frontend({ replicas: 1 }), worker({ replicas: 2 })]) },
    want: { issues: [], warnings: [outage('Coherent', 0, 'frontend', 1, 1, 1)] },
  },
  {
    name: 'changing an explicit budget is a relevant rollout edit',
    reason: 'upstream-notes/dgd.md §3.4 ("effective budget changed")',
    input: { old: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 2, providerOverride: budget(2) })]), object: coherentGraph([frontend({ replicas: 2 }), worker({ replicas: 2, providerOverride: budget(3) })]) },
    want: { issues: [], warnings: [outage('Coherent', 1, 'worker', 2, 1, 3)] },
  },
  {
    name: 'With omitted LPX replicas, admission cannot infer live serving capacity and does not emit the complete-outage warning',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: anLpxDgd([frontend({ replicas: 2 }), anLpxComponent('lpx')], { annotations: COHERENT }), lpxEnabled: true },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'OnDelete never warns of a complete outage',
    reason: 'dgd-reference (no rolling budget under OnDelete)',
    input: { object: aDgd({ annotations: ON_DELETE, components: [frontend({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'a component with a validation error gets no outage warning',
    reason: 'upstream-notes/dgd.md §3.4 ("no validation errors so far for that component")',
    input: { object: coherentGraph([frontend({ replicas: 1, podTemplate: aPodTemplate('') }), worker({ replicas: 2 })]) },
    want: { issues: ['spec.components[0].podTemplate.spec.containers: Required value: must contain a container named "main" with a non-empty image'], warnings: [] },
  },
];

const TOPOLOGY_ROWS: Row[] = [
  {
    name: 'A budget-only override can coexist with typed topology constraints',
    reason: 'dgd-reference "Grove rollout budget overrides"',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: budget(1) })], spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' } } }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'an override that also writes topologyConstraint retains the existing restriction against mixing native and typed topology',
    reason: 'dgd-reference "Grove rollout budget overrides"; upstream-notes/dgd.md §3.2 step 11',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, topologyConstraint: { packDomain: 'rack' }, providerOverride: budget(1, { topologyConstraint: { packDomain: 'host' } }) })] }) },
    want: {
      issues: [
        'spec.components[1].providerOverride.value.topologyConstraint: Forbidden: cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use either the typed topology API or provider-native Grove topology overrides',
        // upstream validateDynamoGraphDeploymentSpec: a component constraint needs the graph's.
        'spec.topologyConstraint: Required value: is required when any component topology constraint is set',
      ],
      warnings: [],
    },
  },
  {
    name: 'a root topology override cannot be combined with the typed graph topology',
    reason: 'upstream-notes/dgd.md §3.2 step 11',
    input: {
      object: aDgd({
        components: [frontend({ replicas: 1 })],
        spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' }, providerOverride: anOverride({ spec: { template: { topologyConstraint: { packDomain: 'zone' } } } }) },
      }),
    },
    want: {
      issues: ['spec.providerOverride.value.spec.template.topologyConstraint: Forbidden: cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use either the typed topology API or provider-native Grove topology overrides'],
      warnings: [],
    },
  },
  {
    name: 'Root overrides remain topology-only: spec.template.topologyConstraint is required',
    reason: 'dgd-reference "Root and multinode role overrides remain topology-only"; upstream-notes/dgd.md §3.2 step 7',
    input: { object: aDgd({ components: [frontend({ replicas: 1 })], spec: { providerOverride: anOverride({ spec: { replicas: 3 } }) } }) },
    want: {
      issues: ['spec.providerOverride.value.spec.replicas: Forbidden: is Dynamo-owned or not enabled for provider override', 'spec.providerOverride.value.spec.template.topologyConstraint: Required value: is required'],
      warnings: [],
    },
  },
  {
    name: 'multinode role overrides remain topology-only: a role minimum belongs to the component',
    reason: 'dgd-reference "Root and multinode role overrides remain topology-only"; upstream-notes/dgd.md §3.2 step 8',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 2, multinode: { nodeCount: 2 }, roles: [{ name: 'leader', providerOverride: nativeMin(1) }] })] }) },
    want: { issues: ['spec.components[1].roles[0].providerOverride.value.spec.minAvailable: Forbidden: minAvailable (1) belongs to the owning component'], warnings: [] },
  },
  {
    name: 'role-scope overrides need a multinode component',
    reason: 'upstream-notes/dgd.md §3.2 step 5',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1, roles: [{ name: 'leader', providerOverride: anOverride({ topologyConstraint: { packDomain: 'host' } }) }] })] }) },
    want: { issues: ['spec.components[1].roles[0].providerOverride: Forbidden: role-scope provider overrides require a multinode component'], warnings: [] },
  },
];

const lpxGraph = (components: Obj[] = [frontend({ replicas: 1 }), worker({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1 })]): Obj => anLpxDgd(components);
const target = (fields: Obj = {}): Obj => anLpxComponent('target', { replicas: 1, ...fields });
const draft = (fields: Obj = {}): Obj => anLpxComponent('draft', { replicas: 2, ...fields }, { agentOnly: true });

const LPX_ROWS: Row[] = [
  {
    name: 'When disabled, admission rejects new LPX components',
    reason: 'dgd-reference (lpx.enabled); lpx.md §1.3 "The lpx.enabled=false gate"',
    input: { object: lpxGraph(), lpxEnabled: false },
    want: { issues: ['spec.components[2].type: Forbidden: LPX components require lpx.enabled=true'], warnings: [] },
  },
  {
    name: 'When disabled, admission permits otherwise valid updates that leave LPX components unchanged',
    reason: 'dgd-reference (lpx.enabled)',
    input: { old: lpxGraph(), object: lpxGraph([frontend({ replicas: 1 }), worker({ replicas: 2 }), anLpxComponent('lpx', { replicas: 1 })]), lpxEnabled: false },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'When disabled, reordering the components leaves LPX components unchanged',
    reason: 'lpx.md §1.3 "Allowed while disabled: ... reordering"',
    input: { old: lpxGraph(), object: lpxGraph([anLpxComponent('lpx', { replicas: 1 }), frontend({ replicas: 1 }), worker({ replicas: 1 })]), lpxEnabled: false },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'When disabled, admission rejects changed LPX components',
    reason: 'dgd-reference (lpx.enabled); lpx.md §1.3',
    input: { old: lpxGraph(), object: lpxGraph([frontend({ replicas: 1 }), worker({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1, lpx: { buildId: 'build-2' } })]), lpxEnabled: false },
    want: { issues: ['spec.components[2].type: Forbidden: LPX components require lpx.enabled=true'], warnings: [] },
  },
  {
    name: 'When enabled, LPX components are admitted',
    reason: 'dgd-reference (lpx.enabled)',
    input: { object: lpxGraph(), lpxEnabled: true },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'Explicit LPX DGD replicas remain positive',
    reason: 'dgd-reference "Grove rollout budget overrides"; lpx.md §1.1',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 0 })]), lpxEnabled: true },
    want: { issues: ['spec.components[1].replicas: Invalid value: 0: replicas must be positive when type is lpx'], warnings: [] },
  },
  {
    name: 'A shared LPX draft has no independent availability override',
    reason: 'dgd-reference "Configure native minimum availability"; upstream-notes/dgd.md §3.3 "LPX drafts"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), target(), draft({ providerOverride: anOverride({ minAvailable: 1 }) })]), lpxEnabled: true },
    want: { issues: ['spec.components[2].providerOverride: Forbidden: shared LPX draft availability belongs to the target component'], warnings: [] },
  },
  {
    name: 'a shared draft minAvailable must be omitted or 1',
    reason: 'lpx.md §1.3 "Replicas and pairs"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), target(), draft({ minAvailable: 2 })]), lpxEnabled: true },
    want: {
      issues: ['spec.components[2].minAvailable: Forbidden: draft minAvailable must be omitted or 1; the shared target owns minimum availability'],
      warnings: ['spec.components[2].minAvailable ("draft"): deprecated; remove it without adding a draft override, the shared LPX target component owns the native minimum'],
    },
  },
  {
    name: 'A shared LPX draft has a legacy minimum of 1: admitted, with the draft deprecation warning',
    reason: 'dgd-reference "Remove that legacy field without adding a draft override"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), target(), draft({ minAvailable: 1 })]), lpxEnabled: true },
    want: { issues: [], warnings: ['spec.components[2].minAvailable ("draft"): deprecated; remove it without adding a draft override, the shared LPX target component owns the native minimum'] },
  },
  {
    name: 'shared pair: draft replicas between 1 and 8, target replicas one',
    reason: 'lpx.md §1.3 "Replicas and pairs"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), target({ replicas: 2 }), draft({ replicas: 9 })]), lpxEnabled: true },
    want: { issues: ['spec.components[1].replicas: Invalid value: 2: shared target replicas must be one', 'spec.components[2].replicas: Invalid value: 9: draft replicas must be between 1 and 8'], warnings: [] },
  },
  {
    name: 'LPX topology overrides remain unsupported (component)',
    reason: 'dgd-reference "LPX topology overrides remain unsupported"; lpx.md §1.3',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1, providerOverride: anOverride({ topologyConstraint: { packDomain: 'rack' } }) })]), lpxEnabled: true },
    want: { issues: ['spec.components[1].providerOverride: Forbidden: LPX component does not support Grove topology overrides'], warnings: [] },
  },
  {
    name: 'LPX topology overrides remain unsupported (deployment root)',
    reason: 'lpx.md §1.3 "Topology restrictions"',
    input: { object: anLpxDgd([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1 })], { spec: { restart: { strategy: { type: 'Parallel' } }, providerOverride: anOverride({ spec: { template: { topologyConstraint: { packDomain: 'zone' } } } }) } }), lpxEnabled: true },
    want: { issues: ['spec.providerOverride: Forbidden: LPX does not support Grove topology overrides on the deployment'], warnings: [] },
  },
  {
    name: 'LPX does not support Grove topologyConstraint (typed)',
    reason: 'lpx.md §1.3 "Topology restrictions"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1, topologyConstraint: { packDomain: 'rack' } })]), lpxEnabled: true },
    want: {
      issues: [
        'spec.components[1].topologyConstraint: Forbidden: LPX does not support Grove topologyConstraint',
        // upstream validateDynamoGraphDeploymentSpec runs its typed topology rules beside the LPX ones.
        'spec.topologyConstraint: Required value: is required when any component topology constraint is set',
      ],
      warnings: [],
    },
  },
  {
    name: 'LPX roles do not support provider overrides',
    reason: 'lpx.md §1.3 "Topology restrictions"',
    input: {
      object: lpxGraph([
        frontend({ replicas: 1 }),
        anLpxComponent('lpx', { replicas: 1, roles: [{ name: 'agent', podTemplate: aPodTemplate('a:1'), providerOverride: anOverride({ topologyConstraint: { packDomain: 'host' } }) }, { name: 'conductor', podTemplate: aPodTemplate('c:1') }] }),
      ]),
      lpxEnabled: true,
    },
    want: { issues: ['spec.components[1].roles[0].providerOverride: Forbidden: LPX roles do not support provider overrides'], warnings: [] },
  },
  {
    name: 'LPX components must each declare a conductor role or form a shared draft and target pair',
    reason: 'lpx.md §1.3 "Roles and templates"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('a', { replicas: 1 }, { agentOnly: true }), anLpxComponent('b', { replicas: 1 }, { agentOnly: true })]), lpxEnabled: true },
    want: { issues: ['spec.components: Forbidden: LPX components must each declare a conductor role or form a shared draft and target pair'], warnings: [] },
  },
  {
    name: 'the LPX conductor requires an explicit podTemplate',
    reason: 'lpx.md §1.3 "Roles and templates"',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1, roles: [{ name: 'agent', podTemplate: aPodTemplate('a:1') }, { name: 'conductor' }] })]), lpxEnabled: true },
    want: { issues: ['spec.components[1].roles[1].podTemplate: Required value: LPX conductor requires an explicit podTemplate'], warnings: [] },
  },
  {
    name: 'LPX exclusively owns Agent node selection and reserves the agent container name',
    reason: 'lpx.md §1.3 "Pod-spec fields that LPX owns"',
    input: {
      object: lpxGraph([
        frontend({ replicas: 1 }),
        anLpxComponent('lpx', {
          replicas: 1,
          roles: [{ name: 'agent', podTemplate: { spec: { nodeSelector: { pool: 'lpu' }, containers: [{ name: 'main', image: 'a:1' }, { name: 'agent', image: 'a:1' }] } } }, { name: 'conductor', podTemplate: aPodTemplate('c:1') }],
        }),
      ]),
      lpxEnabled: true,
    },
    want: {
      issues: ['spec.components[1].roles[0].podTemplate.spec.containers[1].name: Forbidden: LPX reserves "agent" for the materialized role container', 'spec.components[1].roles[0].podTemplate.spec.nodeSelector: Forbidden: LPX exclusively owns Agent node selection'],
      warnings: [],
    },
  },
  {
    name: 'an ordinary component cannot select the LPX scheduler',
    reason: 'lpx.md §1.3 "Roles and templates"',
    input: { object: aDgd({ components: [frontend({ replicas: 1, podTemplate: aPodTemplate('f:1.0.0', { schedulerName: 'lpx-scheduler' }) })] }) },
    want: { issues: ['spec.components[0].podTemplate.spec.schedulerName: Forbidden: LPX schedulerName is controller-owned; declare an LPX component instead'], warnings: [] },
  },
  {
    name: 'graphs with LPX components require restart.strategy.type Parallel',
    reason: 'lpx.md §1.2',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1 })] }), lpxEnabled: true },
    want: { issues: ['spec: Invalid value: "object": spec.restart.strategy.type must be Parallel when the graph contains LPX components'], warnings: [] },
  },
  {
    name: 'LPX components cannot become non-LPX components',
    reason: 'lpx.md §1.3 "Type transitions"',
    input: {
      old: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1 })]),
      object: lpxGraph([frontend({ replicas: 1 }), aComponent('lpx', 'decode', { replicas: 1 })]),
      lpxEnabled: true,
    },
    want: { issues: ['spec.components[1].type: Invalid value: "decode": cannot change node topology between LPX and non-LPX after creation'], warnings: [] },
  },
  {
    name: 'multinode on an LPX component is rejected',
    reason: 'lpx.md §1.3 ("multinode on LPX"; not grandfathered)',
    input: { object: lpxGraph([frontend({ replicas: 1 }), anLpxComponent('lpx', { replicas: 1, multinode: { nodeCount: 2 } })]), lpxEnabled: true },
    want: { issues: ['spec.components[1].multinode: Forbidden: multinode is supported only for worker, prefill, or decode components'], warnings: [] },
  },
];

const operatorBase = aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] });

const STAMPED_BASE = aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] });
const failoverWorker = (): Obj => worker({ replicas: 1, experimental: { gpuMemoryService: { mode: 'IntraPod' }, failover: { mode: 'IntraPod' } } });

const METADATA_ANNOTATION_ROWS: Row[] = [
  {
    name: 'CREATE stamps nvidia.com/dynamo-operator-origin-version with the operator version and materializes nvidia.com/workload-provider: grove',
    reason: 'upstream DGDDefaulter.Default ("On CREATE: stamps nvidia.com/dynamo-operator-origin-version with the operator version"), defaultWorkloadProvider; upstream-notes/dgd.md §2.5',
    input: { object: STAMPED_BASE },
    want: { issues: [], warnings: [], patch: [] },
  },
  {
    name: 'CREATE never overwrites an origin version the user or an earlier operator set ("don\'t overwrite if already set"), and derives the provider from routing intent, ignoring the request\'s value',
    reason: 'upstream DGDDefaulter.Default, defaultWorkloadProvider ("Derive every new DGD from user-facing routing intent, ignoring the controller-owned annotation")',
    input: { object: aDgd({ annotations: { [ORIGIN]: '1.2.0', [PROVIDER]: 'component' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [], patch: [] },
  },
  {
    name: 'the origin version "must be valid semver"',
    reason: 'upstream validateObjectMeta',
    input: { object: aDgd({ annotations: { [ORIGIN]: 'next' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['metadata.annotations[nvidia.com/dynamo-operator-origin-version]: Invalid value: "next": must be valid semver'], warnings: [] },
  },
  {
    name: 'the origin version accepts what semver.NewVersion accepts: "v1.6" is 1.6.0',
    reason: 'upstream validateObjectMeta (Masterminds semver.NewVersion, non-strict)',
    input: { object: aDgd({ annotations: { [ORIGIN]: 'v1.6' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'an UPDATE may not change the origin version: "origin-version: must be semver; immutable, including its presence"',
    reason: 'upstream-notes/dgd.md §3.5 "Metadata"',
    input: { old: STAMPED_BASE, object: aDgd({ annotations: { [ORIGIN]: '9.0.0' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['metadata.annotations[nvidia.com/dynamo-operator-origin-version]: Invalid value: "9.0.0": field is immutable'], warnings: [] },
  },
  {
    name: 'an UPDATE that keeps the stamps is not stamped again ("On UPDATE/DELETE: the origin version annotation is immutable once set")',
    reason: 'upstream DGDDefaulter.Default',
    input: { old: STAMPED_BASE, object: aDgd({ components: [frontend({ replicas: 2 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [], patch: [] },
  },
  {
    name: 'once materialized, the workload provider "cannot be replaced or removed"',
    reason: 'upstream validateObjectMetaUpdate (FieldImmutableErrorMsg)',
    input: { old: STAMPED_BASE, object: aDgd({ annotations: { [PROVIDER]: 'component' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['metadata.annotations[nvidia.com/workload-provider]: Invalid value: "component": field is immutable'], warnings: [] },
  },
  {
    name: 'the workload provider is one of the programs upstream implements: "component", "grove"',
    reason: 'upstream validateObjectMeta ("Restrict the durable workload provider to programs implemented by the controller")',
    input: { old: STAMPED_BASE, object: aDgd({ annotations: { [PROVIDER]: 'lws' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: {
      issues: [
        'metadata.annotations[nvidia.com/workload-provider]: Unsupported value: "lws": supported values: "component", "grove"',
        'metadata.annotations[nvidia.com/workload-provider]: Invalid value: "lws": field is immutable',
      ],
      warnings: [],
    },
  },
  {
    name: 'nvidia.com/vllm-distributed-executor-backend "must be \\"mp\\" or \\"ray\\"" (case-insensitive: "MP" is admitted)',
    reason: 'upstream validateObjectMeta, invalidVLLMDistributedExecutorBackendAnnotation',
    input: { object: aDgd({ annotations: { 'nvidia.com/vllm-distributed-executor-backend': 'threads' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['metadata.annotations[nvidia.com/vllm-distributed-executor-backend]: Invalid value: "threads": must be "mp" or "ray"'], warnings: [] },
  },
  {
    name: 'the vLLM executor "MP" is admitted (compared lower-cased)',
    reason: 'upstream invalidVLLMDistributedExecutorBackendAnnotation (strings.ToLower)',
    input: { object: aDgd({ annotations: { 'nvidia.com/vllm-distributed-executor-backend': 'MP' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'nvidia.com/dynamo-kube-discovery-mode is exactly "pod" or "container"',
    reason: 'upstream validateObjectMeta (field.NotSupported)',
    input: { object: aDgd({ annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'Pod' }, components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Unsupported value: "Pod": supported values: "pod", "container"'], warnings: [] },
  },
  {
    name: 'the discovery mode "must be \\"container\\" when intra-pod failover is configured"',
    reason: 'upstream validateObjectMeta (hasIntraPodFailover)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), failoverWorker()] }) },
    want: { issues: ['metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Invalid value: "": must be "container" when intra-pod failover is configured'], warnings: [] },
  },
  {
    name: 'intra-pod failover with nvidia.com/dynamo-kube-discovery-mode: container is admitted',
    reason: 'upstream validateObjectMeta',
    input: { object: aDgd({ annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' }, components: [frontend({ replicas: 1 }), failoverWorker()] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'runtimeVersionOverride "is required when the specified main container image has no parseable semantic-version tag"',
    reason: 'upstream shared validation runtimeVersionOverrideRequired; upstream-notes/dgd.md §2.3 ("DGD admission requires it when the runtime image tag has no parseable semver")',
    input: { object: aDgd({ components: [frontend({ replicas: 1, podTemplate: aPodTemplate('nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest') }), worker({ replicas: 1, podTemplate: aPodTemplate('registry.example/runtime@sha256:abc') })] }) },
    want: {
      issues: [
        'spec.components[0].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag',
        'spec.components[1].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag',
      ],
      warnings: [],
    },
  },
  {
    name: 'an image without a semver tag is admitted with runtimeVersionOverride',
    reason: 'upstream runtimeVersionOverrideRequired ("if override != \"\" return false")',
    input: { object: aDgd({ components: [frontend({ replicas: 1, runtimeVersionOverride: '1.6.0', podTemplate: aPodTemplate('runtime:latest') }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'an UPDATE that leaves an existing image without a semver tag unchanged is ratcheted; changing it to another one is not',
    reason: 'upstream ValidateUpdate (ratchetRuntimeVersion: "Ratchet only complete, unchanged source-version runtime contract violations")',
    input: {
      old: aDgd({ components: [frontend({ replicas: 1, podTemplate: aPodTemplate('runtime:latest') }), worker({ replicas: 1, podTemplate: aPodTemplate('runtime:latest') })] }),
      object: aDgd({ components: [frontend({ replicas: 2, podTemplate: aPodTemplate('runtime:latest') }), worker({ replicas: 1, podTemplate: aPodTemplate('runtime:nightly') })] }),
    },
    want: { issues: ['spec.components[1].runtimeVersionOverride: Required value: is required when the specified main container image has no parseable semantic-version tag'], warnings: [] },
  },
];

const OPERATOR_ROWS: Row[] = [
  {
    name: 'a DGD has at least one component',
    reason: 'upstream-notes/dgd.md §3.5',
    input: { object: aDgd({ components: [] }) },
    want: { issues: ['spec.components: Required value: must have at least one component'], warnings: [] },
  },
  {
    name: 'the Grove 45-character name budget counts the multinode -ldr/-wkr clique names',
    reason: 'upstream-notes/dgd.md §3.5 "Grove name budget"; grove.md §A.8 (8 + 17 + len("prefill-worker-xl-wkr") = 46)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), aComponent('prefill-worker-xl', 'prefill', { replicas: 1, multinode: { nodeCount: 2 } })] }) },
    want: { issues: ['spec.components[1].name: Invalid value: "prefill-worker-xl": combined Grove resource name length 46 exceeds the 45-character limit; shorten the deployment or component name'], warnings: [] },
  },
  {
    name: 'the Grove name budget counts the lower-cased standalone component name',
    reason: 'upstream-notes/dgd.md §3.5 (PCS name budget min 8: 8 + 38 = 46)',
    input: { object: aDgd({ components: [aComponent('Frontend-With-A-Very-Long-Name-Exceeds', 'frontend', { replicas: 1 })] }) },
    want: { issues: ['spec.components[0].name: Invalid value: "Frontend-With-A-Very-Long-Name-Exceeds": combined Grove resource name length 46 exceeds the 45-character limit; shorten the deployment or component name'], warnings: [] },
  },
  {
    name: 'a long DGD name is shortened for the PodCliqueSet and fits',
    reason: 'upstream-notes/dgd.md §4.1 PCSNameForDGD',
    input: { object: aDgd({ name: 'a-very-long-deployment-name-for-a-disaggregated-graph', components: [frontend({ replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'components cannot be added after creation',
    reason: 'upstream-notes/dgd.md §3.5 "Update rules"',
    input: { old: operatorBase, object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1 }), aComponent('planner', 'planner', { replicas: 1 })] }) },
    want: { issues: ['spec.components: Forbidden: component topology is immutable and cannot be modified after creation: components added: [planner]'], warnings: [] },
  },
  {
    name: 'components cannot be removed after creation',
    reason: 'upstream-notes/dgd.md §3.5 "Update rules"',
    input: { old: operatorBase, object: aDgd({ components: [frontend({ replicas: 1 })] }) },
    want: { issues: ['spec.components: Forbidden: component topology is immutable and cannot be modified after creation: components removed: [worker]'], warnings: [] },
  },
  {
    name: 'backendFramework is immutable, with its warning',
    reason: 'upstream-notes/dgd.md §3.5 "Update rules"',
    input: { old: operatorBase, object: edit(operatorBase, { spec: { backendFramework: 'sglang' } }) },
    want: { issues: ['spec.backendFramework: Invalid value: "sglang": field is immutable'], warnings: ['Changing spec.backendFramework may cause unexpected behavior'] },
  },
  {
    name: 'multinode is only for worker, prefill and decode',
    reason: 'upstream-notes/dgd.md §2.3, §3.5 "Multinode"',
    input: { object: aDgd({ components: [frontend({ replicas: 1, multinode: { nodeCount: 2 } })] }) },
    want: { issues: ['spec.components[0].multinode: Forbidden: multinode is supported only for worker, prefill, or decode components'], warnings: [] },
  },
  {
    name: 'existing (legacy) multinode violations are ratcheted',
    reason: 'upstream-notes/dgd.md §3.5 "Existing (legacy) violations are ratcheted"',
    input: {
      old: aDgd({ components: [aComponent('planner', 'planner', { replicas: 1, multinode: { nodeCount: 2 } })] }),
      object: aDgd({ components: [aComponent('planner', 'planner', { replicas: 2, multinode: { nodeCount: 2 } })] }),
    },
    want: { issues: [], warnings: [] },
  },
  {
    name: 'multinode nodeCount is immutable',
    reason: 'upstream-notes/dgd.md §3.5 "Update rules"',
    input: {
      old: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 1, multinode: { nodeCount: 2 } })] }),
      object: aDgd({ components: [frontend({ replicas: 1 }), decode({ replicas: 1, multinode: { nodeCount: 4 } })] }),
    },
    want: { issues: ['spec.components[1].multinode: Invalid value: {"nodeCount":4}: field is immutable'], warnings: [] },
  },
  {
    name: 'a component type is immutable after it is set',
    reason: 'upstream-notes/dgd.md §2.3 (CEL "type is immutable after it is set")',
    input: { old: operatorBase, object: aDgd({ components: [frontend({ replicas: 1 }), aComponent('worker', 'decode', { replicas: 1 })] }) },
    want: { issues: ['spec.components[1].type: Invalid value: "decode": type is immutable after it is set'], warnings: [] },
  },
  {
    name: 'spec.restart.id must be unset on create',
    reason: 'upstream-notes/dgd.md §2.2 (the CRD CEL rule, mirrored by the webhook)',
    input: { object: edit(operatorBase, { spec: { restart: { id: 'r1' } } }) },
    want: { issues: ['spec: Invalid value: "object": spec.restart must be unset on create; set spec.restart.id after creation to request a restart'], warnings: [] },
  },
  {
    name: 'a restart order is forbidden with the Parallel strategy',
    reason: 'upstream-notes/dgd.md §3.5 "Restart order"',
    input: { object: edit(operatorBase, { spec: { restart: { strategy: { type: 'Parallel', order: ['frontend', 'worker'] } } } }) },
    want: { issues: ['spec.restart.strategy.order: Forbidden: must not be set when the restart strategy type is Parallel'], warnings: [] },
  },
  {
    name: 'a restart order must be unique and list every component',
    reason: 'upstream-notes/dgd.md §3.5 "Restart order"',
    input: { object: edit(operatorBase, { spec: { restart: { strategy: { type: 'Sequential', order: ['frontend', 'frontend', 'ghost'] } } } }) },
    want: {
      issues: [
        'spec.restart.strategy.order[1]: Duplicate value: "frontend": each component may appear only once',
        'spec.restart.strategy.order[2]: Unsupported value: "ghost": supported values: "frontend", "worker"',
        'spec.restart.strategy.order: Invalid value: ["frontend","frontend","ghost"]: must list every component; missing "worker"',
      ],
      warnings: [],
    },
  },
  {
    name: 'restart.id may not change while a rolling update is in progress',
    reason: 'upstream-notes/dgd.md §3.5 "Update rules"',
    input: {
      old: { ...edit(operatorBase, { spec: { restart: { id: 'r1' } } }), status: { rollingUpdate: { phase: 'InProgress' } } },
      object: edit(operatorBase, { spec: { restart: { id: 'r2' } } }),
    },
    want: { issues: ['spec.restart.id: Forbidden: cannot be changed while a rolling update is in progress (status.rollingUpdate.phase is InProgress)'], warnings: [] },
  },
  {
    name: 'providerOverride apiVersion must be grove.io/v1alpha1',
    reason: 'upstream-notes/dgd.md §2.3, §3.2 step 4',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: { apiVersion: 'grove.io/v1beta1', value: { spec: { minAvailable: 1 } } } })] }) },
    want: { issues: ['spec.components[1].providerOverride.apiVersion: Unsupported value: "grove.io/v1beta1": supported values: "grove.io/v1alpha1"'], warnings: [] },
  },
  {
    name: 'providerOverride target must match the provider-context target',
    reason: 'upstream-notes/dgd.md §3.2 step 6',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: { apiVersion: GROVE, target: 'PodCliqueScalingGroupConfig', value: { spec: { minAvailable: 1 } } } })] }) },
    want: { issues: ['spec.components[1].providerOverride.target: Invalid value: "PodCliqueScalingGroupConfig": must match the provider-context target "PodCliqueTemplateSpec"'], warnings: [] },
  },
  {
    name: 'providerOverride apiVersion is immutable',
    reason: 'upstream-notes/dgd.md §3.2 step 10',
    input: {
      old: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: nativeMin(1) })] }),
      object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 2, providerOverride: { apiVersion: 'grove.io/v1beta1', value: { spec: { minAvailable: 1 } } } })] }),
    },
    want: {
      issues: ['spec.components[1].providerOverride.apiVersion: Unsupported value: "grove.io/v1beta1": supported values: "grove.io/v1alpha1"', 'spec.components[1].providerOverride.apiVersion: Invalid value: "grove.io/v1beta1": field is immutable'],
      warnings: [],
    },
  },
  {
    name: 'checkpoint functionality is supported only for worker, prefill, and decode components',
    reason: 'lpx.md §1.3 "Checkpoint refusal"',
    input: { object: aDgd({ components: [frontend({ replicas: 1, experimental: { checkpoint: { enabled: true } } })] }) },
    want: { issues: ['spec.components[0].experimental.checkpoint: Forbidden: checkpoint functionality is supported only for worker, prefill, and decode components'], warnings: [] },
  },
  {
    name: 'lpx may only be set when type is lpx',
    reason: 'lpx.md §1.1 (CEL)',
    input: { object: aDgd({ components: [frontend({ replicas: 1 }), worker({ replicas: 1, lpx: { buildId: 'b' } })] }) },
    want: { issues: ['spec.components[1].lpx: Forbidden: lpx may only be set when type is lpx'], warnings: [] },
  },
  {
    name: 'nvidia.com/enable-grove "false" is refused: this control plane renders only through Grove',
    reason: 'upstream-notes/dgd.md §2.5; decision noted at validateGroveWorkloadProvider',
    input: { object: aDgd({ annotations: { 'nvidia.com/enable-grove': 'false' } }) },
    want: { issues: ['metadata.annotations[nvidia.com/enable-grove]: Unsupported value: "false": only the Grove workload provider is rendered by this control plane'], warnings: [] },
  },
  {
    name: 'finalizer removal on a terminating DGD is allowed whatever else it holds',
    reason: 'upstream-notes/dgd.md §3 ("terminating objects get only the metadata-update rules"); lpx.md §1.3',
    input: { old: operatorBase, object: edit(aDgd({ components: [frontend({ replicas: 1 })] }), { metadata: { deletionTimestamp: '2026-11-29T00:00:00Z', finalizers: [] } }) },
    want: { issues: [], warnings: [] },
  },
];

const STRUCTURAL_ROWS: Row[] = [
  {
    name: 'the CRD schema refuses negative replicas before any webhook runs',
    reason: 'our generated CRD (replicas minimum 0)',
    input: { object: aDgd({ components: [frontend({ replicas: -1 })] }) },
    want: { stage: 'schema', issues: ['spec.components[0].replicas: Invalid value: -1: must be >= 0'], warnings: [] },
  },
  {
    name: 'the CRD schema refuses an unknown component type',
    reason: 'our generated CRD (type enum)',
    input: { object: aDgd({ components: [aComponent('router', 'router', { replicas: 1 })] }) },
    want: { stage: 'schema', issues: ['spec.components[0].type: Invalid value: "router": must be equal to one of the allowed values'], warnings: [] },
  },
  {
    name: 'component names must be unique case-insensitively (CEL, mirrored by the webhook schema)',
    reason: 'upstream-notes/dgd.md §2.2 CEL rules',
    input: { object: aDgd({ components: [aComponent('Worker', 'worker', { replicas: 1 }), worker({ replicas: 1 })] }) },
    want: { issues: ['spec.components: Invalid value: "array": component names must be unique case-insensitively'], warnings: [] },
  },
  {
    name: 'at most one component may have type epp (CEL, mirrored by the webhook schema)',
    reason: 'upstream-notes/dgd.md §2.2 CEL rules',
    input: { object: aDgd({ components: [aComponent('epp', 'epp', { replicas: 1 }), aComponent('epp2', 'epp', { replicas: 1 })] }) },
    want: { issues: ['spec.components: Invalid value: "array": at most one component may have type epp'], warnings: [] },
  },
];

const ALPHA_ROWS: Row[] = [
  {
    name: 'v1alpha1 objects are defaulted in their own shape and warn at spec.services paths',
    reason: 'issue: the same paths for v1alpha1 objects, validated through conversion to v1beta1',
    input: { object: anAlphaDgd({ Frontend: anAlphaService('frontend'), VllmWorker: anAlphaService('worker', { replicas: 2, minAvailable: 1 }) }) },
    want: {
      issues: [],
      warnings: ['spec.services[VllmWorker].minAvailable ("VllmWorker"): deprecated; use providerOverride.value.spec.minAvailable instead, migrating all components in one update'],
      patch: [{ op: 'add', path: '/spec/services/Frontend/replicas', value: 1 }],
    },
  },
  {
    name: 'v1alpha1 budget errors are reported at the path users wrote',
    reason: 'issue: report paths in the form users wrote',
    input: { object: anAlphaDgd({ Frontend: anAlphaService('frontend', { replicas: 1 }), VllmWorker: anAlphaService('worker', { replicas: 2, providerOverride: budget(0) }) }) },
    want: {
      issues: ['spec.services[VllmWorker].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 0: must be a positive 32-bit integer'],
      warnings: [],
      patch: [{ op: 'add', path: '/spec/services/VllmWorker/providerOverride/target', value: 'PodCliqueTemplateSpec' }],
    },
  },
  {
    name: 'the v1alpha1 LPX gate is reported at spec.services[<name>].componentType',
    reason: 'lpx.md §1.3 ("The alpha form is spec.services[lpx].componentType")',
    input: {
      object: {
        ...anAlphaDgd({
          Frontend: anAlphaService('frontend', { replicas: 1 }),
          lpx: { componentType: 'lpx', replicas: 1, lpx: { buildId: 'b1' }, roles: [{ name: 'agent', podTemplate: aPodTemplate('a:1') }, { name: 'conductor', podTemplate: aPodTemplate('c:1') }] },
        }),
        spec: {
          backendFramework: 'vllm',
          restart: { strategy: { type: 'Parallel' } },
          services: {
            Frontend: anAlphaService('frontend', { replicas: 1 }),
            lpx: { componentType: 'lpx', replicas: 1, lpx: { buildId: 'b1' }, roles: [{ name: 'agent', podTemplate: aPodTemplate('a:1') }, { name: 'conductor', podTemplate: aPodTemplate('c:1') }] },
          },
        },
      },
    },
    want: { issues: ['spec.services[lpx].componentType: Forbidden: LPX components require lpx.enabled=true'], warnings: [] },
  },
  {
    name: 'v1alpha1 strategy annotation errors keep their metadata path',
    reason: 'dgd-reference "Grove update strategy"',
    input: { object: anAlphaDgd({ Frontend: anAlphaService('frontend', { replicas: 1 }) }, { annotations: { [STRATEGY]: 'Rolling' } }) },
    want: { issues: ['metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: "Rolling": supported values: "Coherent", "RollingRecreate", "OnDelete"'], warnings: [] },
  },
];

const TABLES: Readonly<Record<string, Row[]>> = {
  'update-strategy annotation': UPDATE_STRATEGY_ROWS,
  'native minimum': NATIVE_MINIMUM_ROWS,
  defaulting: DEFAULTING_ROWS,
  'minimum forms: mixing and immutability': MIXING_AND_IMMUTABILITY_ROWS,
  'deprecation warning': DEPRECATION_ROWS,
  'rollout budget (maxUnavailable)': BUDGET_ROWS,
  'complete-outage warnings': OUTAGE_ROWS,
  'typed topology and override scopes': TOPOLOGY_ROWS,
  'LPX': LPX_ROWS,
  'operator rules': OPERATOR_ROWS,
  'origin version, workload provider and other metadata annotations': METADATA_ANNOTATION_ROWS,
  'structural schema and CEL': STRUCTURAL_ROWS,
  'v1alpha1 through conversion': ALPHA_ROWS,
};

/**
 * The JSON Patch of upstream's CREATE stamps for a request object: `nvidia.com/workload-provider:
 * grove` always, `nvidia.com/dynamo-operator-origin-version: 1.6.1` (the default OPERATOR_VERSION)
 * unless the request names one ("don't overwrite if already set").
 */
function createStampPatch(object: Obj): { op: string; path: string; value?: unknown }[] {
  const annotations = (object['metadata'] as Obj | undefined)?.['annotations'] as Record<string, string> | undefined;
  if (annotations === undefined) return [...STAMP_PATCH];
  const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
  return [
    { op: PROVIDER in annotations ? 'replace' : 'add', path: `/metadata/annotations/${escape(PROVIDER)}`, value: 'grove' },
    ...(ORIGIN in annotations ? [] : [{ op: 'add', path: `/metadata/annotations/${escape(ORIGIN)}`, value: '1.6.1' }]),
  ];
}

const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

describe('DGD admission chain (CRD schema -> defaulting -> validation)', () => {
  for (const [table, rows] of Object.entries(TABLES)) {
    describe(table, () => {
      it.each(rows)('$name', ({ input, want }) => {
        const got = admitThroughChain(input);
        expect({ allowed: got.allowed, stage: got.stage, issues: got.issues, warnings: got.warnings }).toEqual({
          allowed: want.issues.length === 0,
          stage: want.stage ?? 'webhook',
          issues: want.issues,
          warnings: want.warnings,
        });
        // Every CREATE is also stamped (upstream DGDDefaulter): the origin version when absent, the workload provider.
        const wantPatch = want.patch === undefined ? undefined : input.old === undefined ? [...want.patch, ...createStampPatch(input.object)] : want.patch;
        if (wantPatch !== undefined) expect([...got.patch].sort(byPath)).toEqual([...wantPatch].sort(byPath));
      });
    });
  }

  it('has at least 60 rows', () => {
    expect(Object.values(TABLES).flat().length).toBeGreaterThanOrEqual(60);
  });
});
