/**
 * A real control plane on loopback for integration tests and `dynamo-fn dev`: etcd and
 * kube-apiserver (optionally kube-controller-manager), started from the binaries of
 * ./binaries.ts in a temporary folder, with CRDs installed and served before it returns.
 *
 * - Ports: free ports found by listening on port 0; everything binds 127.0.0.1.
 * - Auth: a static token (`--token-auth-file`) for user `admin` in `system:masters`; the
 *   service-account key pair comes from node:crypto, so neither openssl nor a download is needed.
 * - TLS: the apiserver generates its own serving certificate in `--cert-dir`; the file holds the
 *   certificate followed by the CA that signed it, and the kubeconfig trusts exactly that.
 * - Cleanup: stop() sends SIGTERM, then SIGKILL after a timeout, and removes the folder. It also
 *   runs on process exit, SIGINT, SIGTERM and on a failed start; a detached watchdog kills the
 *   children if this process dies without running any handler (SIGKILL), so none are orphaned.
 *
 * Source: ../shared/upstream-notes/envtest.md B.3 (envtest's flags and start-up sequence),
 * "Suggestions for a TypeScript harness"; grove.md A.1 (large CRDs: no client-side apply).
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { appendFileSync, closeSync, openSync, rmSync } from 'node:fs';
import { access, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Agent, fetch } from 'undici';
import { stringify as toYaml } from 'yaml';

import { CONVERSION_WEBHOOK_SERVICE, DYNAMO_GROUP } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { ensureKubeBinaries, REPO_ROOT, type KubeBinaries } from './binaries.js';
import { loadCrds, yamlFilesIn, type CrdDocument, type LoadedCrd } from './crds.js';
import type { HarnessLog } from './log.js';

/** The field manager the harness installs CRDs with. */
export const HARNESS_FIELD_MANAGER = 'dynamo-fn-harness';

/**
 * Controllers kube-controller-manager runs when asked for (names from its `--help`, 1.35): the
 * job controller makes Jobs run pods and reach Complete or Failed (kwok.md "Build"); node
 * lifecycle lifts the `node.kubernetes.io/not-ready` taint the API server puts on a new Node
 * once kwok reports it Ready (without it nothing schedules); the pod garbage collector and
 * ttl-after-finished tidy up after Jobs.
 */
export const DEFAULT_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'job-controller',
  'node-lifecycle-controller',
  'pod-garbage-collector-controller',
  'ttl-after-finished-controller',
] as const;

/** The kwok Stages the harness runs with (fake Node and Pod lifecycles; see that file's header). */
export const KWOK_STAGES_FILE = path.join(REPO_ROOT, 'test', 'harness', 'kwok', 'stages.yaml');

