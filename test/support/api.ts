/**
 * A thin HTTP client for integration tests: the admin kubeconfig's server, CA and token, any
 * method, path and content type (server-side apply, JSON Patch, subresources such as `/scale`),
 * with the status code and body returned as they are rather than thrown.
 * @module
 */
import { Agent, request, type Dispatcher } from 'undici';
import { testKubeConfig } from '../harness/testing.js';

export type Obj = Record<string, unknown>;

export interface ApiAnswer {
  readonly status: number;
  readonly body: Obj;
  /** The texts of the `Warning` headers (admission warnings arrive as `299 - "<text>"`). */
  readonly warnings: readonly string[];
}

/** The texts of `Warning: 299 - "<text>"` headers. */
function warningTexts(header: string | string[] | undefined): string[] {
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return values.flatMap((value) => [...value.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((match) => (match[1] ?? '').replace(/\\(.)/g, '$1')));
}

export type ApiClient = (method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType?: string) => Promise<ApiAnswer>;

/** A client for the run's control plane; `body` is sent as JSON (server-side apply accepts JSON too). */
export function apiClient(): ApiClient {
  const kubeConfig = testKubeConfig();
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (cluster === null || user === null) throw new Error('the kubeconfig has no current cluster or user');
  const ca = cluster.caData === undefined ? undefined : Buffer.from(cluster.caData, 'base64').toString('utf8');
  const dispatcher = new Agent({ connect: { ca } });
  return async (method, path, body, contentType = 'application/json') => {
    const response = await request(`${cluster.server}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${user.token ?? ''}`, 'content-type': contentType, accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: text === '' ? {} : (JSON.parse(text) as Obj), warnings: warningTexts(response.headers['warning']) };
  };
}

/** `PATCH ...?fieldManager=<m>&force=true` with `application/apply-patch+yaml` (JSON is YAML). */
export function serverSideApply(api: ApiClient, path: string, object: Obj, fieldManager: string): Promise<ApiAnswer> {
  return api('PATCH', `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`, object, 'application/apply-patch+yaml');
}
