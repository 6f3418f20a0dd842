/**
 * The `spec.overrides.dgd` merge engine, one row per case of upstream's
 * deploy/operator/internal/dgdoverride/override_test.go (the test function each row comes from
 * is named in `reason`), with the blueprints and overrides of that file. Expected values are
 * upstream's assertions, written out whole.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { applyDgdOverride, formatOverrideWarning, type OverrideResult } from './overrides.js';

const alphaBlueprint = `
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: generated
  namespace: default
  labels:
    base: "true"
  annotations:
    base: "true"
spec:
  backendFramework: vllm
  pvcs:
  - name: model-cache
  services:
    Frontend:
      componentType: frontend
    Worker:
      componentType: worker
      extraPodSpec:
        mainContainer:
          name: main
          image: old-image
          args: [--base]
          env:
          - name: KEEP
            value: keep
          - name: CHANGE
            value: old
`;

const alphaOverride = `
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
spec:
  services:
    Worker:
      extraPodSpec:
        mainContainer:
          image: new-image
          args: [--override]
          env:
          - name: CHANGE
            value: new
          - name: ADDED
            value: added
`;

const betaBlueprint = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: generated
  namespace: default
  labels:
    base: "true"
  annotations:
    base: "true"
spec:
  backendFramework: vllm
  components:
  - name: Frontend
    type: frontend
  - name: Worker
    type: worker
    frontendSidecar: sidecar
    podTemplate:
      spec:
        containers:
        - name: main
          image: old-image
          args: [--base]
          env:
          - name: KEEP
            value: keep
          - name: CHANGE
            value: old
        - name: sidecar
          image: sidecar-image
`;

const betaOverride = `
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
spec:
  components:
  - name: Worker
    podTemplate:
      spec:
        containers:
        - name: main
          image: new-image
          args: [--override]
          env:
          - name: CHANGE
            value: new
          - name: ADDED
            value: added
`;

type Doc = Record<string, unknown>;
const doc = (text: string): Doc => parse(text) as Doc;

/** The beta blueprint with the Worker component replaced by `worker` (a deep copy). */
function betaBlueprintWith(change: (worker: Doc, frontend: Doc) => void): Doc {
  const blueprint = doc(betaBlueprint);
  const [frontend, worker] = (blueprint['spec'] as { components: Doc[] }).components as [Doc, Doc];
  change(worker, frontend);
  return blueprint;
}

const mergedEnv = [
  { name: 'KEEP', value: 'keep' },
  { name: 'CHANGE', value: 'new' },
  { name: 'ADDED', value: 'added' },
];

const mergedBetaWorker = (args: string[]) => ({
  name: 'Worker',
  type: 'worker',
  frontendSidecar: 'sidecar',
  podTemplate: {
    spec: {
      containers: [
        { name: 'main', image: 'new-image', args, env: mergedEnv },
        { name: 'sidecar', image: 'sidecar-image' },
      ],
    },
  },
});

const mergedBeta = (args: string[]) => ({
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'generated', namespace: 'default', labels: { base: 'true' }, annotations: { base: 'true' } },
  spec: { backendFramework: 'vllm', components: [{ name: 'Frontend', type: 'frontend' }, mergedBetaWorker(args)] },
});

interface SuccessRow {
  readonly name: string;
  readonly reason: string;
  readonly blueprint: Doc;
  readonly override: Doc;
  readonly want: Doc;
  readonly wantWarnings?: readonly string[];
}

