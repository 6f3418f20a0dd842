/**
 * A small Knative Serving client over undici (DESIGN.md: undici for HTTP egress other than the
 * Kubernetes client's own calls): reads Knative Services and Revisions, and the admission
 * Deployment, from the API server named by a kubeconfig. GETs only; transient answers (429,
 * 5xx, connection errors) are retried by undici's RetryAgent with exponential backoff, a bounded
 * number of times.
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, RetryAgent, request } from 'undici';
import { z } from 'zod';

import { DeploymentSchema, KnativeRevisionSchema, KnativeServiceSchema, type Deployment, type KnativeRevision, type KnativeService } from './status.js';

/** A read that failed after the retries; `status` is the HTTP status when there was an answer. */
export class KnativeClientError extends Error {
  override readonly name = 'KnativeClientError';
  readonly status: number | undefined;
  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.status = options.status;
  }
}

export interface KnativeClient {
  /** The Knative Service, or undefined when it does not exist (404). */
  getService(namespace: string, name: string): Promise<KnativeService | undefined>;
  /** The Revisions of a Knative Service (label serving.knative.dev/service=<name>). */
  listRevisions(namespace: string, serviceName: string): Promise<KnativeRevision[]>;
  /** The Deployment, or undefined when it does not exist. */
  getDeployment(namespace: string, name: string): Promise<Deployment | undefined>;
  close(): Promise<void>;
}

export interface KnativeClientOptions {
  /** Per-attempt timeout in ms (default 10 000). */
  readonly timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  readonly maxRetries?: number;
  /** First backoff delay in ms, doubled per retry (default 200). */
  readonly minBackoffMs?: number;
}

/**
 * A client for the API server of `kubeConfig`'s current context: its server URL, CA, client
 * certificate and bearer token (as `@kubernetes/client-node` resolves them, exec plugins
 * included). Failures: the methods throw KnativeClientError naming what failed.
 */
export async function createKnativeClient(kubeConfig: KubeConfig, options: KnativeClientOptions = {}): Promise<KnativeClient> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new KnativeClientError('cannot read the Knative Services: the kubeconfig has no current cluster');
  const tls: { ca?: unknown; cert?: unknown; key?: unknown; headers?: Record<string, string | string[]>; rejectUnauthorized?: boolean } = {};
  await kubeConfig.applyToHTTPSOptions(tls as never);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [key, value] of Object.entries(tls.headers ?? {})) headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const agent = new Agent({
    connect: {
      ...(tls.ca === undefined ? {} : { ca: tls.ca as string }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert as string }),
      ...(tls.key === undefined ? {} : { key: tls.key as string }),
      rejectUnauthorized: cluster.skipTLSVerify !== true,
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const dispatcher = new RetryAgent(agent, {
    maxRetries: options.maxRetries ?? 3,
    minTimeout: options.minBackoffMs ?? 200,
    timeoutFactor: 2,
    methods: ['GET'],
    statusCodes: [429, 500, 502, 503, 504],
  });
  const server = cluster.server.replace(/\/$/, '');

  async function getJson<T>(what: string, path: string, schema: z.ZodType<T>): Promise<T | undefined> {
    let response;
    try {
      response = await request(`${server}${path}`, { method: 'GET', headers, dispatcher });
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      throw new KnativeClientError(`cannot ${what}: ${status === undefined ? (error as Error).message : `HTTP ${status}`}`, { cause: error, ...(status === undefined ? {} : { status }) });
    }
    const text = await response.body.text();
    if (response.statusCode === 404) return undefined;
    if (response.statusCode !== 200) {
      let detail = text.slice(0, 200);
      try {
        detail = (JSON.parse(text) as { message?: string }).message ?? detail;
      } catch {
        // not a Status object: keep the text
      }
      throw new KnativeClientError(`cannot ${what}: HTTP ${response.statusCode}: ${detail}`, { status: response.statusCode });
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new KnativeClientError(`cannot ${what}: the answer is not JSON`, { cause: error });
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new KnativeClientError(`cannot ${what}: unexpected object: ${parsed.error.issues[0]?.message ?? ''}`);
    return parsed.data;
  }

  const enc = encodeURIComponent;
  return {
    getService: (namespace, name) =>
      getJson(`get Knative Service ${namespace}/${name}`, `/apis/serving.knative.dev/v1/namespaces/${enc(namespace)}/services/${enc(name)}`, KnativeServiceSchema),
    async listRevisions(namespace, serviceName) {
      const list = await getJson(
        `list Knative Revisions of ${namespace}/${serviceName}`,
        `/apis/serving.knative.dev/v1/namespaces/${enc(namespace)}/revisions?labelSelector=${enc(`serving.knative.dev/service=${serviceName}`)}`,
        KnativeRevisionListSchema,
      );
      return list?.items ?? [];
    },
    getDeployment: (namespace, name) => getJson(`get Deployment ${namespace}/${name}`, `/apis/apps/v1/namespaces/${enc(namespace)}/deployments/${enc(name)}`, DeploymentSchema),
    close: () => dispatcher.close(),
  };
}

const KnativeRevisionListSchema = z.object({ items: z.array(KnativeRevisionSchema) }).loose();
