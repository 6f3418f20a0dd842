/**
 * The logger shape the harness and the binary builder write progress to. A pino `Logger` fits it,
 * and so does the line printer below, which the CLI uses for human-readable progress.
 * @module
 */

/** A pino-compatible subset: a constant message with variable data as fields (STYLE.md §23). */
export interface HarnessLog {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/**
 * Writes one human-readable line per call, `HH:MM:SS <msg> key=value ...`, to `write`
 * (stderr by default). `debug` lines are dropped unless `verbose`.
 */
export function createLineLog(
  options: { readonly write?: (line: string) => void; readonly verbose?: boolean } = {},
): HarnessLog {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const emit = (level: string) => (fields: object, msg: string) => {
    const time = new Date().toISOString().slice(11, 19);
    // An unset field is left out (never `key=undefined`), as pino leaves it out of JSON.
    const pairs = Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${formatValue(value)}`)
      .join(' ');
    const prefix = level === 'info' ? '' : `${level.toUpperCase()} `;
    write(`${time} ${prefix}${msg}${pairs === '' ? '' : ` ${pairs}`}\n`);
  };
  return {
    debug: options.verbose === true ? emit('debug') : () => {},
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
  };
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}
