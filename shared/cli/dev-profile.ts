/**
 * The admission webhooks `dynamo-fn dev` registers for its one admission server (the one that
 * also serves `/convert`, over TLS on 127.0.0.1): DGDs, DGDRs (v1beta1, and v1beta2 with its
 * gate) and Runs, by a Mutating- and a ValidatingWebhookConfiguration.
 * @module
 */
import { DGDR_PLURAL, DGD_PLURAL, type ChartGates } from '../api/index.js';
import type { ApplyObject, Kube } from '../kube/index.js';
import { V1BETA2_ROUTES, webhookPath, type WebhookRoute } from '../../functions/admission/index.js';

/** Names of the webhook configurations dev registers (cluster-scoped, removed on stop). */
export const DEV_WEBHOOK_CONFIGURATION = 'dynamo-fn-dev-admission';

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

/**
 * The routes dev registers, as the chart's templates/admission/webhooks.yaml serves them: DGD and
 * DGDR v1beta1, and with `dgdrV1Beta2.enabled` DGDR v1beta2 and Run v1beta2 (whose CRDs and
 * version are served only then).
 */
export function devWebhookRoutes(gates: ChartGates): WebhookRoute[] {
  return [
    { kind: 'mutate', version: 'v1beta1' },
    { kind: 'validate', version: 'v1beta1' },
    { kind: 'mutate', version: 'v1beta1', resource: DGDR_PLURAL },
    { kind: 'validate', version: 'v1beta1', resource: DGDR_PLURAL },
    ...(gates.dgdrV1Beta2Enabled ? V1BETA2_ROUTES : []),
  ];
}

/**
 * Registers `admission`'s webhooks ({@link devWebhookRoutes}) with a Mutating- and a
 * ValidatingWebhookConfiguration (without `--chart`; with it the chart's own configurations
 * call the same server, so each request is admitted once).
 * In: a client with the admin kubeconfig, dev's running admission server, the gates.
 * Out: `close()` removes both configurations. Failures: whatever registering throws (dev stops then).
 */
export async function registerDevWebhooks(kube: Kube, admission: DevAdmission, gates: ChartGates): Promise<{ close(): Promise<void> }> {
  const caBundle = Buffer.from(admission.caPem).toString('base64');
  const routes = devWebhookRoutes(gates);
  for (const [kind, webhookKind] of [
    ['MutatingWebhookConfiguration', 'mutate'],
    ['ValidatingWebhookConfiguration', 'validate'],
  ] as const) {
    const configuration: ApplyObject = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name: DEV_WEBHOOK_CONFIGURATION },
      webhooks: routes.filter((route) => route.kind === webhookKind).map((route) => devWebhook(route, admission.url, caBundle)),
    };
    await kube.apply(configuration, { force: true });
  }
  return {
    async close() {
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
        await kube.delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, name: DEV_WEBHOOK_CONFIGURATION }).catch(() => undefined);
      }
    },
  };
}
