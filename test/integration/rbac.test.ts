/**
 * Least privilege, proven on the real API server: the reconcile function runs with a
 * TokenRequest token of a ServiceAccount bound to exactly the chart's ClusterRole
 * (infra/chart/templates/reconcile/rbac.yaml, rendered by `helm template`, lpx.enabled=false), and
 *
 * - with the whole role, DGD and DGDSA events and resyncs are handled (Done) and every write
 *   lands (PodCliqueSet, Services, status, Events, the adapter, the scaled component, the
 *   adapter's status, the adapter's deletion): the role is enough;
 * - with any one verb of the role taken away, the same run comes out differently (a 403 the
 *   function reports, or a write missing): no verb is beyond what the function uses.
 *
 * The bindings are copies with test-unique names (the chart's own names are left to
 * chart.test.ts); Grove's controllers do not run here, so the DGD stays Ready=False.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { DGD_KIND, DGD_V1BETA1, DGDSA_KIND, DGDSA_V1BETA1 } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { CHART_DIR, ensureHelm, runHelm } from '../harness/helm.js';
import { createLineLog } from '../harness/log.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { aDgd } from '../support/builders.js';
import { eventually } from '../support/eventually.js';

interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}
/** One (group, resource, verb) a role grants. */
interface Grant {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
}

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
let namespace = '';
let tmpDir = '';
let chartRules: PolicyRule[] = [];

const grants = (rules: readonly PolicyRule[]): Grant[] =>
  rules.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => ({ group, resource, verb })))));
const label = (g: Grant) => `${g.verb} ${g.group === '' ? 'core' : g.group}/${g.resource}`;

beforeAll(async () => {
  const helm = await ensureHelm({ log: createLineLog() });
  const rendered = await runHelm(helm, ['template', 'dynamo-fn', CHART_DIR, '--namespace', 'dynamo-system', '--show-only', 'templates/reconcile/rbac.yaml']);
  expect(rendered.code).toBe(0);
  const role = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as { kind: string; rules?: PolicyRule[] })
    .find((o) => o.kind === 'ClusterRole');
  chartRules = role?.rules ?? [];
  namespace = await createTestNamespace(kubeConfig, 'rbac');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-'));
});

afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

/** A ServiceAccount bound to a ClusterRole of exactly `rules`; resolves once RBAC answers for it. */
async function serviceAccountWith(rules: readonly PolicyRule[]): Promise<string> {
  const name = `reconcile-${randomBytes(3).toString('hex')}`;
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
  if (probe !== undefined) {
    await eventually(`RBAC for ${name}`, async () => ((await canI(name, probe)) ? true : undefined), 15_000);
  }
  return name;
}

async function canI(serviceAccount: string, grant: Grant): Promise<boolean> {
  const api = kubeConfig.makeApiClient(AuthorizationV1Api);
  const result = await api.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${namespace}:${serviceAccount}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        resourceAttributes: { group: grant.group, resource: grant.resource.split('/')[0] ?? '', subresource: grant.resource.split('/')[1] ?? '', verb: grant.verb, namespace },
      },
    },
  });
  return result.status?.allowed === true;
}

/** A kubeconfig file for the ServiceAccount: the test server and CA, and a TokenRequest token. */
async function kubeconfigFor(serviceAccount: string): Promise<string> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  expect(token).toBeTruthy();
  const cluster = kubeConfig.getCurrentCluster();
  const file = path.join(tmpDir, `${serviceAccount}.kubeconfig`);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } }],
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: serviceAccount } }],
      'current-context': 'test',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** What one run of the function did: its outcomes (from /metrics) and the writes stored. */
interface RunResult {
  /** Outcomes of the add and update events of this run. */
  readonly eventOutcomes: string[];
  /** Whether a resync's listKeys of DGDs and of adapters succeeds. */
  readonly resyncListed: { readonly dgd: boolean; readonly dgdsa: boolean };
  readonly podCliqueSet: boolean;
  readonly services: number;
  readonly readyCondition: boolean;
  readonly events: number;
  /** The DGDSA the function created for the scalingAdapter component. */
  readonly adapterCreated: boolean;
  /** The component's replicas after the adapter asked for 3 (written by the function's PUT). */
  readonly scaledReplicas: number | undefined;
  /** The adapter's status.replicas (written by the function). */
  readonly adapterStatusReplicas: number | undefined;
  /** The adapter is gone after the component opted out. */
  readonly adapterDeleted: boolean;
}

