/**
 * The functions' HTTP transport to the Kubernetes API: node:http / node:https with one
 * keep-alive Agent per client, and API discovery cached per client. It replaces
 * @kubernetes/client-node's request stack (KubernetesObjectApi over undici's fetch), so a
 * function's start path loads neither client-node nor undici (about 2.5 MiB of a ~4 MiB start
 * bundle; issue 17 item 2).
 *
 * Where a request goes and how it authenticates comes from a {@link KubeConnectionConfig}:
 * - in a pod, {@link inClusterConfig}: KUBERNETES_SERVICE_HOST/PORT, the service account's CA
 *   file and token file, the token re-read every minute as client-go does (it rotates);
 * - from a kubeconfig file, client-node's KubeConfig ({@link loadKubeconfigFile}, imported only
 *   then): its `applyToHTTPSOptions` computes the TLS material and the Authorization header
 *   (tokens, client certificates, exec and auth-provider plugins, impersonation) for each request,
 *   as client-node's own stack did. A cluster with a `proxy-url` uses the proxy agent client-node
 *   makes; every other request goes through this module's keep-alive Agent.
 *
 * Non-2xx answers reject with {@link KubeHttpError} (code, body text, headers), which
 * ./errors.ts classifies as it classifies client-node's ApiException.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Writes"
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';

import type { KubeConfig } from '@kubernetes/client-node';

import { KubeHttpError } from './errors.js';

/**
 * What the transport needs of a kubeconfig: the current cluster's server URL (and proxy, if
 * any), and the per-request TLS and auth options. client-node's KubeConfig has both; so has
 * {@link inClusterConfig}.
 */
export interface KubeConnectionConfig {
  getCurrentCluster(): { readonly server: string; readonly proxyUrl?: string | undefined } | null;
  /** Sets `ca`, `cert`, `key`, `rejectUnauthorized`, `servername`, `headers` (Authorization, ...), `auth` on `options`. */
  applyToHTTPSOptions(options: RequestOptions): Promise<void>;
}

/** The service account's files in a pod (client-go `rest.InClusterConfig`). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/**
 * Where {@link inClusterConfig} reads the service account's `token` and `ca.crt` instead of
 * {@link SERVICE_ACCOUNT_DIR}: for the cold-start benchmark, which starts functions as the
 * chart does (in-cluster) against a stub API server.
 */
export const ENV_SERVICE_ACCOUNT_DIR = 'DYNAMO_FN_SERVICE_ACCOUNT_DIR';
/** How long a token read from the token file is used before it is read again (client-go: one minute). */
const TOKEN_REREAD_MS = 60_000;

/**
 * The in-cluster connection (client-go `rest.InClusterConfig`, client-node `loadFromCluster`):
 * `https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT` (http on ports 80, 8080 and 8001,
 * as client-node does), the service account's CA, and its token, re-read from the file at most
 * a minute after the last read (projected tokens rotate). Reads no file until the first request.
 * In: the environment (KUBERNETES_SERVICE_HOST/PORT; {@link ENV_SERVICE_ACCOUNT_DIR}).
 */
export function inClusterConfig(env: Readonly<Record<string, string | undefined>> = process.env, now: () => number = Date.now): KubeConnectionConfig {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  // An IPv6 literal is bracketed, as client-go's net.JoinHostPort does (only an IPv6 literal
  // holds a ':'); net.isIPv6 would compile its address pattern at the first call, about 6 ms of
  // every function's cold start.
  const server = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const dir = env[ENV_SERVICE_ACCOUNT_DIR] ?? SERVICE_ACCOUNT_DIR;
  let token: { readonly value: string; readonly readAt: number } | undefined;
  let ca: Buffer | undefined;
  return {
    getCurrentCluster: () => ({ server }),
    applyToHTTPSOptions(options) {
      if (token === undefined || now() - token.readAt > TOKEN_REREAD_MS) {
        token = { value: readFileSync(`${dir}/token`, 'utf8').trim(), readAt: now() };
        if (scheme === 'https') ca = readFileSync(`${dir}/ca.crt`);
      }
      if (ca !== undefined) options.ca = ca;
      options.headers = { ...options.headers, Authorization: `Bearer ${token.value}` };
      return Promise.resolve();
    },
  };
}

/**
 * Loads a kubeconfig file (its current context) with @kubernetes/client-node, imported here
 * only: a function started in a pod never loads it. Failures: client-node's own (an unreadable
 * or invalid file).
 */
export async function loadKubeconfigFile(path: string): Promise<KubeConfig> {
  const { readKubeconfigFile } = await import('./kubeconfig-file.js');
  return readKubeconfigFile(path);
}

/**
 * The connection a function uses: the kubeconfig file at `kubeconfigPath` (KUBECONFIG) when
 * set, else the in-cluster one when KUBERNETES_SERVICE_HOST is set; undefined when neither
 * (not in a pod: the caller says which setting is missing). Failures: client-node's own when
 * the kubeconfig file cannot be read.
 */
export async function loadKubeConnection(kubeconfigPath: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): Promise<KubeConnectionConfig | undefined> {
  if (kubeconfigPath !== undefined) return loadKubeconfigFile(kubeconfigPath);
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') === '') return undefined;
  return inClusterConfig(env);
}

