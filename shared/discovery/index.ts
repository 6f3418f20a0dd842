/**
 * Public entry of `shared/discovery`: the shell of metrics hardware discovery shared by the
 * profile function (DGDR v1beta1) and the admission function (DGDR v1beta2 defaulting): it lists
 * the DCGM and Intel XPU exporter pods, scrapes their metrics over HTTP within upstream's
 * timeouts (and, in admission, the webhook's time budget) and keeps a success 60 s per SKU
 * filter. The rules it feeds are pure, in shared/domain/dgdr (dcgm.ts, intel-xpu.ts, discovery.ts).
 * @module
 */
export * from './exporters.js';