/**
 * Runs the reconcile function (its real CloudEvents host) with the ServiceAccount's token over
 * a DGD whose worker has `scalingAdapter`: an add event (PodCliqueSet, Services, status, Event,
 * the adapter), the adapter asking for 3 replicas and its event (the DGD component scaled, the
 * adapter status), the worker opting out and its event (the adapter deleted), then the resync
 * listing of DGDs and of adapters. Reads the outcome counters and the stored objects.
 */
async function runReconcileAs(serviceAccount: string): Promise<RunResult> {
  const kubeconfigPath = await kubeconfigFor(serviceAccount);
  const name = `rbac-${randomBytes(3).toString('hex')}`;
  const adapterName = `${name}-worker`;
  const dgd = aDgd({ metadata: { name, namespace } });
  const { uid: _uid, ...metadata } = dgd.metadata;
  const applyDgd = (withAdapter: boolean) =>
    admin.apply(
      {
        apiVersion: dgd.apiVersion,
        kind: dgd.kind,
        metadata: { ...metadata, name, namespace },
        spec: { ...dgd.spec, components: dgd.spec.components.map((c) => (c.name === 'worker' && withAdapter ? { ...c, scalingAdapter: {} } : c)) },
      } as unknown as KubeObject,
      { force: true },
    );
  await applyDgd(true);
  const server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath }), log, host: '127.0.0.1' });
  const adapterRef = { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace, name: adapterName };
  try {
    const send = async (type: string, extensions: Record<string, string>, data: unknown) => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': randomBytes(8).toString('hex'),
          'ce-source': 'https://127.0.0.1',
          'ce-type': type,
          ...Object.fromEntries(Object.entries(extensions).map(([key, value]) => [`ce-${key}`, value])),
        },
        body: JSON.stringify(data),
      });
      await response.arrayBuffer();
    };
    const refEvent = (type: string, kind: string, apiVersion: string, objectName: string) =>
      send(`dev.knative.apiserver.ref.${type}`, { kind, apiversion: apiVersion, name: objectName, namespace }, { apiVersion, kind, name: objectName, namespace });

    await refEvent('add', DGD_KIND, DGD_V1BETA1, name);
    const adapterCreated = (await admin.get(adapterRef)) !== undefined;
    if (adapterCreated) {
      // The adapter asks for 3 replicas, as an HPA writing its scale subresource would.
      await admin.apply({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, metadata: { name: adapterName, namespace }, spec: { dgdRef: { name, serviceName: 'worker' }, replicas: 3 } } as unknown as KubeObject, { force: true });
      await refEvent('update', DGDSA_KIND, DGDSA_V1BETA1, adapterName);
    }
    const scaled = await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    const scaledReplicas = (scaled?.['spec'] as { components?: { name: string; replicas?: number }[] } | undefined)?.components?.find((c) => c.name === 'worker')?.replicas;
    const adapterStatusReplicas = ((await admin.get(adapterRef))?.['status'] as { replicas?: number } | undefined)?.replicas;
    await applyDgd(false);
    await refEvent('update', DGD_KIND, DGD_V1BETA1, name);
    const adapterDeleted = adapterCreated && (await admin.get(adapterRef)) === undefined;
    const scrape = async () => (await fetch(`${server.url.replace(/\/$/, '')}/metrics`)).text();
    const outcomesIn = (metrics: string, metric: string, kind?: string) =>
      [...metrics.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\d+)`, 'gm'))]
        .filter((m) => Number(m[2]) > 0 && (kind === undefined || (m[1] ?? '').includes(`kind="${kind}"`)))
        .map((m) => /outcome="(\w+)"/.exec(m[1] ?? '')?.[1] ?? '')
        .sort();
    const eventOutcomes = outcomesIn(await scrape(), 'dynamo_fn_events_total');
    // A resync lists every object of a kind (cluster-wide, other test files' objects too) through
    // the route's listKeys, then reconciles each as above: run the listKeys of the DGD and DGDSA
    // routes with the same token, which is the part of a resync the role must allow.
    const deps = await reconcile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
    const lists = async (kind: string) => {
      const route = reconcile.routes.find((r) => r.kind === kind);
      return route?.listKeys === undefined ? false : route.listKeys(deps).then(() => true, () => false);
    };
    const resyncListed = { dgd: await lists(DGD_KIND), dgdsa: await lists(DGDSA_KIND) };
    const stored = await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    const conditions = (stored?.['status'] as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
    const services = (await admin.list('v1', 'Service', namespace)).filter((svc) => svc.metadata.name.startsWith(`${name}-`));
    const events = (await admin.list('events.k8s.io/v1', 'Event', namespace)).filter((e) => [name, adapterName].includes((e['regarding'] as { name?: string } | undefined)?.name ?? ''));
    return {
      eventOutcomes: [...new Set(eventOutcomes.filter((o) => o !== 'Skipped'))],
      resyncListed,
      podCliqueSet: (await admin.get({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', namespace, name })) !== undefined,
      services: services.length,
      readyCondition: conditions.some((c) => c.type === 'Ready'),
      events: events.length,
      adapterCreated,
      scaledReplicas,
      adapterStatusReplicas,
      adapterDeleted,
    };
  } finally {
    await server.close();
    // The next run's resync then meets only its own DGD of this file.
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    await admin.delete(adapterRef);
  }
}

/** The rules without one grant. */
function without(rules: readonly PolicyRule[], drop: Grant): PolicyRule[] {
  return grants(rules)
    .filter((g) => !(g.group === drop.group && g.resource === drop.resource && g.verb === drop.verb))
    .map((g) => ({ apiGroups: [g.group], resources: [g.resource], verbs: [g.verb] }));
}

describe('reconcile ServiceAccount (chart templates/reconcile/rbac.yaml)', () => {
  let full: RunResult;

  it('has no wildcard, no watch or deletecollection (a level-triggered function never sends them), update only for the DGD replicas an adapter drives, delete only for adapters', () => {
    const all = grants(chartRules);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((g) => g.group === '*' || g.resource === '*' || g.verb === '*' || ['watch', 'deletecollection'].includes(g.verb)).map(label)).toEqual([]);
    expect(all.filter((g) => g.verb === 'update' || g.verb === 'delete').map(label).sort()).toEqual([
      'delete core/services',
      'delete grove.io/podcliquesets',
      'delete nvidia.com/dynamographdeploymentscalingadapters',
      'update nvidia.com/dynamographdeployments',
    ]);
  });

  it('is enough: with a TokenRequest token of the chart role, DGD and adapter events and resyncs are Done and every write lands', async () => {
    full = await runReconcileAs(await serviceAccountWith(chartRules));
    expect(full).toEqual({
      eventOutcomes: ['Done'],
      resyncListed: { dgd: true, dgdsa: true },
      podCliqueSet: true,
      services: expect.any(Number) as number,
      readyCondition: true,
      events: expect.any(Number) as number,
      adapterCreated: true,
      scaledReplicas: 3,
      adapterStatusReplicas: 3,
      adapterDeleted: true,
    });
    expect(full.services).toBeGreaterThan(0);
    expect(full.events).toBeGreaterThan(2);
  });

  /**
   * Grants this run does not reach, each needed on a path another test proves under the admin
   * token: a replica change through Grove's scale subresources needs PodCliques, which only
   * Grove creates (test/integration/lifecycle.test.ts acts as Grove), and deleting a child the
   * DGD no longer renders needs a rendered component removed (lifecycle.test.ts). Running them
   * under this role is the next step; until then they are listed, not assumed.
   */
  const NOT_EXERCISED_HERE = ['patch grove.io/podcliques/scale', 'patch grove.io/podcliquescalinggroups/scale', 'delete grove.io/podcliquesets', 'delete core/services'];

  it('grants no verb beyond what the function uses: without any one grant, the same run comes out differently', async () => {
    const unneeded: string[] = [];
    for (const grant of grants(chartRules).filter((g) => !NOT_EXERCISED_HERE.includes(label(g)))) {
      const result = await runReconcileAs(await serviceAccountWith(without(chartRules, grant)));
      if (JSON.stringify(result) === JSON.stringify(full)) unneeded.push(label(grant));
    }
    expect(unneeded).toEqual([]);
  });
});
