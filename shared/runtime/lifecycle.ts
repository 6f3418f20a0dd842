/**
 * The process lifecycle every `serve` shares: JSON logs and a metrics registry with process
 * metrics, start, wait for the first SIGTERM/SIGINT, drain, stop.
 * @module
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LogLevel } from './config.js';
import { boundLogFields } from './log-fields.js';

export interface ServeUntilSignalOptions {
  readonly logLevel: LogLevel;
  /** Where JSON logs go; undefined means stdout. */
  readonly logDestination: DestinationStream | undefined;
  /** Calls `listener` once on the first shutdown signal; returns an unsubscribe function. */
  readonly onShutdownSignal: (listener: (signal: string) => void) => () => void;
  /** Starts the server; `close()` must drain and stop it. */
  readonly start: (log: Logger, registry: Registry) => Promise<{ close(): Promise<void> }>;
}

/**
 * Starts a server and keeps it until a shutdown signal, then closes it.
 * The signal handler is installed before `start`, so a signal during start-up is not lost.
 * Out: `{ ok: true }` after a signal-initiated close; `{ ok: false, error }` when start failed
 * (logged as fatal). Never rejects for a start failure.
 */
export async function serveUntilSignal(options: ServeUntilSignalOptions): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: Error }> {
  const log = pino({ level: options.logLevel, formatters: { log: boundLogFields } }, options.logDestination);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  let unsubscribe: () => void = () => undefined;
  const signalled = new Promise<string>((resolve) => {
    unsubscribe = options.onShutdownSignal(resolve);
  });
  try {
    const server = await options.start(log, registry);
    const signal = await signalled;
    log.info({ signal }, 'Received shutdown signal');
    await server.close();
    return { ok: true };
  } catch (error) {
    log.fatal({ err: error }, 'Start failed');
    return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
  } finally {
    unsubscribe();
  }
}