const successRows: SuccessRow[] = [
  {
    name: 'alpha blueprint with alpha override: services merge by name, worker args are appended, env merges by name',
    reason: 'TestApplyVersionMatrix "alpha blueprint with alpha override" (wantArgs [--base --override]); dgdr-reference: v1alpha1 overrides "append extraPodSpec.mainContainer.args to generated worker arguments"',
    blueprint: doc(alphaBlueprint),
    override: doc(alphaOverride),
    want: {
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'generated', namespace: 'default', labels: { base: 'true' }, annotations: { base: 'true' } },
      spec: {
        backendFramework: 'vllm',
        pvcs: [{ name: 'model-cache' }],
        services: {
          Frontend: { componentType: 'frontend' },
          Worker: { componentType: 'worker', extraPodSpec: { mainContainer: { name: 'main', image: 'new-image', args: ['--base', '--override'], env: mergedEnv } } },
        },
      },
    },
  },
  {
    name: 'beta blueprint with alpha override: the result stays v1beta1, alpha worker args are appended, v1beta1-only fields survive',
    reason: 'TestApplyVersionMatrix "beta blueprint with alpha override" (wantArgs [--base --override], frontendSidecar and the sidecar container kept)',
    blueprint: doc(betaBlueprint),
    override: doc(alphaOverride),
    want: mergedBeta(['--base', '--override']),
  },
  {
    name: 'beta blueprint with beta override: container args are atomic and replaced; components, containers and env merge by name',
    reason: 'TestApplyVersionMatrix "beta blueprint with beta override" and TestApplyUsesStructuralListSemantics; dgdr-reference: "atomic lists such as graph-level spec.env and container args replace their generated values"',
    blueprint: doc(betaBlueprint),
    override: doc(betaOverride),
    want: mergedBeta(['--override']),
  },
  {
    name: '$patch {args: append} on main: base args + override args, $patch removed',
    reason: 'TestApplyMaterializesExplicitBetaArgsAppend (args [--base --router-mode kv], no $patch)',
    blueprint: doc(betaBlueprint),
    override: doc(`
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
spec:
  components:
  - name: Worker
    podTemplate:
      spec:
        containers:
        - name: main
          $patch:
            args: append
          args: [--router-mode, kv]
`),
    want: betaBlueprintWith((worker) => {
      const [main] = (worker['podTemplate'] as { spec: { containers: Doc[] } }).spec.containers as [Doc];
      main['args'] = ['--base', '--router-mode', 'kv'];
    }),
  },
  {
    name: '$patch {args: append} on the Frontend keeps python3 -m dynamo.frontend and appends the KV router flags',
    reason: 'TestApplyMaterializesFrontendArgsAppendAfterExplicitDefaults; dgdr-reference "Generated DGD overrides" (the Frontend/main example)',
    blueprint: betaBlueprintWith((_worker, frontend) => {
      frontend['podTemplate'] = { spec: { containers: [{ name: 'main', command: ['python3'], args: ['-m', 'dynamo.frontend'] }] } };
    }),
    override: doc(`
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
spec:
  components:
  - name: Frontend
    podTemplate:
      spec:
        containers:
        - name: main
          $patch:
            args: append
          args: [--router-mode, kv]
`),
    want: betaBlueprintWith((_worker, frontend) => {
      frontend['podTemplate'] = { spec: { containers: [{ name: 'main', command: ['python3'], args: ['-m', 'dynamo.frontend', '--router-mode', 'kv'] }] } };
    }),
  },
  {
    name: '$patch {args: append} on an existing sidecar with explicit args',
    reason: 'TestApplyMaterializesBetaArgsAppendForExistingSidecar (sidecar image kept, args [--serve --verbose])',
    blueprint: betaBlueprintWith((worker) => {
      const containers = (worker['podTemplate'] as { spec: { containers: Doc[] } }).spec.containers;
      (containers[1] as Doc)['args'] = ['--serve'];
    }),
    override: doc(`
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
spec:
  components:
  - name: Worker
    podTemplate:
      spec:
        containers:
        - name: sidecar
          $patch:
            args: append
          args: [--verbose]
`),
    want: betaBlueprintWith((worker) => {
      const containers = (worker['podTemplate'] as { spec: { containers: Doc[] } }).spec.containers;
      (containers[1] as Doc)['args'] = ['--serve', '--verbose'];
    }),
  },
  {
    name: 'set-typed lists are unioned',
    reason: 'TestApplyUsesStructuralSetSemantics (extraClientContainers [sidecar shared] + [metrics shared] -> sidecar, shared, metrics)',
    blueprint: betaBlueprintWith((worker) => {
      worker['experimental'] = { gpuMemoryService: { extraClientContainers: ['sidecar', 'shared'] } };
    }),
    override: (() => {
      const override = doc(betaOverride);
      const [worker] = (override['spec'] as { components: Doc[] }).components as [Doc];
      worker['experimental'] = { gpuMemoryService: { extraClientContainers: ['metrics', 'shared'] } };
      return override;
    })(),
    want: (() => {
      const want = mergedBeta(['--override']) as { spec: { components: Doc[] } };
      (want.spec.components[1] as Doc)['experimental'] = { gpuMemoryService: { extraClientContainers: ['sidecar', 'shared', 'metrics'] } };
      return want;
    })(),
  },
  {
    name: 'null is kept inside an untyped preserved field',
    reason: 'TestApplyAllowsNullInPreservedUnknownFields (eppConfig.config.customPluginConfig.optionalValue: null)',
    blueprint: doc(betaBlueprint),
    override: doc(`
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
spec:
  components:
  - name: Worker
    eppConfig:
      config:
        customPluginConfig:
          optionalValue: null
`),
    want: betaBlueprintWith((worker) => {
      worker['eppConfig'] = { config: { customPluginConfig: { optionalValue: null } } };
    }),
  },
  {
    name: 'deprecated VllmDecodeWorker in a v1alpha1 override translates to the aggregated worker service',
    reason: 'TestApplyTranslatesDeprecatedOverrideTargets "alpha aggregate"',
    blueprint: doc(`
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: generated}
spec:
  backendFramework: vllm
  services:
    Frontend: {componentType: frontend}
    worker: {componentType: worker, replicas: 1}
`),
    override: doc('apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nspec:\n  services:\n    VllmDecodeWorker:\n      replicas: 7\n'),
    want: doc(`
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: generated}
spec:
  backendFramework: vllm
  services:
    Frontend: {componentType: frontend}
    worker: {componentType: worker, replicas: 7}
`),
    wantWarnings: [
      'spec.services.VllmDecodeWorker: deprecated override target "VllmDecodeWorker" translated to "worker"; use "worker" directly. Legacy-name translation will be removed in a future release',
    ],
  },
  {
    name: 'deprecated VllmDecodeWorker in a v1alpha1 override translates to the worker component of a v1beta1 blueprint',
    reason: 'TestApplyTranslatesDeprecatedOverrideTargets "beta aggregate with alpha override"',
    blueprint: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  backendFramework: vllm\n  components:\n  - {name: Frontend, type: frontend}\n  - {name: worker, type: worker, replicas: 1}\n'),
    override: doc('apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nspec:\n  services:\n    VllmDecodeWorker:\n      replicas: 7\n'),
    want: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  backendFramework: vllm\n  components:\n  - {name: Frontend, type: frontend}\n  - {name: worker, type: worker, replicas: 7}\n'),
    wantWarnings: [
      'spec.services.VllmDecodeWorker: deprecated override target "VllmDecodeWorker" translated to "worker"; use "worker" directly. Legacy-name translation will be removed in a future release',
    ],
  },
  {
    name: 'deprecated VllmDecodeWorker in a v1beta1 override translates to decode of a disaggregated blueprint',
    reason: 'TestApplyTranslatesDeprecatedOverrideTargets "beta disaggregated"',
    blueprint: doc(
      'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  backendFramework: vllm\n  components:\n  - {name: Frontend, type: frontend}\n  - {name: prefill, type: prefill, replicas: 1}\n  - {name: decode, type: decode, replicas: 1}\n',
    ),
    override: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec:\n  components:\n  - name: VllmDecodeWorker\n    replicas: 7\n'),
    want: doc(
      'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  backendFramework: vllm\n  components:\n  - {name: Frontend, type: frontend}\n  - {name: prefill, type: prefill, replicas: 1}\n  - {name: decode, type: decode, replicas: 7}\n',
    ),
    wantWarnings: [
      'spec.components[name=VllmDecodeWorker]: deprecated override target "VllmDecodeWorker" translated to "decode"; use "decode" directly. Legacy-name translation will be removed in a future release',
    ],
  },
  {
    name: 'reference "A recognized deprecated name may be translated ... with a warning": a 1.6.1 profiler blueprint (no spec.backendFramework) translates VllmWorker by the backend its worker launches (python3 -m dynamo.vllm)',
    reason: 'dgdr-reference "Generated DGD overrides"; upstream-notes/profiler.md §3.4 (the 1.6.1 blueprint: worker command [python3, -m, dynamo.vllm], no backendFramework)',
    blueprint: doc(
      'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  components:\n  - {name: Frontend, type: frontend, podTemplate: {spec: {containers: [{name: main, command: [python3], args: [-m, dynamo.frontend]}]}}}\n  - {name: worker, type: worker, replicas: 1, podTemplate: {spec: {containers: [{name: main, command: [python3, -m, dynamo.vllm]}]}}}\n',
    ),
    override: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec:\n  components:\n  - name: VllmWorker\n    replicas: 2\n'),
    want: doc(
      'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: generated}\nspec:\n  components:\n  - {name: Frontend, type: frontend, podTemplate: {spec: {containers: [{name: main, command: [python3], args: [-m, dynamo.frontend]}]}}}\n  - {name: worker, type: worker, replicas: 2, podTemplate: {spec: {containers: [{name: main, command: [python3, -m, dynamo.vllm]}]}}}\n',
    ),
    wantWarnings: [
      'spec.components[name=VllmWorker]: deprecated override target "VllmWorker" translated to "worker"; use "worker" directly. Legacy-name translation will be removed in a future release',
    ],
  },
  ...(['v1alpha1', 'v1beta1'] as const).map((version) => ({
    name: `${version} metadata: labels and annotations merge, identity fields are ignored with a warning`,
    reason: `TestApplySanitizesMetadata "${version === 'v1alpha1' ? 'alpha' : 'beta'}"; dgdr-reference: "Labels and annotations merge ... other identity metadata is ignored"`,
    blueprint: doc(version === 'v1alpha1' ? alphaBlueprint : betaBlueprint),
    override: doc(`
apiVersion: nvidia.com/${version}
kind: DynamoGraphDeployment
metadata:
  name: user-name
  namespace: other
  finalizers: [do-not-copy]
  labels: {added: "true", base: "false"}
  annotations: {added: "true", base: "false"}
`),
    want: (() => {
      const want = doc(version === 'v1alpha1' ? alphaBlueprint : betaBlueprint);
      want['metadata'] = { name: 'generated', namespace: 'default', labels: { base: 'false', added: 'true' }, annotations: { base: 'false', added: 'true' } };
      return want;
    })(),
    wantWarnings: ['metadata: ignored identity/runtime fields: finalizers, name, namespace'],
  })),
  {
    name: 'reserved nvidia.com/dgd-* conversion annotations are dropped with a warning',
    reason: 'TestApplyProtectsConversionAnnotations',
    blueprint: doc(betaBlueprint),
    override: (() => {
      const override = doc(alphaOverride);
      override['metadata'] = { annotations: { 'nvidia.com/dgd-future': 'malicious-future-value', 'nvidia.com/dgd-spec': 'malicious-preservation-value', 'user.example/setting': 'allowed' } };
      return override;
    })(),
    want: (() => {
      const want = mergedBeta(['--base', '--override']) as { metadata: { annotations: Doc } };
      want.metadata.annotations['user.example/setting'] = 'allowed';
      return want;
    })(),
    wantWarnings: ['metadata.annotations: ignored reserved operator keys: nvidia.com/dgd-future, nvidia.com/dgd-spec'],
  },
  {
    name: 'an override with only apiVersion and kind changes nothing',
    reason: 'TestApplyEmptyOverrideIsNoOp',
    blueprint: doc(betaBlueprint),
    override: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n'),
    want: doc(betaBlueprint),
  },
  {
    name: 'a new named container is added to an existing component by the normal merge',
    reason: 'dgdr-reference v1beta2 DGD Overrides: "A new named container can be added to an existing component through the normal merge"',
    blueprint: doc(betaBlueprint),
    override: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec:\n  components:\n  - name: Worker\n    podTemplate:\n      spec:\n        containers:\n        - {name: metrics, image: metrics-image}\n'),
    want: betaBlueprintWith((worker) => {
      (worker['podTemplate'] as { spec: { containers: Doc[] } }).spec.containers.push({ name: 'metrics', image: 'metrics-image' });
    }),
  },
  {
    name: 'graph-level spec.env is atomic and replaced',
    reason: 'dgdr-reference "Generated DGD overrides": "atomic lists such as graph-level spec.env and container args replace their generated values"',
    blueprint: (() => {
      const blueprint = doc(betaBlueprint);
      (blueprint['spec'] as Doc)['env'] = [{ name: 'A', value: '1' }, { name: 'B', value: '2' }];
      return blueprint;
    })(),
    override: doc('apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec:\n  env:\n  - {name: B, value: "3"}\n'),
    want: (() => {
      const want = doc(betaBlueprint);
      (want['spec'] as Doc)['env'] = [{ name: 'B', value: '3' }];
      return want;
    })(),
  },
];

