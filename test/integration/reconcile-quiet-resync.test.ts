/**
 * A quiet resync costs the API server one LIST per kind and writes nothing (issue 17 item 3: "a
 * resync of those unchanged DGDs makes 0 writes and at most one LIST (plus its pages) per kind
 * read"; "A pass that finds nothing to change writes nothing"), while a hand edit of a field the
 * function set is still put back.
 *
 * This file starts its own control plane (no controllers; every CRD the chart ships, Grove's and
 * Knative's) so that a resync, which covers every namespace, meets only this file's DGDs; every
 * request of the function goes through a loopback recorder (test/support/rbac.ts), which notes
 * the verb and resource of each as the API server's authorizer sees it. No Grove runs: the DGDs
 * stay pending, with a status that no longer changes once their children exist.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1 } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { RESYNC_EVENT_TYPE, defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver.js';
import { ensureKubeBinaries } from '../harness/binaries.js';
import { defaultCrdFiles } from '../harness/crds.js';
import { createLineLog } from '../harness/log.js';
import { aComponent, aDgd } from '../support/builders.js';
import { startRequestRecorder, type RecordedRequest, type RequestRecorder } from '../support/rbac.js';
import { WRITE_VERBS, countByResource, recordedKubeconfig } from '../support/request-count.js';

const NAMESPACE = 'quiet';
const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });

let plane: ControlPlane;
let recorder: RequestRecorder;
let server: FunctionServer;
let user: Kube;
let dir: string;

/** Five DGDs: plain, a scaling adapter on the worker, a prefill rendered as a scaling group, one component, three components. */
function graphs(): KubeObject[] {
  const specs = [
    [aComponent('frontend', 'frontend'), aComponent('worker', 'worker')],
    [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { scalingAdapter: {} })],
    [aComponent('frontend', 'frontend'), aComponent('prefill', 'prefill', { experimental: { grove: { forceScalingGroup: true } } }), aComponent('worker', 'worker')],
    [aComponent('frontend', 'frontend')],
    [aComponent('frontend', 'frontend'), aComponent('decode', 'worker', { replicas: 3 }), aComponent('prefill', 'prefill')],
  ];
  return specs.map((components, index) => {
    const { uid: _uid, ...metadata } = aDgd().metadata;
    const dgd = aDgd({ spec: { components } });
    return { apiVersion: dgd.apiVersion, kind: dgd.kind, metadata: { ...metadata, name: `quiet-${index}`, namespace: NAMESPACE }, spec: dgd.spec } as unknown as KubeObject;
  });
}

/** Sends one Reference-mode API event naming an object; returns the requests the function made for it. */
async function apiEvent(apiVersion: string, kind: string, name: string): Promise<RecordedRequest[]> {
  const from = recorder.requests.length;
  const answer = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': `event-${from}`, 'ce-source': '/test', 'ce-type': 'dev.knative.apiserver.ref.update', 'ce-kind': kind, 'ce-apiversion': apiVersion, 'ce-name': name, 'ce-namespace': NAMESPACE },
    body: JSON.stringify({ apiVersion, kind, name, namespace: NAMESPACE }),
  });
  await answer.arrayBuffer();
  expect(answer.status).toBe(204);
  return recorder.requests.slice(from);
}

/** Sends one resync and returns the requests the function made for it. */
async function resync(): Promise<RecordedRequest[]> {
  const from = recorder.requests.length;
  const answer = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': `resync-${from}`, 'ce-source': '/test', 'ce-type': RESYNC_EVENT_TYPE },
    body: '{}',
  });
  await answer.arrayBuffer();
  expect(answer.status).toBe(204);
  return recorder.requests.slice(from);
}

const writesOf = (requests: readonly RecordedRequest[]) => requests.filter((r) => WRITE_VERBS.has(r.verb));

beforeAll(async () => {
  const lineLog = createLineLog({ verbose: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' });
  plane = await startControlPlane({ binaries: await ensureKubeBinaries({ log: lineLog }), crdFiles: await defaultCrdFiles(), log: lineLog, withControllerManager: false });
  user = createKube(plane.kubeConfig, { fieldManager: 'kubectl' });
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  for (const graph of graphs()) await user.apply(graph, { force: true });
  recorder = await startRequestRecorder(plane.kubeConfig);
  dir = await mkdtemp(path.join(tmpdir(), 'quiet-resync-'));
  const kubeconfigPath = await recordedKubeconfig(dir, recorder.url, plane.token);
  server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath }), log, host: '127.0.0.1' });
}, 300_000);

