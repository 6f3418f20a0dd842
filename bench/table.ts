/**
 * What every benchmark prints: one table per bench, each row beside a baseline measured in the
 * same run, the ratio, the aim and `met`/`MISSED`. A missed aim is reported, never hidden.
 * @module
 */

export interface BenchRow {
  /** What was measured, e.g. `render 25 components`. */
  readonly name: string;
  /** The measured value, in `unit`. */
  readonly value: number;
  readonly unit: string;
  /** The baseline's value in the same unit, measured in the same run, and what it is. */
  readonly baseline?: { readonly name: string; readonly value: number };
  /** The aim, as text (`<= 1 ms`, `>= 0.7x`), and whether it was met. */
  readonly aim?: { readonly text: string; readonly isMet: boolean };
}

function format(value: number): string {
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 0.1) return value.toFixed(3);
  return value.toPrecision(3);
}

/** Renders rows as an aligned text table under a title. Pure. */
export function renderTable(title: string, rows: readonly BenchRow[]): string {
  const header = ['measure', 'value', 'baseline', 'baseline value', 'ratio', 'aim', 'result'];
  const lines = rows.map((row) => [
    row.name,
    `${format(row.value)} ${row.unit}`,
    row.baseline?.name ?? '-',
    row.baseline === undefined ? '-' : `${format(row.baseline.value)} ${row.unit}`,
    row.baseline === undefined || row.baseline.value === 0 ? '-' : `${(row.value / row.baseline.value).toFixed(2)}x`,
    row.aim?.text ?? '-',
    row.aim === undefined ? '-' : row.aim.isMet ? 'met' : 'MISSED',
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...lines.map((line) => (line[column] ?? '').length)));
  const pad = (cells: readonly string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return [`\n${title}`, pad(header), pad(widths.map((width) => '-'.repeat(width))), ...lines.map(pad)].join('\n') + '\n';
}

/** Median of a sample (sorted copy). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * Times `fn` `iterations` times after `warmup` runs, in batches, and returns the median time
 * of one call in milliseconds (batches smooth out timer resolution and GC pauses).
 */
export function timeSync(fn: () => unknown, options: { readonly iterations: number; readonly warmup: number; readonly batches?: number }): number {
  for (let index = 0; index < options.warmup; index += 1) fn();
  const batches = options.batches ?? 9;
  const perBatch = Math.max(1, Math.floor(options.iterations / batches));
  const samples: number[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    const started = performance.now();
    for (let index = 0; index < perBatch; index += 1) fn();
    samples.push((performance.now() - started) / perBatch);
  }
  return median(samples);
}

/** Least-squares slope and intercept of y over x. */
export function linearFit(points: readonly { readonly x: number; readonly y: number }[]): { readonly slope: number; readonly intercept: number; readonly r2: number } {
  const n = points.length;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  const sxy = points.reduce((sum, p) => sum + (p.x - meanX) * (p.y - meanY), 0);
  const sxx = points.reduce((sum, p) => sum + (p.x - meanX) ** 2, 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = meanY - slope * meanX;
  const ssTot = points.reduce((sum, p) => sum + (p.y - meanY) ** 2, 0);
  const ssRes = points.reduce((sum, p) => sum + (p.y - (intercept + slope * p.x)) ** 2, 0);
  return { slope, intercept, r2: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

/** This process's CPU time (user + system), in milliseconds. */
export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * Times `measured` and `baseline` in alternating batches after `warmup` runs of each, in this
 * process's CPU time, and returns the median milliseconds of one call of each. On a shared
 * machine wall time mostly measures the other processes, and alternating keeps the two under
 * the same conditions, so their ratio holds even when the absolute figures drift.
 */
export function timeSyncPair(
  measured: () => unknown,
  baseline: () => unknown,
  options: { readonly iterations: number; readonly warmup: number; readonly batches?: number },
): { readonly measuredMs: number; readonly baselineMs: number } {
  for (let index = 0; index < options.warmup; index += 1) {
    measured();
    baseline();
  }
  const batches = options.batches ?? 9;
  const perBatch = Math.max(1, Math.floor(options.iterations / batches));
  const measuredSamples: number[] = [];
  const baselineSamples: number[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    let started = cpuMs();
    for (let index = 0; index < perBatch; index += 1) measured();
    measuredSamples.push((cpuMs() - started) / perBatch);
    started = cpuMs();
    for (let index = 0; index < perBatch; index += 1) baseline();
    baselineSamples.push((cpuMs() - started) / perBatch);
  }
  return { measuredMs: median(measuredSamples), baselineMs: median(baselineSamples) };
}