interface FailureRow {
  readonly name: string;
  readonly reason: string;
  readonly blueprint: unknown;
  readonly override: unknown;
  readonly wantError: string;
}

const appendOverride = (component: string, container: string, modifier: string, argsLine: string) =>
  doc(
    `apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nspec:\n  components:\n  - name: ${component}\n    podTemplate:\n      spec:\n        containers:\n        - name: ${container}\n          $patch:\n            args: ${modifier}\n${argsLine}`,
  );

const appendRows: FailureRow[] = [
  { name: 'unsupported operation', component: 'Worker', container: 'main', modifier: 'replace', argsLine: '          args: [--flag]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].$patch only supports args: append' },
  { name: 'missing args', component: 'Worker', container: 'main', modifier: 'append', argsLine: '', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].args must be non-empty when $patch args is append' },
  { name: 'non-string args', component: 'Worker', container: 'main', modifier: 'append', argsLine: '          args: [--flag, 7]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].args must be a list of strings' },
  { name: 'empty string arg', component: 'Worker', container: 'main', modifier: 'append', argsLine: '          args: [--flag, ""]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].args[1] must be non-empty when $patch args is append' },
  { name: 'empty container name', component: 'Worker', container: '""', modifier: 'append', argsLine: '          args: [--flag]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].name must be a non-empty string when $patch is used' },
  { name: 'unknown sidecar', component: 'Worker', container: 'missing', modifier: 'append', argsLine: '          args: [--flag]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].name "missing" is not present in the generated blueprint' },
  { name: 'generated sidecar args are absent', component: 'Worker', container: 'sidecar', modifier: 'append', argsLine: '          args: [--flag]\n', wantError: 'beta blueprint spec.components[0] container "sidecar" must define args explicitly before they can be appended' },
  { name: 'generated main is absent', component: 'Frontend', container: 'main', modifier: 'append', argsLine: '          args: [--flag]\n', wantError: 'beta override spec.components[0].podTemplate.spec.containers[0].name "main" is not present in the generated blueprint' },
].map((row) => ({
  name: `$patch append: ${row.name}`,
  reason: `TestApplyRejectsInvalidBetaArgsAppendPatch "${row.name}"; dgdr-reference: "The only supported modifier is args: append, and its args list must contain at least one non-empty string. The target container and its args list must already be present"`,
  blueprint: doc(betaBlueprint),
  override: appendOverride(row.component, row.container, row.modifier, row.argsLine),
  wantError: row.wantError,
}));