afterAll(async () => {
  await server?.close();
  await recorder?.close();
  await plane?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a resync of unchanged DGDs (issue 17 item 3)', () => {
  it('converges, then a resync of the unchanged DGDs makes 0 writes and one LIST per kind it reads, and no other read', async () => {
    // The first resync creates the children and reports; the next one sees the children it made
    // (the status moves from "resource not found" on); then nothing changes any more.
    const first = await resync();
    expect(writesOf(first).length).toBeGreaterThan(0);
    let settled: RecordedRequest[] = [];
    for (let round = 0; round < 3; round += 1) {
      settled = await resync();
      if (writesOf(settled).length === 0) break;
    }
    expect(writesOf(settled)).toEqual([]);

    const quiet = await resync();
    expect(writesOf(quiet)).toEqual([]);
    // One LIST (one page: fewer than 500 objects) per kind, every namespace; no GET, no per-DGD LIST.
    // The DGDs render Kubernetes discovery's ServiceAccount, Role and RoleBinding (the default discovery backend).
    expect(countByResource(quiet)).toEqual({
      'list core/serviceaccounts': 1,
      'list core/services': 1,
      'list grove.io/podcliques': 1,
      'list grove.io/podcliquescalinggroups': 1,
      'list grove.io/podcliquesets': 1,
      'list nvidia.com/dynamographdeployments': 1,
      'list nvidia.com/dynamographdeploymentscalingadapters': 1,
      'list rbac.authorization.k8s.io/rolebindings': 1,
      'list rbac.authorization.k8s.io/roles': 1,
    });
    expect(quiet.every((r) => r.namespace === undefined)).toBe(true);
    // Each DGD kept the status it had: written once, not again.
    const stored = await user.list(DGD_V1BETA1, DGD_KIND, NAMESPACE);
    expect(stored.map((d) => d.metadata.name).sort()).toEqual(['quiet-0', 'quiet-1', 'quiet-2', 'quiet-3', 'quiet-4']);
    for (const dgd of stored) expect((dgd['status'] as { conditions?: unknown[] } | undefined)?.conditions?.length ?? 0).toBeGreaterThan(0);
  }, 300_000);

  it('a hand edit of a field the function set (a Service selector value, by kubectl) is put back by the next resync, with one write: that Service', async () => {
    const services = (await user.list('v1', 'Service', NAMESPACE)).filter((s) => s.metadata.name.startsWith('quiet-0-'));
    const service = services[0];
    if (service === undefined) throw new Error('no Service of quiet-0');
    const before = (service['spec'] as { selector: Record<string, string> }).selector;
    const [label] = Object.keys(before);
    if (label === undefined) throw new Error('the Service has no selector');
    const edited = structuredClone(service) as KubeObject & { spec: { selector: Record<string, string> } };
    edited.spec.selector = { ...edited.spec.selector, [label]: 'edited-by-hand' };
    await user.replace(edited);

    const repair = await resync();
    expect(writesOf(repair).map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}`)).toEqual([`patch services ${NAMESPACE}`]);
    const restored = await user.get({ apiVersion: 'v1', kind: 'Service', namespace: NAMESPACE, name: service.metadata.name });
    expect((restored?.['spec'] as { selector: Record<string, string> }).selector).toEqual(before);

    // And quiet again.
    expect(writesOf(await resync())).toEqual([]);
  }, 300_000);
});

describe('events for unchanged DGDs (issue 17 item 3: "an event for a quiet DGD should cost about one read")', () => {
  const get = (_name: string) => ({ verb: 'get', resource: 'dynamographdeployments', namespace: NAMESPACE });
  const summary = (requests: readonly RecordedRequest[]) => requests.map((r) => ({ verb: r.verb, resource: r.resource, namespace: r.namespace }));

  it('after a full pass that wrote nothing, an event for the same stored DGD costs one GET of it and no other request (the one with a scaling adapter too)', async () => {
    for (const name of ['quiet-0', 'quiet-1']) {
      // The resync above dropped this process's records: the first event is the full pass.
      const full = await apiEvent(DGD_V1BETA1, DGD_KIND, name);
      expect(writesOf(full)).toEqual([]);
      expect(full.length).toBeGreaterThan(1);
      expect(summary(await apiEvent(DGD_V1BETA1, DGD_KIND, name))).toEqual([get(name)]);
      expect(summary(await apiEvent(DGD_V1BETA1, DGD_KIND, name))).toEqual([get(name)]);
    }
  }, 300_000);

  it("a hand edit to a child (a Service selector, by kubectl) arrives as the child's event and is put back, and the DGD's next event is a full pass again", async () => {
    expect(summary(await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-0'))).toEqual([get('quiet-0')]);
    const service = (await user.list('v1', 'Service', NAMESPACE)).find((s) => s.metadata.name.startsWith('quiet-0-'));
    if (service === undefined) throw new Error('no Service of quiet-0');
    const before = (service['spec'] as { selector: Record<string, string> }).selector;
    const [label] = Object.keys(before);
    if (label === undefined) throw new Error('the Service has no selector');
    const edited = structuredClone(service) as KubeObject & { spec: { selector: Record<string, string> } };
    edited.spec.selector = { ...edited.spec.selector, [label]: 'edited-by-hand' };
    await user.replace(edited);

    const repair = await apiEvent('v1', 'Service', service.metadata.name);
    expect(writesOf(repair).map((r) => `${r.verb} ${r.resource} ${r.namespace ?? ''}`)).toEqual([`patch services ${NAMESPACE}`]);
    const restored = await user.get({ apiVersion: 'v1', kind: 'Service', namespace: NAMESPACE, name: service.metadata.name });
    expect((restored?.['spec'] as { selector: Record<string, string> }).selector).toEqual(before);

    const next = await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-0');
    expect(writesOf(next)).toEqual([]);
    expect(next.length).toBeGreaterThan(1);
    expect(summary(await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-0'))).toEqual([get('quiet-0')]);
  }, 300_000);

  it('a change to the DGD (a container image, by kubectl) after it was recorded quiet is the full pass: the PodCliqueSet is written', async () => {
    await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-4');
    expect(summary(await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-4'))).toEqual([get('quiet-4')]);
    const dgd = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: NAMESPACE, name: 'quiet-4' });
    if (dgd === undefined) throw new Error('no quiet-4');
    const edited = structuredClone(dgd) as KubeObject & { spec: { components: { name: string; podTemplate: { spec: { containers: { image: string }[] } } }[] } };
    for (const component of edited.spec.components) for (const container of component.podTemplate.spec.containers) container.image = `${container.image}-edited`;
    await user.replace(edited);
    const pass = await apiEvent(DGD_V1BETA1, DGD_KIND, 'quiet-4');
    expect(writesOf(pass).map((r) => `${r.verb} ${r.resource}`)).toContain('patch podcliquesets');
  }, 300_000);
});
