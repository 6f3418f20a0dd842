/**
 * Public entry of `shared/knative`: the Knative Serving client over undici and the status rows
 * of `dynamo-fn status` and `install --wait`.
 * @module
 */
export * from './status.js';
export * from './client.js';
export * from './collect.js';