const beta = (body: string) => doc(`apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\n${body}`);

const failureRows: FailureRow[] = [
  ...appendRows,
  { name: 'null blueprint', reason: 'TestApplyRejectsInvalidInput "nil blueprint"', blueprint: null, override: doc(betaOverride), wantError: 'blueprint must not be nil' },
  { name: 'null override', reason: 'TestApplyRejectsInvalidInput "nil override"', blueprint: doc(betaBlueprint), override: null, wantError: 'override must not be nil' },
  {
    name: 'missing override version',
    reason: 'TestApplyRejectsInvalidInput "missing override version"',
    blueprint: doc(betaBlueprint),
    override: { kind: 'DynamoGraphDeployment' },
    wantError: 'override must be nvidia.com/v1alpha1 or nvidia.com/v1beta1, got apiVersion "" kind "DynamoGraphDeployment"',
  },
  {
    name: 'unsupported override version',
    reason: 'TestApplyRejectsInvalidInput "unsupported override version"',
    blueprint: doc(betaBlueprint),
    override: { apiVersion: 'nvidia.com/v2', kind: 'DynamoGraphDeployment' },
    wantError: 'override must be nvidia.com/v1alpha1 or nvidia.com/v1beta1, got apiVersion "nvidia.com/v2" kind "DynamoGraphDeployment"',
  },
  {
    name: 'wrong kind',
    reason: 'TestApplyRejectsInvalidInput "wrong kind"',
    blueprint: doc(betaBlueprint),
    override: { apiVersion: 'nvidia.com/v1beta1', kind: 'ConfigMap' },
    wantError: 'override must be nvidia.com/v1alpha1 or nvidia.com/v1beta1, got apiVersion "nvidia.com/v1beta1" kind "ConfigMap"',
  },
  { name: 'explicit null', reason: 'TestApplyRejectsInvalidInput "explicit null"; dgdr-reference: "null values for typed fields, and field deletion are not supported"', blueprint: doc(betaBlueprint), override: beta('spec:\n  backendFramework: null\n'), wantError: 'override spec.backendFramework must not be null; field deletion is not supported' },
  { name: 'null metadata label', reason: 'TestApplyRejectsInvalidInput "null metadata label"', blueprint: doc(betaBlueprint), override: beta('metadata:\n  labels:\n    existing: null\n'), wantError: 'override metadata.labels.existing must not be null; field deletion is not supported' },
  { name: 'null metadata annotation', reason: 'TestApplyRejectsInvalidInput "null metadata annotation"', blueprint: doc(betaBlueprint), override: beta('metadata:\n  annotations:\n    existing: null\n'), wantError: 'override metadata.annotations.existing must not be null; field deletion is not supported' },
  {
    name: 'explicit null in a typed field below a preserved object',
    reason: 'TestApplyRejectsInvalidInput "explicit null in typed field below preserve unknown object"',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - name: Worker\n    eppConfig:\n      config:\n        apiVersion: null\n'),
    wantError: 'override spec.components[0].eppConfig.config.apiVersion must not be null; field deletion is not supported',
  },
  { name: 'status override', reason: 'TestApplyRejectsInvalidInput "status override"; dgdr-reference: "status ... not supported"', blueprint: doc(betaBlueprint), override: beta('status:\n  state: successful\n'), wantError: 'override status is not supported' },
  { name: 'component without its merge key', reason: 'TestApplyRejectsInvalidInput "beta component missing merge key"', blueprint: doc(betaBlueprint), override: beta('spec:\n  components:\n  - replicas: 2\n'), wantError: 'beta override spec.components[0].name must be a non-empty string' },
  {
    name: 'duplicate component merge key',
    reason: 'TestApplyRejectsInvalidInput "duplicate beta component merge key"',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - {name: Worker, replicas: 2}\n  - {name: Worker, replicas: 3}\n'),
    wantError: 'spec.components[name=Worker]: override targets "Worker" and "Worker" both resolve to generated component "Worker"',
  },
  {
    name: 'invalid alpha worker args',
    reason: 'TestApplyRejectsInvalidInput "invalid alpha worker args"',
    blueprint: doc(alphaBlueprint),
    override: doc('apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nspec:\n  services:\n    Worker:\n      extraPodSpec:\n        mainContainer:\n          args: [valid, 7]\n'),
    wantError: 'spec.services.Worker.extraPodSpec.mainContainer.args: must be a list of strings',
  },
  {
    name: 'unknown alpha service target',
    reason: 'TestApplyRejectsInvalidInput "unknown alpha service target"; dgdr-reference: "An unresolved spec.components or spec.services name causes DGD materialization to fail"',
    blueprint: doc(alphaBlueprint),
    override: doc('apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nspec:\n  services:\n    Missing:\n      replicas: 2\n'),
    wantError: 'spec.services.Missing: override target "Missing" is not present in the generated blueprint',
  },
  {
    name: 'unknown beta component target',
    reason: 'TestApplyRejectsInvalidInput "unknown beta component target"; dgdr-reference: "An override cannot add deployment topology"',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - {name: Missing, replicas: 2}\n'),
    wantError: 'spec.components[name=Missing]: override target "Missing" is not present in the generated blueprint',
  },
  {
    name: 'deprecated target with no compatible generated target',
    reason: 'TestApplyRejectsInvalidInput "deprecated target has no compatible generated target"',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - {name: VllmWorker, replicas: 2}\n'),
    wantError: 'spec.components[name=VllmWorker]: deprecated override target "VllmWorker" cannot be translated because the generated blueprint contains none of the compatible targets: worker',
  },
  {
    name: 'deprecated target does not cross backend boundaries',
    reason: 'TestApplyRejectsInvalidInput "deprecated target does not cross backend boundaries"',
    blueprint: beta('spec:\n  backendFramework: sglang\n  components:\n  - {name: worker, type: worker}\n'),
    override: beta('spec:\n  components:\n  - {name: VllmWorker, replicas: 2}\n'),
    wantError: 'spec.components[name=VllmWorker]: deprecated override target "VllmWorker" belongs to backend "vllm" and cannot be translated for generated backend "sglang"',
  },
  {
    name: 'ambiguous deprecated target',
    reason: 'TestApplyRejectsInvalidInput "deprecated target is ambiguous"',
    blueprint: beta('spec:\n  backendFramework: vllm\n  components:\n  - {name: worker, type: worker}\n  - {name: decode, type: decode}\n'),
    override: beta('spec:\n  components:\n  - {name: VllmDecodeWorker, replicas: 2}\n'),
    wantError: 'spec.components[name=VllmDecodeWorker]: deprecated override target "VllmDecodeWorker" cannot be translated unambiguously because the generated blueprint contains multiple compatible targets: worker, decode',
  },
  {
    name: 'translated target collides with a direct target',
    reason: 'TestApplyRejectsInvalidInput "translated beta target collides with direct target"',
    blueprint: beta('spec:\n  backendFramework: vllm\n  components:\n  - {name: worker, type: worker}\n'),
    override: beta('spec:\n  components:\n  - {name: VllmWorker, replicas: 2}\n  - {name: worker, replicas: 3}\n'),
    wantError: 'spec.components[name=worker]: override targets "VllmWorker" and "worker" both resolve to generated component "worker"',
  },
  {
    name: 'unknown v1beta1 field',
    reason: 'TestApplyRejectsInvalidInput "unknown beta field"',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  notARealField: true\n'),
    wantError: 'validate nvidia.com/v1beta1 override: spec.notARealField: field not declared in schema',
  },
  {
    name: 'a merged value the DGD schema rejects',
    reason: 'override.go Apply: structural schema validation of the merged DGD (the API server words this as field.Invalid "must be greater than or equal to 0")',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - {name: Worker, replicas: -1}\n'),
    wantError: 'merge nvidia.com/v1beta1 override: spec.components[1].replicas: Invalid value: -1: must be greater than or equal to 0',
  },
  {
    name: 'a container without its merge key',
    reason: 'structured-merge-diff typed.Merge refuses an associative-list item without its key (containers are +listMapKey=name)',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components:\n  - name: Worker\n    podTemplate:\n      spec:\n        containers:\n        - {image: x}\n'),
    wantError: 'override spec.components[].podTemplate.spec.containers[0]: list item must set its merge key "name"',
  },
  {
    name: 'a blueprint whose spec is not an object',
    reason: 'never crash on input (house rules); override.go NestedSlice errors',
    blueprint: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: 'x' },
    override: doc(betaOverride),
    wantError: 'spec.components[name=Worker]: override target "Worker" is not present in the generated blueprint',
  },
  {
    name: 'override components that are not a list',
    reason: 'override.go prepareBetaComponents ("beta override spec.components must be a list")',
    blueprint: doc(betaBlueprint),
    override: beta('spec:\n  components: {Worker: {}}\n'),
    wantError: 'beta override spec.components must be a list, got an object',
  },
  {
    name: 'a v1beta1 override on a v1alpha1 blueprint is refused (deviation: upstream converts the blueprint)',
    reason: 'TestApplyVersionMatrix "alpha blueprint with beta override" converts the blueprint to v1beta1 and back; the Dynamo 1.6.1 profiler only generates v1beta1 blueprints (upstream-notes/profiler.md §1.5), so this engine refuses instead of converting back',
    blueprint: doc(alphaBlueprint),
    override: doc(betaOverride),
    wantError:
      'a nvidia.com/v1beta1 override cannot be applied to a nvidia.com/v1alpha1 blueprint here: the Dynamo 1.6.1 profiler generates nvidia.com/v1beta1 blueprints; use a nvidia.com/v1alpha1 override for this blueprint',
  },
];

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('applyDgdOverride', () => {
  it.each(successRows)('$name', ({ blueprint, override, want, wantWarnings }) => {
    const result = applyDgdOverride(deepFreeze(structuredClone(blueprint)), deepFreeze(structuredClone(override)));
    expect(result).toEqual({ ok: true, dgd: want, warnings: expect.anything() });
    expect((result as Extract<OverrideResult, { ok: true }>).warnings.map(formatOverrideWarning)).toEqual(wantWarnings ?? []);
  });

  it.each(failureRows)('refuses: $name', ({ blueprint, override, wantError }) => {
    const result = applyDgdOverride(deepFreeze(structuredClone(blueprint)), deepFreeze(structuredClone(override)));
    expect(result.ok).toBe(false);
    expect((result as Extract<OverrideResult, { ok: false }>).error).toBe(wantError);
  });

  it('gives the same result for the same input and leaves both inputs unchanged (upstream "Apply mutated the blueprint/override")', () => {
    const blueprint = doc(betaBlueprint);
    const override = doc(betaOverride);
    const before = structuredClone({ blueprint, override });
    expect(applyDgdOverride(blueprint, override)).toEqual(applyDgdOverride(blueprint, override));
    expect({ blueprint, override }).toEqual(before);
  });

  it('applying the same v1beta1 override to its own result changes nothing more (no $patch)', () => {
    const once = applyDgdOverride(doc(betaBlueprint), doc(betaOverride));
    if (!once.ok) throw new Error(once.error);
    expect(applyDgdOverride(once.dgd, doc(betaOverride))).toEqual(once);
  });
});