/** The annotation kwok manages Nodes by (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export interface ControlPlaneOptions {
  /** CRD files to install (YAML; non-CRD documents are ignored). */
  readonly crdFiles?: readonly string[];
  /** Folders whose `*.yaml` files (recursively) are installed too; absent folders are fine. */
  readonly crdDirs?: readonly string[];
  /**
   * Where OUR CRDs with `conversion.strategy: Webhook` send ConversionReviews: their
   * `clientConfig` is replaced by this URL (the admission function's `/convert` on loopback)
   * and CA bundle (base64 PEM) before they are installed, as envtest does for its webhooks.
   * Other CRDs (Knative's PingSource) keep their own clientConfig: /convert would refuse them.
   */
  readonly conversionWebhook?: { readonly url: string; readonly caBundle: string };
  /**
   * Applied to each CRD read from the files before it is installed; undefined leaves the CRD
   * out. `dynamo-fn dev` passes the chart's feature-gate choice (shared/api `gateCrd`).
   */
  readonly selectCrd?: (crd: CrdDocument) => CrdDocument | undefined;
  /** Progress lines; default a pino logger on stderr. */
  readonly log?: HarnessLog;
  /** Also run kube-controller-manager: garbage collection, namespace deletion, default ServiceAccounts. */
  readonly withControllerManager?: boolean;
  /** kube-controller-manager `--controllers`; default DEFAULT_CONTROLLERS. */
  readonly controllers?: readonly string[];
  /** Also run kube-scheduler, so pods are bound to nodes and `nvidia.com/gpu` requests are enforced. */
  readonly withScheduler?: boolean;
  /**
   * Also run kwok: Nodes annotated `kwok.x-k8s.io/node: fake` (see gpu-nodes.ts) become Ready,
   * and pods bound to them move through the Stages of KWOK_STAGES_FILE (Job pods complete).
   */
  readonly withKwok?: boolean;
  /** Binaries to run; default `ensureKubeBinaries({ log })` (builds them if missing). */
  readonly binaries?: KubeBinaries;
  /** Time allowed for each readiness step (etcd, apiserver, CRDs), in ms. Default 120 000. */
  readonly readyTimeoutMs?: number;
  /** Leave the temporary folder (logs, etcd data) in place after stop(), for debugging. */
  readonly keepDir?: boolean;
  /**
   * Stop the processes as soon as this process gets SIGINT or SIGTERM (default true). A caller
   * that handles those signals itself and still needs the API server while it shuts down (dev:
   * its functions, bridge and webhook configurations go first) passes false and calls stop();
   * the exit handler and the watchdog still stop the processes if it never does. With false the
   * processes also run in a process group of their own: a terminal's Ctrl-C sends SIGINT to
   * the whole foreground group, and etcd and kube-apiserver dying at once left dev's in-flight
   * requests to wait out their 30 s timeouts (a 45 s stop full of warnings, measured 2026-12-02).
   */
  readonly stopOnSignals?: boolean;
  /** kube-apiserver `--service-cluster-ip-range`; default `10.0.0.0/24`. A tiny one runs out of Service IPs on purpose. */
  readonly serviceClusterIpRange?: string;
}

