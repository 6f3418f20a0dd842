/**
 * The three exceptions of the shell (STYLE.md §12). Decisions never throw; I/O code
 * (`shared/kube`, the host) throws these so the host can map a failure to the broker's answer
 * in one place (`outcomeForError` in ./outcome.ts):
 *
 * - `TransientError`: worth retrying (409 on a precondition, 429, 5xx, timeouts). The host
 *   answers 500, or 429 when `throttled`, so the broker retries with backoff.
 * - `PermanentError`: retrying cannot help (400, 403, 422, an apply field conflict). The host
 *   answers an empty 2xx so the broker does not retry a bad spec.
 * - `ConfigError`: the process configuration is invalid; the process stops before it listens.
 *
 * Each keeps `cause` and exposes typed readonly fields; the message names what failed,
 * lowercase, without a final period.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Events in, answers out"
 * @example
 * throw new TransientError('cannot apply PodCliqueSet ns/name: 503', { cause: err });
 */

/** Options shared by the runtime's error classes. */
export interface RuntimeErrorOptions {
  /** The underlying error, kept for logs (`err.cause`). */
  readonly cause?: unknown;
}

/**
 * A failure worth retrying: the host answers 500 (or 429 when `throttled`).
 * Source: knative.md §2.3 (the broker retries 429 and 5xx with backoff).
 */
export class TransientError extends Error {
  override readonly name = 'TransientError';
  /** True when the failure was a 429 from a dependency: the host answers 429 instead of 500. */
  readonly throttled: boolean;

  constructor(message: string, options: RuntimeErrorOptions & { readonly throttled?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.throttled = options.throttled ?? false;
  }
}

/**
 * A failure no retry can fix: the host answers an empty 2xx and logs it at error level.
 * `reason` is a short CamelCase word for logs and metrics (e.g. `Forbidden`, `Invalid`).
 * Source: DESIGN.md "Events in, answers out" (never make the broker retry a bad spec).
 */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
  readonly reason: string;

  constructor(message: string, options: RuntimeErrorOptions & { readonly reason: string }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options.reason;
  }
}

/** One invalid configuration key: what was expected and what was found. */
export interface ConfigIssue {
  /** The environment variable (or file key), e.g. `PORT`. */
  readonly key: string;
  /** What a valid value looks like, e.g. `an integer from 0 to 65535`. */
  readonly expected: string;
  /** The value found, or undefined when the key was required and absent. */
  readonly received: string | undefined;
}

const MAX_SHOWN_VALUE_CHARS = 64;

function renderReceived(received: string | undefined): string {
  if (received === undefined) return 'nothing';
  const shown =
    received.length > MAX_SHOWN_VALUE_CHARS ? `${received.slice(0, MAX_SHOWN_VALUE_CHARS)}...` : received;
  return JSON.stringify(shown);
}

/**
 * The configuration is invalid: every bad key is listed, each with what was expected.
 * The CLI prints `message` and exits 1 before the server listens. Source: STYLE.md §22.
 * @example
 * new ConfigError([{ key: 'PORT', expected: 'an integer from 0 to 65535', received: 'http' }]).message
 * // 'invalid configuration: PORT must be an integer from 0 to 65535, got "http"'
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options: RuntimeErrorOptions = {}) {
    const rendered = issues
      .map((issue) => `${issue.key} must be ${issue.expected}, got ${renderReceived(issue.received)}`)
      .join('; ');
    super(
      `invalid configuration: ${rendered}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.issues = Object.freeze([...issues]);
  }

  /** The keys that failed, in order, e.g. `['PORT', 'LOG_LEVEL']`. */
  get keys(): readonly string[] {
    return this.issues.map((issue) => issue.key);
  }
}
