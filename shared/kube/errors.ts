/**
 * Classifies Kubernetes API failures once, into the shell's two exceptions (STYLE.md §12):
 *
 * | failure | class |
 * | --- | --- |
 * | 409 Conflict on a precondition (resourceVersion) | TransientError: re-read and retry |
 * | 429 | TransientError, `throttled` |
 * | 5xx, 408, 410 Expired, timeouts, connection errors | TransientError |
 * | 409 apply field conflict (`FieldManagerConflict`), 409 AlreadyExists | PermanentError |
 * | 500 "failed to create typed patch object" (an apply with an undeclared field) | PermanentError |
 * | 400, 401, 403, 404 on a write, 405, 413, 415, 422 | PermanentError |
 *
 * Anything else (a bug in our code) is rethrown unchanged. A 404 on a read is not an error: the
 * caller returns undefined (the object is gone) before classifying.
 *
 * @module
 * @see ../../../shared/STYLE.md §12, §24
 */
import { PermanentError, TransientError } from '../runtime/index.js';

/**
 * A non-2xx answer of the API server to one request (./transport.ts): the HTTP code, the body
 * text (a `metav1.Status` as JSON, usually) and the response headers. The same shape as
 * @kubernetes/client-node's ApiException, which {@link kubeStatusOf} reads too (the CLI and the
 * tests still call client-node), without importing client-node onto a function's start path.
 */
export class KubeHttpError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super(`HTTP ${code}`);
    this.name = 'KubeHttpError';
  }
}

/** An HTTP answer carried by an error: a KubeHttpError or client-node's ApiException (`code`, `body`, `headers`). */
interface HttpAnswerError {
  readonly code: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

function isHttpAnswerError(error: Error): error is Error & HttpAnswerError {
  const fields = error as Error & Partial<Record<'code' | 'body' | 'headers', unknown>>;
  return typeof fields.code === 'number' && 'body' in fields && typeof fields.headers === 'object' && fields.headers !== null;
}

/** The parts of a `metav1.Status` a failed request carried, plus its HTTP code. */
export interface KubeStatus {
  /** The HTTP status code, e.g. 422. */
  readonly code: number;
  /** `Status.reason`, e.g. `Invalid`, `Conflict`, `NotFound`; empty when the body had none. */
  readonly reason: string;
  /** `Status.message`, or the raw body when it was not a Status. */
  readonly message: string;
  /** `Status.details.causes[].reason` (Go: StatusCause.Type), e.g. `FieldManagerConflict`, `FieldValueInvalid`. */
  readonly causeReasons: readonly string[];
  /** `Retry-After` header or `Status.details.retryAfterSeconds`, when given. */
  readonly retryAfterSeconds: number | undefined;
}

// undici and Node socket error codes that mean "the request did not get through".
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * The Kubernetes Status of a failed API request, found on `error` or along its `cause` chain;
 * undefined when the failure was not an HTTP answer from the API server.
 */
export function kubeStatusOf(error: unknown): KubeStatus | undefined {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 8; depth += 1) {
    if (current instanceof Error && isHttpAnswerError(current)) return statusFromHttpAnswer(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

function statusFromHttpAnswer(error: HttpAnswerError): KubeStatus {
  const body: unknown = typeof error.body === 'string' ? parseJson(error.body) : error.body;
  const status = isRecord(body) ? body : {};
  const details = isRecord(status['details']) ? status['details'] : {};
  const causes = Array.isArray(details['causes']) ? details['causes'] : [];
  const header = error.headers['retry-after'];
  const retryAfterHeader = header === undefined ? undefined : Number.parseInt(header, 10);
  const retryAfterDetails = typeof details['retryAfterSeconds'] === 'number' ? details['retryAfterSeconds'] : undefined;
  return {
    code: error.code,
    reason: typeof status['reason'] === 'string' ? status['reason'] : '',
    message:
      typeof status['message'] === 'string'
        ? status['message']
        : typeof error.body === 'string'
          ? error.body.slice(0, 512)
          : `HTTP ${error.code}`,
    causeReasons: causes.flatMap((cause: unknown) =>
      isRecord(cause) && typeof cause['reason'] === 'string' ? [cause['reason']] : [],
    ),
    retryAfterSeconds: Number.isFinite(retryAfterHeader) ? retryAfterHeader : retryAfterDetails,
  };
}

/**
 * Turns a failed API call into a TransientError or PermanentError whose message is
 * `cannot <what>: <status message>`; rethrows anything that is neither an API answer nor a
 * connection failure. `what` names the operation, e.g. `apply PodCliqueSet ns/name`.
 * Pure (returns the error to throw).
 */
export function classifyKubeError(error: unknown, what: string): TransientError | PermanentError {
  if (error instanceof TransientError || error instanceof PermanentError) return error;
  const status = kubeStatusOf(error);
  if (status !== undefined) {
    const message = `cannot ${what}: ${status.code} ${status.reason === '' ? '' : `${status.reason}: `}${status.message}`;
    if (isTransientStatus(status)) {
      return new TransientError(message, { cause: error, throttled: status.code === 429 });
    }
    const reason = status.reason !== '' ? status.reason : isUndeclaredFieldInApply(status) ? 'BadRequest' : `HTTP${status.code}`;
    return new PermanentError(message, { cause: error, reason });
  }
  if (isConnectionFailure(error)) {
    return new TransientError(`cannot ${what}: ${describe(error)}`, { cause: error });
  }
  throw error;
}

/**
 * Whether a failed write was refused because the object changed since it was read: a 409
 * Conflict on a resourceVersion precondition (a TransientError from {@link classifyKubeError};
 * not an AlreadyExists or an apply field conflict, which are permanent). Pure.
 */
export function isResourceVersionConflict(error: unknown): boolean {
  return error instanceof TransientError && kubeStatusOf(error)?.code === 409;
}

function isTransientStatus(status: KubeStatus): boolean {
  if (status.code === 409) {
    // An apply field conflict or an AlreadyExists will fail the same way again; only a stale
    // resourceVersion (reason Conflict, "the object has been modified") is worth a re-read.
    return status.reason !== 'AlreadyExists' && !status.causeReasons.includes('FieldManagerConflict');
  }
  if (isUndeclaredFieldInApply(status)) return false;
  return status.code === 408 || status.code === 410 || status.code === 429 || status.code >= 500;
}

/**
 * A server-side apply naming a field the schema does not declare is answered with a bare 500
 * (no reason) up to at least Kubernetes 1.35: kubernetes/kubernetes#139253, fix proposed in
 * #139255. Retrying cannot help, so it is permanent. This is the one place we read the
 * message text, because the API server gives nothing else to tell it apart; drop it once the
 * fix ships (a 400 BadRequest is then permanent anyway).
 */
function isUndeclaredFieldInApply(status: KubeStatus): boolean {
  return status.code === 500 && status.reason === '' && status.message.startsWith('failed to create typed patch object');
}

function isConnectionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 8; depth += 1) {
    if (current instanceof Error) {
      if (current.name === 'AbortError' || current.name === 'TimeoutError') return true;
      const code = 'code' in current ? current.code : undefined;
      if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('UND_ERR_'))) return true;
      current = current.cause;
    } else {
      return false;
    }
  }
  return false;
}

function describe(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; depth += 1) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