/** A running control plane. */
export interface ControlPlane {
  /** The admin kubeconfig file (inside `dir`; removed by stop()). */
  readonly kubeconfigPath: string;
  /** The same kubeconfig, loaded. */
  readonly kubeConfig: KubeConfig;
  /** `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** The admin bearer token (`system:masters`). */
  readonly token: string;
  /** PEM of the apiserver's serving certificate and its CA, as trusted by the kubeconfig. */
  readonly caPem: string;
  /** The temporary folder: kubeconfig, logs (`*.log`), etcd data, certificates. */
  readonly dir: string;
  /** Names of the CRDs installed, e.g. `podcliquesets.grove.io`. */
  readonly crdNames: readonly string[];
  /** Stops every process (SIGTERM, then SIGKILL after 10 s) and removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;
const POLL_INTERVAL_MS = 100;
const CRD_INSTALL_CONCURRENCY = 3;
const LOG_TAIL_BYTES = 4096;

/**
 * Starts etcd and kube-apiserver (and kube-controller-manager if asked) on loopback, installs
 * the CRDs and waits until each is Established and served by discovery.
 * In: options (all optional). Out: a ControlPlane; call stop() when done.
 * Timing: about 5–20 s on 2 cores once the binaries exist; the first call may build them
 * (minutes). Failures: Error naming the step, with the tail of the failing process's log;
 * everything started so far is stopped first.
 * Source: envtest.md B.3.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? pino({ name: 'control-plane' }, pino.destination(2));
  const started = Date.now();
  const binaries = options.binaries ?? (await ensureKubeBinaries({ log }));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-kube-'));
  const processes = new ProcessGroup(dir, log, options.keepDir === true, options.stopOnSignals ?? true);
  try {
    const plane = await boot(dir, binaries, processes, log, options);
    log.info(
      { server: plane.server, kubeconfig: plane.kubeconfigPath, crds: plane.crdNames.length, elapsedMs: Date.now() - started },
      'Started control plane',
    );
    return plane;
  } catch (error) {
    log.error({ err: error, dir }, 'Failed to start control plane');
    await processes.stop();
    throw error;
  }
}

async function boot(
  dir: string,
  binaries: KubeBinaries,
  processes: ProcessGroup,
  log: HarnessLog,
  options: ControlPlaneOptions,
): Promise<ControlPlane> {
  const timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const crdFiles = [
    ...(options.crdFiles ?? []),
    ...(await Promise.all((options.crdDirs ?? []).map((crdDir) => yamlFilesIn(crdDir, true)))).flat(),
  ];
  // Parse first: a broken CRD file should fail before anything is spawned.
  const selectCrd = options.selectCrd ?? ((crd: CrdDocument) => crd);
  const crds = (await loadCrds(crdFiles))
    .flatMap((loaded) => {
      const crd = selectCrd(loaded.crd);
      return crd === undefined ? [] : [{ file: loaded.file, crd }];
    })
    .map((loaded) => withConversionWebhook(loaded, options.conversionWebhook));

  // etcd
  const [etcdClientPort, etcdPeerPort, apiserverPort] = await freePorts(3);
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const etcdPeerUrl = `http://127.0.0.1:${etcdPeerPort}`;
  let stepStarted = Date.now();
  const etcd = processes.spawn('etcd', binaries.etcd, [
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${etcdPeerUrl}`,
    `--initial-advertise-peer-urls=${etcdPeerUrl}`,
    `--initial-cluster=default=${etcdPeerUrl}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ]);
  await waitUntil('etcd to be healthy', timeoutMs, [etcd], async () => {
    const response = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { health?: unknown };
    return response.ok && body.health === 'true';
  });
  log.info({ url: etcdUrl, elapsedMs: Date.now() - stepStarted }, 'Started etcd');

  // kube-apiserver
  const token = randomBytes(24).toString('hex');
  const pkiDir = path.join(dir, 'pki');
  await mkdir(pkiDir, { recursive: true });
  const tokenFile = path.join(dir, 'tokens.csv');
  await writeFile(tokenFile, `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });
  const serviceAccountKeys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const saPublic = path.join(pkiDir, 'sa.pub');
  const saPrivate = path.join(pkiDir, 'sa.key');
  await writeFile(saPublic, serviceAccountKeys.publicKey);
  await writeFile(saPrivate, serviceAccountKeys.privateKey, { mode: 0o600 });

  const server = `https://127.0.0.1:${apiserverPort}`;
  stepStarted = Date.now();
  const apiserver = processes.spawn('kube-apiserver', binaries.kubeApiserver, [
    `--etcd-servers=${etcdUrl}`,
    `--cert-dir=${pkiDir}`,
    `--secure-port=${apiserverPort}`,
    '--bind-address=127.0.0.1',
    // Otherwise the apiserver advertises a host interface, which fails in a network namespace
    // without a default route (envtest.md B.3, "Pin loopback everywhere").
    '--advertise-address=127.0.0.1',
    `--service-cluster-ip-range=${options.serviceClusterIpRange ?? '10.0.0.0/24'}`,
    '--allow-privileged=true',
    // Without kube-controller-manager no `default` ServiceAccount is ever created (envtest).
    '--disable-admission-plugins=ServiceAccount',
    // On as OpenShift has it: a non-privileged client setting `blockOwnerDeletion: true` needs
    // `update` on the owner's `<resource>/finalizers`, and changing an existing object's owner
    // references needs `delete` on it, so the function roles' finalizers grants are proven
    // under their tokens (test/integration/rbac*.test.ts). system:masters (the harness's admin,
    // the controllers, kwok) bypasses RBAC, so admin-run tests are unaffected. Source:
    // kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#ownerreferencespermissionenforcement.
    '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
    '--authorization-mode=RBAC',
    `--token-auth-file=${tokenFile}`,
    `--service-account-issuer=${server}/`,
    `--service-account-key-file=${saPublic}`,
    `--service-account-signing-key-file=${saPrivate}`,
  ]);

  // The self-generated serving certificate: the server certificate, then its CA.
  const certFile = path.join(pkiDir, 'apiserver.crt');
  await waitUntil('kube-apiserver to write its serving certificate', timeoutMs, [etcd, apiserver], async () => {
    await access(certFile);
    return (await readFile(certFile, 'utf8')).includes('END CERTIFICATE');
  });
  const caPem = await readFile(certFile, 'utf8');
  checkServingCertificate(caPem);
  const dispatcher = new Agent({ connect: { ca: caPem } });
  const authorization = `Bearer ${token}`;
  const getJson = async (urlPath: string): Promise<{ status: number; body: unknown }> => {
    const response = await fetch(`${server}${urlPath}`, {
      dispatcher,
      headers: { authorization, accept: 'application/json' },
      signal: AbortSignal.timeout(5000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // /readyz answers plain text
    }
    return { status: response.status, body };
  };
  try {
    await waitUntil('kube-apiserver /readyz', timeoutMs, [etcd, apiserver], async () => (await getJson('/readyz')).status === 200);
    log.info({ server, elapsedMs: Date.now() - stepStarted }, 'Started kube-apiserver');

    const kubeconfigPath = path.join(dir, 'kubeconfig');
    const kubeconfigText = kubeconfigYaml(server, caPem, token);
    await writeFile(kubeconfigPath, kubeconfigText, { mode: 0o600 });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfigText);
    const kube = createKube(kubeConfig, { fieldManager: HARNESS_FIELD_MANAGER });

    await waitUntil('namespace default', timeoutMs, [etcd, apiserver], async () =>
      (await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: 'default' })) !== undefined,
    );

    stepStarted = Date.now();
    await installCrds(kube, crds, timeoutMs, [etcd, apiserver], getJson);
    if (crds.length > 0) log.info({ count: crds.length, elapsedMs: Date.now() - stepStarted }, 'Installed CRDs');

    if (options.withControllerManager === true) {
      if (binaries.kubeControllerManager === undefined) {
        throw new Error(`kube-controller-manager was asked for but ${binaries.dir} has none`);
      }
      stepStarted = Date.now();
      const kcm = processes.spawn('kube-controller-manager', binaries.kubeControllerManager, [
        `--kubeconfig=${kubeconfigPath}`,
        '--leader-elect=false',
        `--controllers=${(options.controllers ?? DEFAULT_CONTROLLERS).join(',')}`,
        // 0: serve no HTTPS at all (nothing to authenticate, no port to find).
        '--secure-port=0',
        '--use-service-account-credentials=false',
        `--root-ca-file=${certFile}`,
        `--service-account-private-key-file=${saPrivate}`,
      ]);
      const controllers = options.controllers ?? DEFAULT_CONTROLLERS;
      if (controllers.includes('serviceaccount-controller')) {
        // The serviceaccount controller creating `default` in `default` shows the manager runs.
        await waitUntil('kube-controller-manager to create ServiceAccount default/default', timeoutMs, [apiserver, kcm], async () =>
          (await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'default', name: 'default' })) !== undefined,
        );
      }
      log.info({ controllers: controllers.join(','), elapsedMs: Date.now() - stepStarted }, 'Started kube-controller-manager');
    }

    if (options.withScheduler === true) {
      if (binaries.kubeScheduler === undefined) {
        throw new Error(`kube-scheduler was asked for but ${binaries.dir} has none`);
      }
      // --secure-port=0: no health endpoint to serve (kwok.md "Build").
      processes.spawn('kube-scheduler', binaries.kubeScheduler, [
        `--kubeconfig=${kubeconfigPath}`,
        '--leader-elect=false',
        '--secure-port=0',
      ]);
      log.info({}, 'Started kube-scheduler');
    }

    if (options.withKwok === true) {
      if (binaries.kwok === undefined) {
        throw new Error(`kwok was asked for but ${binaries.dir} has none`);
      }
      // Flags, not a KwokConfiguration document: v0.8.0 does not default one (kwok.md "Run").
      // The pod CIDR must not overlap the apiserver's service range (10.0.0.0/24).
      processes.spawn('kwok', binaries.kwok, [
        `--kubeconfig=${kubeconfigPath}`,
        `--config=${KWOK_STAGES_FILE}`,
        '--manage-all-nodes=false',
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        '--node-lease-duration-seconds=40',
        '--cidr=10.244.0.0/16',
        '--node-ip=10.1.0.1',
        '-v=WARN',
      ]);
      log.info({ stages: KWOK_STAGES_FILE }, 'Started kwok');
    }

    return {
      kubeconfigPath,
      kubeConfig,
      server,
      token,
      caPem,
      dir,
      crdNames: crds.map(({ crd }) => crd.metadata.name),
      stop: async () => {
        await processes.stop();
        await dispatcher.close();
      },
    };
  } catch (error) {
    await dispatcher.close();
    throw error;
  }
}

/**
 * One of our CRDs with its conversion webhook pointed at `webhook` (a copy). Ours: group
 * `nvidia.com` and converted by our admission Service's `/convert` (shared/api
 * `CONVERSION_WEBHOOK_SERVICE`), as every CRD `dynamo-fn crds` writes with several versions is.
 * Any other CRD, or any CRD when `webhook` is undefined, is returned unchanged: `/convert`
 * converts only our kinds, so pointing another project's CRD (Knative's PingSource) at it would
 * only make that CRD's conversions fail.
 */
export function withConversionWebhook(loaded: LoadedCrd, webhook: ControlPlaneOptions['conversionWebhook']): LoadedCrd {
  const conversion = loaded.crd.spec['conversion'] as { strategy?: string; webhook?: Record<string, unknown> } | undefined;
  if (webhook === undefined || conversion?.strategy !== 'Webhook' || !isConvertedByOurAdmission(loaded.crd)) return loaded;
  const crd = structuredClone(loaded.crd);
  crd.spec['conversion'] = { ...conversion, webhook: { ...conversion.webhook, clientConfig: { url: webhook.url, caBundle: webhook.caBundle } } };
  return { file: loaded.file, crd };
}

/** Whether the CRD is ours: group nvidia.com, conversion webhook our admission Service's /convert. */
function isConvertedByOurAdmission(crd: LoadedCrd['crd']): boolean {
  const service = (crd.spec['conversion'] as { webhook?: { clientConfig?: { service?: Record<string, unknown> } } } | undefined)?.webhook?.clientConfig?.service;
  return (
    crd.spec.group === DYNAMO_GROUP &&
    service?.['namespace'] === CONVERSION_WEBHOOK_SERVICE.namespace &&
    service['name'] === CONVERSION_WEBHOOK_SERVICE.name &&
    service['path'] === CONVERSION_WEBHOOK_SERVICE.path
  );
}

/**
 * Creates (server-side apply, never client-side: grove.md A.1) every CRD, then waits until each
 * is Established and every served version lists its plural in discovery (envtest.md B.3 step 5).
 */
async function installCrds(
  kube: Kube,
  crds: readonly LoadedCrd[],
  timeoutMs: number,
  watched: readonly ManagedProcess[],
  getJson: (urlPath: string) => Promise<{ status: number; body: unknown }>,
): Promise<void> {
  const queue = [...crds];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { crd, file } = next;
      try {
        await kube.apply(crd, { force: true });
      } catch (error) {
        throw new Error(`cannot install CRD ${crd.metadata.name} from ${file}`, { cause: error });
      }
    }
  };
  await Promise.all(Array.from({ length: CRD_INSTALL_CONCURRENCY }, worker));

  await Promise.all(
    crds.map(async ({ crd }) => {
      const name = crd.metadata.name;
      await waitUntil(`CRD ${name} to be Established`, timeoutMs, watched, async () => {
        const stored = await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
        return stored !== undefined && hasTrueCondition(stored, 'Established');
      });
      for (const version of crd.spec.versions.filter((v) => v.served)) {
        const urlPath = `/apis/${crd.spec.group}/${version.name}`;
        await waitUntil(`${crd.spec.names.plural} in discovery ${urlPath}`, timeoutMs, watched, async () => {
          const { status, body } = await getJson(urlPath);
          return status === 200 && servesResource(body, crd.spec.names.plural);
        });
      }
    }),
  );
}

