/**
 * What `dynamo-fn dev` adds for DynamoGraphDeploymentRequests: the admission webhooks of dev's one
 * admission server (the one that also serves `/convert`, over TLS on 127.0.0.1), registered for
 * DGDs, DGDRs (v1beta1 and v1beta2) and Runs by a Mutating- and a ValidatingWebhookConfiguration,
 * and the profile function's CloudEvents host with the kinds the event bridge must deliver to it
 * (DGDRs, Jobs, ConfigMaps, DGDs).
 * @module
 */
import type { Logger } from 'pino';
import { DGDR_KIND, DGDR_PLURAL, DGDR_V1BETA1, DGD_KIND, DGD_PLURAL, DGD_V1BETA1 } from '../api/index.js';
import type { BridgeSubscription } from '../dev/bridge.js';
import type { ApplyObject, Kube } from '../kube/index.js';
import { defaultConfig, startFunctionServer } from '../runtime/index.js';
import { V1BETA2_ROUTES, webhookPath, type WebhookRoute } from '../../functions/admission/index.js';
import profile from '../../functions/profile/index.js';

/** Names of the webhook configurations dev registers (cluster-scoped, removed on stop). */
export const DEV_WEBHOOK_CONFIGURATION = 'dynamo-fn-dev-admission';

export interface DevProfile {
  /** The profile function's subscription for the event bridge. */
  readonly subscription: BridgeSubscription;
  readonly profileUrl: string;
  readonly admissionUrl: string;
  /** Removes the webhook configurations, then stops the profile function (dev stops the admission server). */
  close(): Promise<void>;
}

/** A running admission server the webhooks are registered for: its base URL and the PEM of the CA that signed its certificate. */
export interface DevAdmission {
  readonly url: string;
  readonly caPem: string;
}

/**
 * One webhook entry for a route of the admission function. v1beta1 entries match Equivalent
 * versions (v1alpha1, and for DGDRs v1beta2, reach them converted); the v1beta2 ones only v1beta2.
 */
export function devWebhook(route: WebhookRoute, base: string, caBundle: string): Record<string, unknown> {
  const resource = route.resource ?? DGD_PLURAL;
  return {
    name: `${route.kind === 'mutate' ? 'default' : 'validate'}.${route.version === 'v1beta1' ? '' : `${route.version}.`}${resource}.nvidia.com`,
    clientConfig: { url: `${base}${webhookPath(route)}`, caBundle },
    rules: [{ apiGroups: ['nvidia.com'], apiVersions: [route.version], operations: ['CREATE', 'UPDATE'], resources: [resource], scope: 'Namespaced' }],
    matchPolicy: route.version === 'v1beta1' ? 'Equivalent' : 'Exact',
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    ...(route.kind === 'mutate' ? { reinvocationPolicy: 'Never' } : {}),
  };
}

/** The routes dev registers: DGD and DGDR v1beta1, DGDR v1beta2 and Run v1beta2 (the v1beta2 CRDs are installed in dev). */
const DEV_ROUTES: readonly WebhookRoute[] = [
  { kind: 'mutate', version: 'v1beta1' },
  { kind: 'validate', version: 'v1beta1' },
  { kind: 'mutate', version: 'v1beta1', resource: DGDR_PLURAL },
  { kind: 'validate', version: 'v1beta1', resource: DGDR_PLURAL },
  ...V1BETA2_ROUTES,
];

/**
 * Starts the profile function and registers `admission`'s webhooks (DEV_ROUTES).
 * In: a client with the admin kubeconfig, its path, the functions' logger, `lpxEnabled`, and
 * dev's running admission server (the same one answers `/convert`, so dev runs one).
 * Failures: whatever starting the server or registering a configuration throws (dev stops then).
 */
export async function startDevProfile(kube: Kube, kubeconfigPath: string, log: Logger, lpxEnabled: boolean, admission: DevAdmission): Promise<DevProfile> {
  const server = await startFunctionServer(profile, { config: defaultConfig({ port: 0, kubeconfigPath, lpxEnabled }), log, host: '127.0.0.1' });
  const caBundle = Buffer.from(admission.caPem).toString('base64');
  const base = admission.url;
  for (const [kind, webhookKind] of [
    ['MutatingWebhookConfiguration', 'mutate'],
    ['ValidatingWebhookConfiguration', 'validate'],
  ] as const) {
    const configuration: ApplyObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name: DEV_WEBHOOK_CONFIGURATION },
      webhooks: DEV_ROUTES.filter((route) => route.kind === webhookKind).map((route) => devWebhook(route, base, caBundle)),
    };
    await kube.apply(configuration, { force: true });
  }
  return {
    subscription: {
      name: 'profile',
      url: server.url,
      kinds: [
        { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND },
        { apiVersion: 'batch/v1', kind: 'Job' },
        { apiVersion: 'v1', kind: 'ConfigMap' },
        { apiVersion: DGD_V1BETA1, kind: DGD_KIND },
      ],
      mode: 'Reference',
    },
    profileUrl: server.url,
    admissionUrl: base,
    async close() {
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
        await kube.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: DEV_WEBHOOK_CONFIGURATION }).catch(() => undefined);
      }
      await server.close();
    },
  };
}