/** The resource a kind is served as (APIResourceList item). */
export interface ApiResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export interface SendOptions {
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
}

/** TLS material that decides the keep-alive Agent (a change, e.g. a rotated client certificate, makes a new one). */
const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** One client's requests: a keep-alive Agent, discovery cache, per-request auth. */
export class KubeTransport {
  private readonly discovery = new Map<string, Promise<readonly ApiResource[]>>();
  private agent: { readonly agent: HttpAgent; readonly tls: Readonly<Record<string, unknown>> } | undefined;

  constructor(
    private readonly config: KubeConnectionConfig,
    readonly requestTimeoutMs: number,
  ) {}

  /**
   * The resource `kind` is served as in `apiVersion`, from discovery (cached per client; a kind
   * missing from the cache triggers one re-read, so CRDs installed later are found); undefined
   * when the group version does not serve it. Rejects with the discovery request's failure.
   */
  async resource(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    const cached = this.discovery.get(apiVersion);
    if (cached !== undefined) {
      const found = (await cached.catch(() => [])).find((r) => r.kind === kind);
      if (found !== undefined) return found;
    }
    const reading = this.send('GET', apiVersionPath(apiVersion), {}, 'application/json, */*;q=0.8').then((list) => {
      const resources = isRecord(list) && Array.isArray(list['resources']) ? (list['resources'] as ApiResource[]) : [];
      return resources;
    });
    this.discovery.set(apiVersion, reading);
    try {
      return (await reading).find((r) => r.kind === kind);
    } catch (error) {
      if (this.discovery.get(apiVersion) === reading) this.discovery.delete(apiVersion);
      if (error instanceof Error) error.message = `Failed to fetch resource metadata for ${apiVersion}/${kind}: ${error.message}`;
      throw error;
    }
  }

  /** Sends one request; resolves to the parsed JSON body (undefined when empty), rejects with KubeHttpError on non-2xx. */
  async send(method: string, path: string, init: SendOptions = {}, accept = 'application/json'): Promise<unknown> {
    const cluster = this.config.getCurrentCluster();
    if (cluster === null) throw new Error('No active cluster!');
    const options: RequestOptions = { headers: {} };
    await this.config.applyToHTTPSOptions(options);
    const url = new URL(`${cluster.server.replace(/\/+$/, '')}${path}`);
    for (const [name, value] of Object.entries(init.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const body = init.body === undefined ? undefined : Buffer.from(JSON.stringify(init.body));
    const headers: Record<string, string | number> = { Accept: accept };
    for (const [name, value] of Object.entries(options.headers ?? {})) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    if (body !== undefined) {
      headers['Content-Type'] = init.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const isHttps = url.protocol === 'https:';
    // A proxy-url cluster: client-node's proxy agent; else ours, kept alive between requests.
    const agent = cluster.proxyUrl !== undefined && cluster.proxyUrl !== '' && options.agent !== undefined && options.agent !== false ? options.agent : this.agentFor(isHttps, options);
    const response = await new Promise<{ readonly status: number; readonly headers: IncomingHttpHeaders; readonly text: string }>((resolve, reject) => {
      const signal = AbortSignal.timeout(this.requestTimeoutMs);
      const request = (isHttps ? httpsRequest : httpRequest)(url, { method, headers, agent, signal, ...(options.auth === undefined || options.auth === null ? {} : { auth: options.auth }) }, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('aborted', () => reject(abortError(signal)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      });
      request.on('error', (error) => reject(signal.aborted ? abortError(signal, error) : error));
      request.end(body);
    });
    if (response.status < 200 || response.status > 299) {
      throw new KubeHttpError(response.status, response.text, flatHeaders(response.headers));
    }
    return response.text === '' ? undefined : (JSON.parse(response.text) as unknown);
  }

  private agentFor(isHttps: boolean, options: RequestOptions): HttpAgent {
    const tls: Record<string, unknown> = {};
    for (const key of TLS_KEYS) if (options[key] !== undefined) tls[key] = options[key];
    const current = this.agent;
    if (current !== undefined && current.agent instanceof HttpsAgent === isHttps && TLS_KEYS.every((key) => sameValue(current.tls[key], tls[key]))) return current.agent;
    current?.agent.destroy();
    const agent = isHttps ? new HttpsAgent({ keepAlive: true, ...tls }) : new HttpAgent({ keepAlive: true });
    this.agent = { agent, tls };
    return agent;
  }
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function apiVersionPath(apiVersion: string): string {
  return `/${apiVersion.includes('/') ? 'apis' : 'api'}/${apiVersion}`;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => sameValue(item, b[index]));
  return a === b;
}

/** An AbortError (the request timed out), its cause the signal's reason, as fetch rejects. */
function abortError(signal: AbortSignal, error?: unknown): Error {
  const aborted = new Error(`the request was aborted: ${String((signal.reason as Error | undefined)?.message ?? 'timeout')}`, { cause: signal.reason ?? error });
  aborted.name = 'AbortError';
  return aborted;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
