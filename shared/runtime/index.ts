/**
 * The function host's public entry: the contract a function implements, the server that runs
 * it, configuration, the shell's error classes and the helpers functions may share. Nothing
 * runs at import time; every dependency is passed in.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Events in, answers out"
 * @example
 * import { parseConfig, startFunctionServer } from '../../shared/runtime/index.js';
 * const server = await startFunctionServer(definition, { config: parseConfig(process.env), log });
 */
export type { FunctionDefinition, HandlerDeps, KubeEvent, ObjectKey, Outcome, Route } from './contract.js';
export { DONE } from './contract.js';

export { ConfigError, PermanentError, TransientError } from './errors.js';
export type { ConfigIssue, RuntimeErrorOptions } from './errors.js';

export { DEFAULT_MAX_BODY_BYTES, LOG_LEVELS, RenderEnvSchema, RuntimeEnvSchema, defaultConfig, parseConfig, parseRenderSettings, type RenderSettings } from './config.js';
export type { LogLevel, RuntimeConfig } from './config.js';

export {
  APISERVER_EVENT_TYPES,
  APISERVER_EVENT_TYPE_PREFIX,
  PING_EVENT_TYPE,
  RESYNC_EVENT_TYPE,
  decodeEvent,
  deriveObjectKey,
  parseApiServerSubject,
  resyncEventFor,
} from './events.js';
export type { ApiServerEventType, DecodeResult, DecodedEvent, EventAttributes, HttpMessage } from './events.js';

export {
  STATUS_ACCEPTED,
  STATUS_THROTTLED,
  STATUS_TRANSIENT,
  combineResyncOutcomes,
  throwFirstFailure,
  outcomeForError,
  statusForOutcome,
} from './outcome.js';

export { apiGroupOf, findRoute, resyncRoutes } from './routing.js';
export type { ResyncFilter } from './routing.js';

export { mapWithConcurrency } from './concurrency.js';

export { UNREAD_BODY_GRACE_MS, closeAfterAnswer, declaredBodyBytes, readBodyWithLimit } from './body.js';
export type { BodyResult, BodyTimedOut, CloseAfterAnswerOptions, ReadBodyOptions } from './body.js';

export { DURATION_BUCKETS_SECONDS, createRuntimeMetrics } from './metrics.js';
export type { EventErrorType, EventResult, RuntimeMetrics } from './metrics.js';

export { startFunctionServer } from './server.js';
export { serveUntilSignal } from './lifecycle.js';
export type { ServeUntilSignalOptions } from './lifecycle.js';
export type { FunctionServer, FunctionServerOptions } from './server.js';

export { MAX_LOGGED_STRING_CHARS, boundLogFields, truncateForLog } from './log-fields.js';
export { METRIC_PREFIX, buildInfo, registerBuildInfo } from './build-info.js';
export type { BuildInfo } from './build-info.js';
