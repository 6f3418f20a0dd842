/**
 * Public entry of `shared/profiler`: the cached Python venv with the real Dynamo 1.6.1 profiler
 * and AISimulate (`venvPython()`, `venvBin('aisimulate')`, `ensureVenv()`), the local profiling
 * Job runner and the output-copier's ConfigMap.
 * @module
 */
export { ensureVenv, isVenvReady, profilerBaseEnv, venvBin, venvDir, venvPython, VenvError, ENV_VENV_DIR, ENV_PYTHON, PROFILER_SHIM_DIR } from './venv.js';
export { localProfilerCommand, runProfilingJobLocally, seedHuggingFaceCache, LocalJobError, type LocalJobOptions, type LocalJobRun } from './local-job.js';
export { finalOutputConfigMap, parseProfilerStatus, relayPhaseConfigMap, type DgdrRef, type OutputConfigMap, type OutputCopierResult, type ProfilerStatus } from './output.js';
export { FIELD_MANAGER_OUTPUT_COPIER, startLocalProfilerRunner, type LocalProfilerRunner } from './cluster-runner.js';
export { installOverrideTool } from './override-tool.js';