function hasTrueCondition(obj: KubeObject, type: string): boolean {
  const status = obj['status'];
  if (typeof status !== 'object' || status === null || !('conditions' in status)) return false;
  const conditions: unknown = status.conditions;
  return (
    Array.isArray(conditions) &&
    conditions.some(
      (condition: unknown) =>
        typeof condition === 'object' &&
        condition !== null &&
        'type' in condition &&
        'status' in condition &&
        condition.type === type &&
        condition.status === 'True',
    )
  );
}

function servesResource(discovery: unknown, plural: string): boolean {
  if (typeof discovery !== 'object' || discovery === null || !('resources' in discovery)) return false;
  const resources: unknown = discovery.resources;
  return (
    Array.isArray(resources) &&
    resources.some((resource: unknown) => typeof resource === 'object' && resource !== null && 'name' in resource && resource.name === plural)
  );
}

/** Fails early, with a clear message, if the self-signed certificate would not verify for 127.0.0.1. */
function checkServingCertificate(pem: string): void {
  const first = pem.slice(0, pem.indexOf('END CERTIFICATE') + 'END CERTIFICATE-----'.length);
  const certificate = new X509Certificate(first);
  if (certificate.checkIP('127.0.0.1') === undefined) {
    throw new Error(
      `kube-apiserver's self-generated serving certificate does not name 127.0.0.1 (subjectAltName: ${certificate.subjectAltName ?? 'none'})`,
    );
  }
}

