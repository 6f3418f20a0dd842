/**
 * The Helm chart (infra/chart), the one source of the install manifests: `helm lint` and
 * `helm template` over the values matrix (lpx.enabled x dgdrV1Beta2.enabled), then `helm install`
 * and `helm upgrade` through that matrix on the real API server with Knative's and cert-manager's
 * CRDs installed. Knative's and cert-manager's controllers do not run here: the API server checks
 * every object against their CRD schemas, nothing more (no pods, no certificates are issued).
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { ANNOTATION_CRD_FEATURE_GATE, OWN_CRDS, chartAdmissionSettings, chartFunctions, gateCrd, ownCrds, type ChartFunction } from '../../shared/api/index.js';
import { functionSnapshotArgs } from '../../shared/cli/function-snapshot.js';
import { DEFAULT_EXPORTER_NAMESPACES } from '../../shared/domain/index.js';
import { FUNCTION_NAMES } from '../../shared/cli/serve.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { parseRenderSettings } from '../../shared/runtime/index.js';
import { CHART_DIR, ensureHelm, runHelm } from '../harness/helm.js';
import { createLineLog } from '../harness/log.js';
import { testKubeConfig } from '../harness/testing.js';
import { DEFINITIONS, unroutedChartEvents } from '../support/chart-routes.js';
import { adoptOwnCrds, externalAdmissionFlags, installCertManagerCrds, restoreHarnessCrds } from '../support/helm-release.js';

interface Rendered {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  readonly spec?: Record<string, unknown>;
  readonly webhooks?: { clientConfig: { service: { path: string } } }[];
  readonly rules?: unknown[];
}

const MATRIX = [
  { name: 'lpx off, v1beta2 off', lpx: false, v1beta2: false },
  { name: 'lpx on, v1beta2 off', lpx: true, v1beta2: false },
  { name: 'lpx on, v1beta2 on', lpx: true, v1beta2: true },
  { name: 'lpx off, v1beta2 on', lpx: false, v1beta2: true },
] as const;

const setFlags = (row: (typeof MATRIX)[number], extra: readonly string[] = []) => ['--set', [`lpx.enabled=${row.lpx}`, `dgdrV1Beta2.enabled=${row.v1beta2}`, ...extra].join(',')];

const log = createLineLog();
let helm = '';

beforeAll(async () => {
  helm = await ensureHelm({ log });
});

async function template(args: readonly string[], namespace = 'dynamo-system'): Promise<Rendered[]> {
  const result = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, '--namespace', namespace, ...args]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as Rendered | null)
    .filter((object): object is Rendered => object !== null);
}

const names = (objects: readonly Rendered[]) => objects.map((o) => `${o.kind} ${o.metadata.name}`).sort();

const BASE_OBJECTS = [
  'ApiServerSource dynamo-profile',
  'ApiServerSource dynamo-reconcile',
  'ApiServerSource dynamo-reconcile-children',
  'Broker dynamo',
  'Certificate dynamo-admission',
  'ClusterRole dynamo-dgdr-profiling-job',
  'ClusterRole dynamo-profile',
  'ClusterRole dynamo-profile-source',
  'ClusterRole dynamo-reconcile',
  'ClusterRole dynamo-reconcile-children-source',
  'ClusterRole dynamo-reconcile-source',
  'ClusterRoleBinding dynamo-profile',
  'ClusterRoleBinding dynamo-profile-source',
  'ClusterRoleBinding dynamo-reconcile',
  'ClusterRoleBinding dynamo-reconcile-children-source',
  'ClusterRoleBinding dynamo-reconcile-source',
  'CustomResourceDefinition dynamographdeploymentrequests.nvidia.com',
  'CustomResourceDefinition dynamographdeployments.nvidia.com',
  'CustomResourceDefinition dynamographdeploymentscalingadapters.nvidia.com',
  'Deployment dynamo-admission',
  'Issuer dynamo-admission-selfsigned',
  'MutatingWebhookConfiguration dynamo-admission',
  'NetworkPolicy dynamo-admission',
  'NetworkPolicy dynamo-functions',
  'PingSource dynamo-profile-dynamographdeploymentrequest-resync',
  'PingSource dynamo-reconcile-dynamographdeployment-resync',
  'PingSource dynamo-reconcile-dynamographdeploymentscalingadapter-resync',
  'PodDisruptionBudget dynamo-admission',
  'Service dynamo-admission',
  'Service dynamo-profile',
  'Service dynamo-reconcile',
  'ServiceAccount dynamo-admission',
  'ServiceAccount dynamo-profile',
  'ServiceAccount dynamo-profile-source',
  'ServiceAccount dynamo-reconcile',
  'ServiceAccount dynamo-reconcile-children-source',
  'ServiceAccount dynamo-reconcile-source',
  'Trigger dynamo-profile-configmap',
  'Trigger dynamo-profile-dynamographdeployment',
  'Trigger dynamo-profile-dynamographdeploymentrequest',
  'Trigger dynamo-profile-job',
  'Trigger dynamo-reconcile-dynamographdeployment',
  'Trigger dynamo-reconcile-dynamographdeploymentscalingadapter',
  'Trigger dynamo-reconcile-podclique',
  'Trigger dynamo-reconcile-podcliquescalinggroup',
  'Trigger dynamo-reconcile-podcliqueset',
  'Trigger dynamo-reconcile-service',
  'ValidatingWebhookConfiguration dynamo-admission',
];

describe('helm lint and template', () => {
  it.each(MATRIX)('$name: helm lint --strict passes', async (row) => {
    const result = await runHelm(helm, ['lint', '--strict', CHART_DIR, ...setFlags(row, ['profile.enabled=true'])]);
    expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });

  // values.schema.json (issue 21 item 4): helm validates values on install, upgrade, lint and
  // template; a misspelled or out-of-range value is refused with its path.
  it.each([
    { name: 'a misspelled gate', set: 'lpx.enabeld=true', want: /lpx.*additional properties 'enabeld' not allowed/i },
    { name: 'an unknown gang scheduler', set: 'render.gangScheduler=slurm', want: /render\/gangScheduler.*value must be one of 'none', 'kai', 'volcano'/ },
    { name: "a webhook timeout past the API server's 30 s", set: 'admission.timeoutSeconds=99', want: /admission\/timeoutSeconds.*maximum.*30/ },
  ])('helm template refuses $name ($set) naming the value', async ({ set, want }) => {
    const refused = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, '--set', set]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("values don't meet the specifications of the schema");
    expect(refused.stderr).toMatch(want);
  });

  it('renders the admission Deployment, the reconcile and profile functions and their wiring by default, one copy of each', async () => {
    expect(names(await template([]))).toEqual(BASE_OBJECTS);
  });

  it.each(MATRIX)('$name: every function gets the feature gates as LPX_ENABLED and DGDR_V1BETA2_ENABLED', async (row) => {
    const objects = await template(setFlags(row, ['profile.enabled=true']));
    const containers = workloads(objects).flatMap((w) => w.containers);
    expect(containers.length).toBeGreaterThanOrEqual(3);
    for (const container of containers) {
      const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
      expect(env).toEqual(expect.objectContaining({ LPX_ENABLED: String(row.lpx), DGDR_V1BETA2_ENABLED: String(row.v1beta2) }));
    }
  });

  it('each function runs its own bundle, prebuilt JavaScript with no transpiler (issue 17: "The chart runs each function\'s own bundle"; "If module evaluation still dominates, use a V8 startup snapshot"): node --snapshot-blob /app/dist/bundles/<function>.blob --, the snapshot scripts/build.mjs builds from shared/cli/function-entries/<function>.ts\'s function, started with the arguments the cold-start bench uses (functionSnapshotArgs); admission with the arguments of serve admission', async () => {
    // cleanup renders only with a gate whose kinds it takes (lpx, dgdrV1Beta2).
    const objects = await template(['--set', 'lpx.enabled=true,dgdrV1Beta2.enabled=true,profile.enabled=true']);
    const commands = Object.fromEntries(workloads(objects).map((w) => [w.name, { command: w.containers[0]?.command, args: w.containers[0]?.args }]));
    expect(commands).toEqual({
      'Deployment dynamo-admission': { command: ['/nodejs/bin/node', '--snapshot-blob', '/app/dist/bundles/admission.blob', '--'], args: ['--port', '8443', '--tls-cert', '/tls/tls.crt', '--tls-key', '/tls/tls.key'] },
      'Service dynamo-reconcile': { command: ['/nodejs/bin/node', '--snapshot-blob', '/app/dist/bundles/reconcile.blob', '--'], args: undefined },
      'Service dynamo-profile': { command: ['/nodejs/bin/node', '--snapshot-blob', '/app/dist/bundles/profile.blob', '--'], args: undefined },
      'Service dynamo-cleanup': { command: ['/nodejs/bin/node', '--snapshot-blob', '/app/dist/bundles/cleanup.blob', '--'], args: undefined },
    });
    for (const name of FUNCTION_NAMES) expect(commands[name === 'admission' ? 'Deployment dynamo-admission' : `Service dynamo-${name}`]?.command, name).toEqual(['/nodejs/bin/node', ...functionSnapshotArgs('/app/dist/bundles', name)]);
    const build = await readFile(path.join(CHART_DIR, '..', '..', 'scripts', 'build.mjs'), 'utf8');
    expect(build).toContain("const FUNCTIONS = ['admission', 'reconcile', 'profile', 'cleanup'];");
    for (const name of ['admission', 'reconcile', 'profile', 'cleanup']) {
      expect(await readFile(path.join(CHART_DIR, '..', '..', 'shared', 'cli', 'function-entries', `${name}.ts`), 'utf8')).toContain(`runBundledFunction('${name}', ${name})`);
    }
  });

  it('the reconcile function gets the render settings from values.render and operatorVersion (parseRenderSettings), parsed as the function parses them', async () => {
    const objects = await template(['--set', 'render.groveTerminationDelay=1h,render.discoveryBackend=etcd,render.gangScheduler=kai,render.mpiSshSecretName=mpi-keys,operatorVersion=1.7.0']);
    const reconcileContainer = workloads(objects).find((w) => w.name === 'Service dynamo-reconcile')?.containers[0];
    const env = Object.fromEntries((reconcileContainer?.env ?? []).map((e) => [e.name, e.value]));
    expect(parseRenderSettings(env)).toEqual({ defaultOriginVersion: '1.7.0', terminationDelay: '1h', discoveryBackend: 'etcd', scheduler: 'kai', mpiSshSecretName: 'mpi-keys' });
    const defaults = Object.fromEntries((workloads(await template([])).find((w) => w.name === 'Service dynamo-reconcile')?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(parseRenderSettings(defaults)).toEqual({ defaultOriginVersion: '1.6.1', terminationDelay: '15m', discoveryBackend: 'kubernetes', scheduler: 'none', mpiSshSecretName: 'mpi-run-ssh-secret' });
  });

  it('lpx.modelRegistryVolume is mounted read-only into the reconcile function at the file:// registry path (its builds are read from its own filesystem, as upstream reads them), only with lpx.enabled', async () => {
    const volume = '{"persistentVolumeClaim":{"claimName":"lpx-models","readOnly":true}}';
    const reconcilePod = (objects: readonly Rendered[]) => (objects.find((o) => o.kind === 'Service' && o.metadata.name === 'dynamo-reconcile')?.spec as { template: { spec: { containers: (Container & { volumeMounts?: unknown[] })[]; volumes?: unknown[] } } }).template.spec;
    const mounted = reconcilePod(await template(['--set', 'lpx.enabled=true,modelRegistryURL=file:///models', '--set-json', `lpx.modelRegistryVolume=${volume}`]));
    expect(mounted.volumes).toContainEqual({ name: 'model-registry', persistentVolumeClaim: { claimName: 'lpx-models', readOnly: true } });
    expect(mounted.containers[0]?.volumeMounts).toContainEqual({ name: 'model-registry', mountPath: '/models', readOnly: true });
    const explicit = reconcilePod(await template(['--set', 'lpx.enabled=true,modelRegistryURL=file:///models,lpx.modelRegistryMountPath=/srv/registry', '--set-json', `lpx.modelRegistryVolume=${volume}`]));
    expect(explicit.containers[0]?.volumeMounts).toContainEqual({ name: 'model-registry', mountPath: '/srv/registry', readOnly: true });
    // Off by default, and without lpx.enabled nothing LPX is mounted.
    for (const flags of [['--set', 'lpx.enabled=true,modelRegistryURL=file:///models'], ['--set', 'lpx.enabled=false,modelRegistryURL=file:///models', '--set-json', `lpx.modelRegistryVolume=${volume}`]]) {
      expect(JSON.stringify(reconcilePod(await template(flags)))).not.toContain('model-registry');
    }
    // A gs:// registry gives no mount path: the install fails naming the values to set.
    const refused = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, '--set', 'lpx.enabled=true,modelRegistryURL=gs://bucket/registry', '--set-json', `lpx.modelRegistryVolume=${volume}`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('lpx.modelRegistryVolume needs an absolute mount path: set lpx.modelRegistryMountPath, or modelRegistryURL to file:///<path> or /<path>');
  });

  it('modelExpressURL reaches the functions as MODEL_EXPRESS_URL (upstream infrastructure.modelExpressURL), and is unset by default', async () => {
    const envOf = async (flags: string[]) => workloads(await template(flags)).flatMap((w) => w.containers).map((c) => Object.fromEntries(c.env.map((e) => [e.name, e.value])));
    for (const env of await envOf([])) expect(env['MODEL_EXPRESS_URL']).toBeUndefined();
    const set = await envOf(['--set', 'lpx.enabled=true,modelExpressURL=http://model-express.dynamo-system:8001']);
    expect(set.length).toBeGreaterThanOrEqual(2);
    for (const env of set) expect(env['MODEL_EXPRESS_URL']).toBe('http://model-express.dynamo-system:8001');
  });

  it('profile renders only when enabled and cleanup whenever a gate needs it (issue 18 item 5); profile takes DGDRs, its Jobs and ConfigMaps (by label) and DGDs, plus Runs, Candidates, the Runs\' Jobs and pods (by label) and claims under dgdrV1Beta2; cleanup takes Runs, trace claims and the Runs\' Jobs under dgdrV1Beta2 and LPXGraphDeployments under lpx, with ticks', async () => {
    const off = names(await template(['--set', 'lpx.enabled=true,dgdrV1Beta2.enabled=true,profile.enabled=false']));
    expect(off.filter((n) => n.includes('profile'))).toEqual([]);
    // The gates that put finalizers and deadlines in place bring their release with them.
    expect(off).toEqual(expect.arrayContaining(['Service dynamo-cleanup', 'ApiServerSource dynamo-cleanup', 'ClusterRole dynamo-cleanup']));
    const on = await template(['--set', 'lpx.enabled=true,dgdrV1Beta2.enabled=true,profile.enabled=true']);
    expect(sourceKinds(on, 'dynamo-profile')).toEqual(['ConfigMap', 'DynamoGraphDeployment', 'DynamoGraphDeploymentCandidate', 'DynamoGraphDeploymentRequest', 'DynamoGraphDeploymentRun', 'Job', 'Job', 'PersistentVolumeClaim', 'Pod']);
    const source = on.find((o) => o.kind === 'ApiServerSource' && o.metadata.name === 'dynamo-profile');
    const resources = source?.spec?.['resources'] as { kind: string; selector?: unknown }[];
    // v1beta1 profiling Jobs by their label; a Run's Job and pods by the Run's uid label (functions/profile/run.ts).
    const runUid = { matchExpressions: [{ key: 'nvidia.com/dgdr-run-uid', operator: 'Exists' }] };
    expect(resources.filter((r) => r.kind === 'Job').map((r) => r.selector)).toEqual([{ matchLabels: { app: 'dynamo-profiler' } }, runUid]);
    expect(resources.find((r) => r.kind === 'Pod')?.selector).toEqual(runUid);
    // One Trigger per kind, however many source entries it has.
    expect(names(on).filter((n) => n.startsWith('Trigger dynamo-profile-'))).toEqual([
      'Trigger dynamo-profile-configmap',
      'Trigger dynamo-profile-dynamographdeployment',
      'Trigger dynamo-profile-dynamographdeploymentcandidate',
      'Trigger dynamo-profile-dynamographdeploymentrequest',
      'Trigger dynamo-profile-dynamographdeploymentrun',
      'Trigger dynamo-profile-job',
      'Trigger dynamo-profile-persistentvolumeclaim',
      'Trigger dynamo-profile-pod',
    ]);
    expect(sourceKinds(on, 'dynamo-cleanup')).toEqual(['DynamoGraphDeploymentRun', 'Job', 'LPXGraphDeployment', 'PersistentVolumeClaim']);
    // dgdr-reference "Trace claim lifecycle": claim deletion cancels the Runs reading it, and a Run's Job ending releases the claim; only the Runs' Jobs (by the Run's uid label).
    const cleanupSource = on.find((o) => o.kind === 'ApiServerSource' && o.metadata.name === 'dynamo-cleanup');
    expect((cleanupSource?.spec?.['resources'] as { kind: string; selector?: unknown }[]).find((r) => r.kind === 'Job')?.selector).toEqual(runUid);
    expect(names(on)).toEqual(expect.arrayContaining(['PingSource dynamo-cleanup-run-retention', 'PingSource dynamo-cleanup-lpx-deadlines', 'Service dynamo-profile', 'Service dynamo-cleanup']));
    // Only kinds with a resync route get a resync PingSource (a Candidate wakes its Run; the Runs' resync reads the Candidates).
    expect(names(on).filter((n) => n.startsWith('PingSource dynamo-profile'))).toEqual([
      'PingSource dynamo-profile-dynamographdeploymentrequest-resync',
      'PingSource dynamo-profile-dynamographdeploymentrun-resync',
    ]);
    // With neither gate there is nothing for cleanup to do.
    const bare = names(await template([]));
    expect(bare.filter((n) => n.includes('cleanup'))).toEqual([]);
  });

  // Issue 18 item 5: "no setting turns on finalizers without their release". dgdr-reference
  // "Trace claim lifecycle" (Protection): "The operator removes a Run's finalizer once the Run is
  // complete and none of its Jobs is still running, or once the Run and its Jobs are deleted".
  it.each(MATRIX)('$name: cleanup (its Knative Service, source, ServiceAccount and RBAC) renders whenever a gate that needs it is on, with no value of its own to turn it off', async (row) => {
    // No value turns it off: the values schema refuses cleanup.enabled.
    const refused = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, ...setFlags(row, ['cleanup.enabled=false'])]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('cleanup');
    const objects = await template(setFlags(row));
    const cleanup = names(objects).filter((n) => n.includes('dynamo-cleanup'));
    if (!row.lpx && !row.v1beta2) {
      expect(cleanup).toEqual([]);
      return;
    }
    expect(cleanup).toEqual(
      expect.arrayContaining([
        'Service dynamo-cleanup',
        'ServiceAccount dynamo-cleanup',
        'ApiServerSource dynamo-cleanup',
        'ClusterRole dynamo-cleanup',
        'ClusterRoleBinding dynamo-cleanup',
        'ClusterRole dynamo-cleanup-source',
        'ClusterRoleBinding dynamo-cleanup-source',
      ]),
    );
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'dynamo-cleanup');
    const rules = (role?.rules ?? []) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const grants = (resource: string) => rules.filter((r) => r.resources.includes(resource)).flatMap((r) => r.verbs);
    // The release path: claims updated without the finalizer, Runs and Jobs read.
    if (row.v1beta2) {
      expect(grants('persistentvolumeclaims')).toEqual(expect.arrayContaining(['get', 'list', 'update']));
      expect(grants('dynamographdeploymentruns')).toEqual(expect.arrayContaining(['get', 'list', 'delete']));
      expect(grants('jobs')).toEqual(expect.arrayContaining(['get', 'list', 'delete']));
    } else expect(grants('persistentvolumeclaims')).toEqual([]);
    if (row.lpx) expect(grants('lpupipelinerequests')).toEqual(expect.arrayContaining(['list', 'delete']));
    else expect(grants('lpupipelinerequests')).toEqual([]);
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'dynamo-cleanup') as unknown as { roleRef: { name: string }; subjects: { name: string; namespace: string }[] };
    expect(binding.roleRef.name).toBe('dynamo-cleanup');
    expect(binding.subjects).toEqual([expect.objectContaining({ name: 'dynamo-cleanup', namespace: 'dynamo-system' })]);
  });

  it('values.yaml has no cleanup switch and no "not part of this release"', async () => {
    const values = await readFile(path.join(CHART_DIR, 'values.yaml'), 'utf8');
    expect(values).not.toContain('not part of this release');
    expect((parseAllDocuments(values)[0]?.toJS() as { cleanup: Record<string, unknown> }).cleanup['enabled']).toBeUndefined();
  });

  // Issue 18 item 1: dev's event bridge subscribes from shared/api chart-wiring; this is what keeps it equal to the chart.
  it.each(MATRIX)('$name: the ApiServerSources (mode, kinds, selectors) and PingSources (resyncs and ticks) are exactly shared/api chartFunctions, which dev subscribes its functions from', async (row) => {
    const objects = await template(setFlags(row));
    const sources = objects
      .filter((o) => o.kind === 'ApiServerSource')
      .map((o) => ({
        name: o.metadata.name,
        mode: o.spec?.['mode'],
        resources: (o.spec?.['resources'] as { apiVersion: string; kind: string; selector?: unknown }[]).map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, ...(r.selector === undefined ? {} : { selector: r.selector }) })),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const pings = objects
      .filter((o) => o.kind === 'PingSource')
      .map((o) => {
        const extensions = (o.spec?.['ceOverrides'] as { extensions: Record<string, string> }).extensions;
        return { name: o.metadata.name, kind: extensions['kind'], ...(extensions['apiversion'] === undefined ? {} : { apiVersion: extensions['apiversion'] }) };
      })
      .sort((a, b) => a.name.localeCompare(b.name));
    const wiring = chartFunctions({ lpxEnabled: row.lpx, dgdrV1Beta2Enabled: row.v1beta2 });
    expect(sources).toEqual(
      wiring
        .flatMap((f) => f.sources)
        .map((source) => ({ name: source.name, mode: source.mode, resources: source.resources.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, ...(r.selector === undefined ? {} : { selector: r.selector }) })) }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(pings).toEqual(wiring.flatMap((f) => f.pings).map((p) => ({ ...p })).sort((a, b) => a.name.localeCompare(b.name)));
    // The Knative Services are the functions dev runs.
    expect(objects.filter((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1').map((o) => o.metadata.name).sort()).toEqual(wiring.map((f) => `dynamo-${f.name}`).sort());
  });

  // Issue 18 leftover: the profile function answered the Candidate resync PingSource NoResyncRoute.
  it.each(MATRIX)('$name: every rendered PingSource reaches a resync route and every ApiServerSource resource a route of the function it is sent to (dynamofunction)', async (row) => {
    const objects = await template(setFlags(row, ['profile.enabled=true']));
    const functionOf = (o: Rendered) => (o.spec?.['ceOverrides'] as { extensions: Record<string, string> }).extensions['dynamofunction'] as ChartFunction['name'];
    const rendered: ChartFunction[] = (['reconcile', 'profile', 'cleanup'] as const).map((name) => ({
      name,
      sources: objects
        .filter((o) => o.kind === 'ApiServerSource' && functionOf(o) === name)
        .map((o) => ({ name: o.metadata.name, mode: o.spec?.['mode'] as 'Resource' | 'Reference', resources: (o.spec?.['resources'] as { apiVersion: string; kind: string }[]).map((r) => ({ ...r, group: '', resource: '' })) })),
      pings: objects
        .filter((o) => o.kind === 'PingSource' && functionOf(o) === name)
        .map((o) => {
          const extensions = (o.spec?.['ceOverrides'] as { extensions: Record<string, string> }).extensions;
          return { name: o.metadata.name, kind: extensions['kind'] ?? '', ...(extensions['apiversion'] === undefined ? {} : { apiVersion: extensions['apiversion'] }) };
        }),
    }));
    expect(rendered.flatMap((f) => [...f.sources, ...f.pings]).length).toBe(objects.filter((o) => o.kind === 'ApiServerSource' || o.kind === 'PingSource').length);
    expect(unroutedChartEvents(rendered, DEFINITIONS)).toEqual([]);
  });

  it.each(MATRIX)('$name: our CRDs serve exactly the versions dev installs for the same gates (shared/api gateCrd): DGDR v1beta2, Runs and Candidates only with dgdrV1Beta2', async (row) => {
    const rendered = (await template(setFlags(row))).filter((o) => o.kind === 'CustomResourceDefinition');
    const servedOf = (crds: readonly { metadata: { name: string }; spec?: Record<string, unknown> }[]) =>
      Object.fromEntries(crds.map((crd) => [crd.metadata.name, (crd.spec?.['versions'] as { name: string; served: boolean }[]).filter((v) => v.served).map((v) => v.name)]));
    const dev = Object.values(ownCrds()).flatMap((crd) => {
      const gated = gateCrd(crd as unknown as { metadata: Record<string, unknown>; spec: { versions: { name: string }[] } }, { lpxEnabled: row.lpx, dgdrV1Beta2Enabled: row.v1beta2 });
      return gated === undefined ? [] : [gated as unknown as Rendered];
    });
    expect(servedOf(rendered)).toEqual(servedOf(dev));
    expect(servedOf(rendered)['dynamographdeploymentrequests.nvidia.com']).toEqual(row.v1beta2 ? ['v1beta1', 'v1alpha1', 'v1beta2'] : ['v1beta1', 'v1alpha1']);
  });

  it('admission gets the replica-modifier identities dev gives its admission server (shared/api chartAdmissionSettings): the reconcile function\'s ServiceAccount', async () => {
    for (const namespace of ['dynamo-system', 'other']) {
      const objects = await template([], namespace);
      const deployment = workloads(objects).find((w) => w.name === 'Deployment dynamo-admission');
      const env = Object.fromEntries((deployment?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      expect(env['DGD_REPLICAS_MODIFIERS']).toBe(chartAdmissionSettings(namespace).replicasModifiers.join(','));
      expect(env['WEBHOOK_TIMEOUT_SECONDS']).toBe(String(chartAdmissionSettings(namespace).webhookTimeoutSeconds));
    }
  });

  it('hardware discovery trusts the exporter namespaces the functions trust when GPU_EXPORTER_NAMESPACES is unset, as dev does (gpu-operator), in the profile function and admission alike; a list set is passed joined by commas (issue 20 item 1)', async () => {
    const envOf = (objects: readonly Rendered[], name: string) => Object.fromEntries((workloads(objects).find((w) => w.name === name)?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    const defaults = await template(['--set', 'dgdrV1Beta2.enabled=true']);
    for (const name of ['Service dynamo-profile', 'Deployment dynamo-admission']) expect(envOf(defaults, name)['GPU_EXPORTER_NAMESPACES']).toBe(DEFAULT_EXPORTER_NAMESPACES.join(','));
    const named = await template(['--set', 'dgdrV1Beta2.enabled=true,hardwareDiscovery.exporterNamespaces={gpu-operator,intel-xpu}']);
    for (const name of ['Service dynamo-profile', 'Deployment dynamo-admission']) expect(envOf(named, name)['GPU_EXPORTER_NAMESPACES']).toBe('gpu-operator,intel-xpu');
  });

  it("the reconcile ApiServerSource watches only the kinds the reconcile function's routes take (the LPX ones with lpx.enabled)", async () => {
    const { default: reconcile } = await import('../../functions/reconcile/index.js');
    // The DGD's children come in through their own Resource-mode source (templates/reconcile/children.yaml).
    const withLpx = await template(['--set', 'lpx.enabled=true']);
    expect([...sourceKinds(withLpx, 'dynamo-reconcile'), ...sourceKinds(withLpx, 'dynamo-reconcile-children')].sort()).toEqual(reconcile.routes.map((route) => route.kind).sort());
    expect(sourceKinds(await template([]), 'dynamo-reconcile-children')).toEqual(['PodClique', 'PodCliqueScalingGroup', 'PodCliqueSet', 'Service']);
    // LPX runtime ConfigMaps (upstream's LPX controller watches its owned ConfigMaps): label-selected, so ordinary ConfigMaps are not delivered.
    expect(sourceKinds(withLpx, 'dynamo-reconcile-children')).toEqual(['ConfigMap', 'PodClique', 'PodCliqueScalingGroup', 'PodCliqueSet', 'Service']);
    const children = withLpx.find((o) => o.kind === 'ApiServerSource' && o.metadata.name === 'dynamo-reconcile-children');
    expect((children?.spec?.['resources'] as { kind: string }[]).find((r) => r.kind === 'ConfigMap')).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      selector: { matchExpressions: [{ key: 'lpx.nvidia.com/deployment-uid', operator: 'Exists' }] },
    });
    const sourceRole = withLpx.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'dynamo-reconcile-children-source') as { rules?: unknown[] } | undefined;
    expect(sourceRole?.rules).toContainEqual({ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] });
    const disabledRole = (await template([])).find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'dynamo-reconcile-children-source') as { rules?: { resources: string[] }[] } | undefined;
    expect(disabledRole?.rules?.flatMap((r) => r.resources)).toEqual(['podcliquesets', 'podcliques', 'podcliquescalinggroups', 'services']);
    expect(sourceKinds(await template([]), 'dynamo-reconcile')).toEqual(['DynamoGraphDeployment', 'DynamoGraphDeploymentScalingAdapter']);
  });

  it('each Trigger filters on its kind and function and calls that function; the Broker has the class and delivery of the values', async () => {
    const objects = await template(['--set', 'broker.class=Kafka']);
    const trigger = objects.find((o) => o.kind === 'Trigger' && o.metadata.name === 'dynamo-reconcile-dynamographdeployment');
    expect(trigger?.spec).toEqual({
      broker: 'dynamo',
      filter: { attributes: { kind: 'DynamoGraphDeployment', dynamofunction: 'reconcile' } },
      subscriber: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'dynamo-reconcile' } },
    });
    const broker = objects.find((o) => o.kind === 'Broker');
    expect(broker?.metadata.annotations).toEqual({ 'eventing.knative.dev/broker.class': 'Kafka' });
    expect(broker?.spec).toEqual({ delivery: { retry: 10, backoffPolicy: 'exponential', backoffDelay: 'PT0.2S', timeout: 'PT30S' } });
  });

  it('the reconcile Knative Service scales to zero with concurrency and timeout set', async () => {
    const service = (await template([])).find((o) => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1' && o.metadata.name === 'dynamo-reconcile');
    const revision = (service?.spec as { template: { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> } }).template;
    expect(revision.metadata.annotations).toEqual({
      'autoscaling.knative.dev/class': 'kpa.autoscaling.knative.dev',
      'autoscaling.knative.dev/min-scale': '0',
      'autoscaling.knative.dev/max-scale': '10',
      'autoscaling.knative.dev/target': '8',
    });
    expect(revision.spec).toEqual(expect.objectContaining({ containerConcurrency: 16, timeoutSeconds: 120, serviceAccountName: 'dynamo-reconcile' }));
  });

  it('every workload runs non-root, without privilege escalation, on a read-only root filesystem, with seccomp RuntimeDefault and no capabilities', async () => {
    const objects = await template(['--set', 'lpx.enabled=true,dgdrV1Beta2.enabled=true,profile.enabled=true']);
    for (const { name, containers } of workloads(objects)) {
      for (const container of containers) {
        expect(container.securityContext, name).toEqual(
          expect.objectContaining({
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          }),
        );
      }
    }
  });

  it('the webhook configurations point at the paths the admission function serves, with the CA injected from the admission Certificate', async () => {
    const { webhookPath } = await import('../../functions/admission/index.js');
    const configs = (await template([], 'ns-x')).filter((o) => o.kind.endsWith('WebhookConfiguration'));
    expect(configs.flatMap((c) => c.webhooks?.map((w) => w.clientConfig.service.path) ?? []).sort()).toEqual(
      (['mutate', 'validate'] as const).flatMap((kind) => [webhookPath({ kind, version: 'v1beta1' }), webhookPath({ kind, version: 'v1beta1', resource: 'dynamographdeploymentrequests' })]).sort(),
    );
    for (const config of configs) expect(config.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe('ns-x/dynamo-admission');
  });

  it.each(MATRIX)('$name: the DGDR CRD serves v1beta2, admission registers the v1beta2 webhooks and may list Nodes, only under dgdrV1Beta2.enabled (upstream crd-apply strips v1beta2 with its gate off, upstream-notes/dgdr.md §5)', async (row) => {
    const { V1BETA2_ROUTES, webhookPath } = await import('../../functions/admission/index.js');
    const objects = await template(setFlags(row));
    const dgdr = objects.find((o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'dynamographdeploymentrequests.nvidia.com');
    expect(((dgdr?.spec?.['versions'] ?? []) as { name: string }[]).map((v) => v.name)).toEqual(row.v1beta2 ? ['v1beta1', 'v1alpha1', 'v1beta2'] : ['v1beta1', 'v1alpha1']);
    const paths = objects.filter((o) => o.kind.endsWith('WebhookConfiguration')).flatMap((c) => c.webhooks?.map((w) => w.clientConfig.service.path) ?? []);
    for (const route of V1BETA2_ROUTES) expect(paths.includes(webhookPath(route))).toBe(row.v1beta2);
    expect(names(objects).filter((name) => name.endsWith(' dynamo-admission') && name.startsWith('ClusterRole'))).toEqual(row.v1beta2 ? ['ClusterRole dynamo-admission', 'ClusterRoleBinding dynamo-admission'] : []);
    const account = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === 'dynamo-admission') as unknown as { automountServiceAccountToken: boolean };
    expect(account.automountServiceAccountToken).toBe(row.v1beta2);
  });

  it('v1beta2 hardware discovery from exporters (upstream-notes/dgdr.md §3.2): the admission role lists Nodes and pods, its scrapes get the webhooks\' timeoutSeconds as WEBHOOK_TIMEOUT_SECONDS, and its NetworkPolicy restricts ingress only, so the DCGM (9400) and Intel XPU (8080) exporters stay reachable', async () => {
    const objects = await template(['--set', 'dgdrV1Beta2.enabled=true,admission.timeoutSeconds=12']);
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'dynamo-admission');
    expect(role?.rules).toEqual([
      { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['list'] },
      // The DGD validating webhook reads the ClusterTopologyBinding a creation names (upstream readGroveClusterTopology).
      { apiGroups: ['grove.io'], resources: ['clustertopologybindings'], verbs: ['get'] },
    ]);
    const timeouts = objects.filter((o) => o.kind.endsWith('WebhookConfiguration')).flatMap((c) => (c.webhooks as unknown as { timeoutSeconds: number }[]).map((w) => w.timeoutSeconds));
    expect(new Set(timeouts)).toEqual(new Set([12]));
    const admission = workloads(objects).find((w) => w.name === 'Deployment dynamo-admission');
    expect(admission?.containers[0]?.env.find((e) => e.name === 'WEBHOOK_TIMEOUT_SECONDS')?.value).toBe('12');
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'dynamo-admission');
    expect(policy?.spec?.['policyTypes']).toEqual(['Ingress']);
    expect(policy?.spec?.['egress']).toBeUndefined();
  });

  it('installs our CRDs exactly as `dynamo-fn crds` generates them (all of them with both gates on), kept on uninstall (helm.sh/resource-policy: keep)', async () => {
    const crds = (await template(['--set', 'lpx.enabled=true,dgdrV1Beta2.enabled=true'])).filter((o) => o.kind === 'CustomResourceDefinition');
    const generated = Object.values(ownCrds()) as unknown as Rendered[];
    expect(crds.map((crd) => crd.metadata.name).sort()).toEqual(generated.map((crd) => crd.metadata.name).sort());
    expect(OWN_CRDS.length).toBe(generated.length);
    for (const crd of crds) {
      const source = generated.find((g) => g.metadata.name === crd.metadata.name);
      expect(crd.spec).toEqual(source?.spec);
      expect(crd.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    }
  });
});

describe('chart CRD template (templates/crds.yaml), on a copy of the chart with extra CRD files', () => {
  // Stand-ins for kinds other branches add: one with a conversion webhook (DGD v1alpha1 served
  // through functions/admission /convert), one behind the lpx gate (ANNOTATION_CRD_FEATURE_GATE).
  const conversionCrd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'converteds.nvidia.com' },
    spec: {
      group: 'nvidia.com',
      names: { kind: 'Converted', plural: 'converteds' },
      scope: 'Namespaced',
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'placeholder', namespace: 'placeholder', path: '/convert' } } } },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  };
  const gatedCrd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gateds.nvidia.com', annotations: { [ANNOTATION_CRD_FEATURE_GATE]: 'lpx' } },
    spec: { group: 'nvidia.com', names: { kind: 'Gated', plural: 'gateds' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
  };
  let chartCopy = '';

  beforeAll(async () => {
    chartCopy = path.join(await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-chart-')), 'chart');
    await cp(CHART_DIR, chartCopy, { recursive: true });
    await writeFile(path.join(chartCopy, 'files', 'crds', 'nvidia.com_converteds.yaml'), stringify(conversionCrd));
    await writeFile(path.join(chartCopy, 'files', 'crds', 'nvidia.com_gateds.yaml'), stringify(gatedCrd));
  });
  afterAll(async () => {
    await rm(path.dirname(chartCopy), { recursive: true, force: true });
  });

  const crdsOf = async (args: readonly string[]) => {
    const result = await runHelm(helm, ['template', 'dynamo-fn', chartCopy, '--namespace', 'ns-y', '--show-only', 'templates/crds.yaml', ...args]);
    expect(result.code).toBe(0);
    return parseAllDocuments(result.stdout).map((d) => d.toJS() as Rendered).filter((o) => o !== null);
  };

  it("a CRD's conversion webhook calls this release's admission Service, with the CA injected from its Certificate", async () => {
    const crd = (await crdsOf([])).find((o) => o.metadata.name === 'converteds.nvidia.com');
    expect(crd?.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe('ns-y/dynamo-admission');
    expect((crd?.spec?.['conversion'] as { webhook: { clientConfig: unknown } }).webhook.clientConfig).toEqual({ service: { name: 'dynamo-admission', namespace: 'ns-y', path: '/convert' } });
  });

  it('a CRD behind a feature gate is installed only when the gate is on', async () => {
    expect((await crdsOf(['--set', 'lpx.enabled=false'])).map((o) => o.metadata.name)).not.toContain('gateds.nvidia.com');
    expect((await crdsOf(['--set', 'lpx.enabled=true'])).map((o) => o.metadata.name)).toContain('gateds.nvidia.com');
  });
});

describe('helm install and upgrade on the real API server', () => {
  const kubeConfig = testKubeConfig();
  const kube: Kube = createKube(kubeConfig, { fieldManager: 'chart-test' });
  const namespace = `dynamo-chart-${randomBytes(3).toString('hex')}`;
  const release = 'dynamo-fn';
  let kubeconfig = '';
  let installed = false;

  beforeAll(async () => {
    kubeconfig = process.env['KUBECONFIG'] ?? '';
    // cert-manager's CRDs (from its Go module's deploy/crds), as a cluster with cert-manager has them.
    await installCertManagerCrds(kube, log);
    await adoptOwnCrds(kube, release, namespace);
  });

  afterAll(async () => {
    // The release's webhooks (failurePolicy Fail, no pods behind them here) would deny every DGD
    // write of later test files: uninstall.
    if (installed) {
      const result = await runHelm(helm, ['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '60s'], { kubeconfig });
      expect(result.stderr).toBe('');
    }
    // helm replaced our CRDs with what the matrix rendered (v1beta2 off drops the DGDR's v1beta2 version); later files need them as the global setup installed them.
    await restoreHarnessCrds(kube, inject('admissionUrl'), inject('admissionCaBundle'));
  });

  it.each(MATRIX)('$name: helm upgrade --install applies every object in one step, and each is stored', async (row) => {
    const result = await runHelm(
      helm,
      ['upgrade', '--install', release, CHART_DIR, '--namespace', namespace, '--create-namespace', ...setFlags(row, ['profile.enabled=true']), ...externalAdmissionFlags(inject('admissionUrl'), inject('admissionCaBundle')), '--timeout', '90s'],
      { kubeconfig },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    installed = true;
    const manifest = await runHelm(helm, ['get', 'manifest', release, '--namespace', namespace], { kubeconfig });
    const objects = parseAllDocuments(manifest.stdout)
      .map((d) => d.toJS() as Rendered | null)
      .filter((o): o is Rendered => o !== null);
    expect(objects.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual(expect.arrayContaining(BASE_OBJECTS));
    const missing: string[] = [];
    for (const object of objects) {
      const stored = await kube.get({ apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }) });
      if (stored === undefined) missing.push(`${object.kind} ${object.metadata.name}`);
    }
    expect(missing).toEqual([]);
    const lpxEnv = objects.filter((o) => o.kind === 'Deployment').flatMap((o) => JSON.stringify(o)).join('');
    expect(lpxEnv).toContain(`"name":"LPX_ENABLED","value":"${row.lpx}"`);
  });

  it('helm uninstall removes the release but keeps the CRDs (and so every DGD)', async () => {
    const result = await runHelm(helm, ['uninstall', release, '--namespace', namespace, '--wait', '--timeout', '60s'], { kubeconfig });
    expect(result.code).toBe(0);
    installed = false;
    expect(await kube.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'dynamo-admission' })).toBeUndefined();
    expect(await kube.get({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', namespace, name: 'dynamo-reconcile' })).toBeUndefined();
    expect(await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'dynamographdeployments.nvidia.com' })).toBeDefined();
  });
});

interface Container {
  readonly name: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly env: { name: string; value?: string }[];
  readonly securityContext?: Record<string, unknown>;
}

/** The containers of every Deployment and Knative Service in a rendering. */
function workloads(objects: readonly Rendered[]): { name: string; containers: Container[] }[] {
  return objects
    .filter((o) => o.kind === 'Deployment' || (o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1'))
    .map((o) => ({ name: `${o.kind} ${o.metadata.name}`, containers: (o.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers }));
}

function sourceKinds(objects: readonly Rendered[], name: string): string[] {
  const source = objects.find((o) => o.kind === 'ApiServerSource' && o.metadata.name === name);
  return ((source?.spec?.['resources'] as { kind: string }[] | undefined) ?? []).map((r) => r.kind).sort();
}