function kubeconfigYaml(server: string, caPem: string, token: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'dynamo-fn-test',
        cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'dynamo-fn-test', context: { cluster: 'dynamo-fn-test', user: 'admin', namespace: 'default' } }],
    'current-context': 'dynamo-fn-test',
  });
}

/** Free TCP ports on 127.0.0.1, found by listening on port 0 (all held open until all are known). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('cannot find a free port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * Polls `probe` every 100 ms until it returns true. Fails when `timeoutMs` passes or a watched
 * process exits, with the tail of that process's log. A probe that throws counts as "not yet".
 */
async function waitUntil(
  what: string,
  timeoutMs: number,
  watched: readonly ManagedProcess[],
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    for (const managed of watched) {
      if (managed.exit !== undefined) {
        throw new Error(
          `${managed.name} exited (${managed.exit}) while waiting for ${what}; the end of ${managed.logFile}:\n${await tail(managed.logFile)}`,
        );
      }
    }
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const logs = await Promise.all(watched.map(async (m) => `--- ${m.logFile}\n${await tail(m.logFile)}`));
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${logs.join('\n')}`, { cause: lastError });
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

async function tail(file: string): Promise<string> {
  try {
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, LOG_TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '(no log)';
  }
}

interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** `code N` or `signal S` once it has exited. */
  exit: string | undefined;
  readonly exited: Promise<void>;
}

// A watchdog that outlives us: when the parent is gone, it stops every pid listed in `pids`
// whose command line still names our folder (so a reused pid is never touched), then removes
// the folder. It covers the one case no handler can: this process being SIGKILLed.
const WATCHDOG_SCRIPT = `
parent="$1"; dir="$2"
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
ours() { for pid in $(cat "$dir/pids" 2>/dev/null); do grep -qF "$dir" "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"; done; }
pids=$(ours); [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do [ -z "$(ours)" ] && break; sleep 1; done
pids=$(ours); [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
rm -rf "$dir"
`;

/** The processes of one control plane and everything that guarantees they stop. */
class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];
  private readonly watchdog: ChildProcess | undefined;
  private stopping: Promise<void> | undefined;
  private readonly onExit = () => this.killNow('SIGKILL');
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.killNow('SIGTERM');
    // If nobody else handles the signal, re-raise it so the process ends as it would have.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };

  constructor(
    private readonly dir: string,
    private readonly log: HarnessLog,
    private readonly keepDir: boolean,
    private readonly stopOnSignals: boolean,
  ) {
    process.on('exit', this.onExit);
    if (stopOnSignals) {
      process.once('SIGINT', this.onSignal);
      process.once('SIGTERM', this.onSignal);
    }
    try {
      const watchdog = spawn('sh', ['-c', WATCHDOG_SCRIPT, 'dynamo-fn-watchdog', String(process.pid), dir], {
        detached: true,
        stdio: 'ignore',
      });
      watchdog.on('error', (error) => log.warn({ err: error }, 'Failed to start the control-plane watchdog'));
      watchdog.unref();
      this.watchdog = watchdog;
    } catch (error) {
      log.warn({ err: error }, 'Failed to start the control-plane watchdog');
    }
  }

  /** Starts `binary` with stdout and stderr to `<dir>/<name>.log`. */
  spawn(name: string, binary: string, args: readonly string[]): ManagedProcess {
    const logFile = path.join(this.dir, `${name}.log`);
    const fd = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      // detached: a process group of its own, out of reach of the terminal's Ctrl-C (see stopOnSignals).
      child = spawn(binary, args, { cwd: this.dir, stdio: ['ignore', fd, fd], detached: !this.stopOnSignals });
    } finally {
      closeSync(fd);
    }
    let markExited: () => void = () => {};
    const managed: ManagedProcess = {
      name,
      child,
      logFile,
      exit: undefined,
      exited: new Promise<void>((resolve) => {
        markExited = resolve;
      }),
    };
    child.once('exit', (code, signal) => {
      managed.exit = signal === null ? `code ${code ?? '?'}` : `signal ${signal}`;
      markExited();
    });
    child.once('error', (error) => {
      managed.exit = `spawn error: ${error.message}`;
      markExited();
    });
    if (child.pid !== undefined) appendFileSync(path.join(this.dir, 'pids'), `${child.pid}\n`);
    this.processes.push(managed);
    this.log.debug({ name, pid: child.pid, logFile }, 'Spawned process');
    return managed;
  }

  /** SIGTERM in reverse start order, SIGKILL after 10 s, then remove the folder. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    process.removeListener('exit', this.onExit);
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
    for (const managed of [...this.processes].reverse()) {
      if (managed.exit !== undefined) continue;
      const started = Date.now();
      managed.child.kill('SIGTERM');
      const cancelTimer = new AbortController();
      const timer = sleep(STOP_TIMEOUT_MS, 'timeout' as const, { signal: cancelTimer.signal }).catch(() => 'cancelled' as const);
      const outcome = await Promise.race([managed.exited.then(() => 'exited' as const), timer]);
      cancelTimer.abort();
      if (outcome === 'timeout') {
        this.log.warn({ name: managed.name }, 'Killed process after SIGTERM timeout');
        managed.child.kill('SIGKILL');
        await managed.exited;
      }
      this.log.debug({ name: managed.name, elapsedMs: Date.now() - started }, 'Stopped process');
    }
    this.killWatchdog();
    if (!this.keepDir) await rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    this.log.info({ dir: this.dir, kept: this.keepDir }, 'Stopped control plane');
  }

  /** Synchronous last resort for exit and signal handlers. */
  private killNow(signal: NodeJS.Signals): void {
    for (const managed of this.processes) {
      if (managed.exit === undefined) managed.child.kill(signal);
    }
    if (signal === 'SIGKILL') {
      // Our children are gone; the watchdog would only find nothing and remove the folder.
      this.killWatchdog();
      if (!this.keepDir) {
        try {
          rmSync(this.dir, { recursive: true, force: true });
        } catch {
          // The watchdog is gone, but a leftover folder in the temp dir harms nothing.
        }
      }
    }
  }

  private killWatchdog(): void {
    if (this.watchdog?.pid !== undefined && this.watchdog.exitCode === null) {
      try {
        process.kill(this.watchdog.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
