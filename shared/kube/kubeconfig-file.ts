/**
 * Reads a kubeconfig file with @kubernetes/client-node. Only ./transport.ts's
 * `loadKubeconfigFile` imports this module, dynamically, so a function started in a pod (in-cluster
 * config) never loads client-node or the undici it imports; a static import here (not an
 * `import()` of the package) lets the build keep only the parts of client-node KubeConfig uses.
 * @module
 */
import { KubeConfig } from '@kubernetes/client-node';

/** The kubeconfig at `path`, its current context. Failures: client-node's own (an unreadable or invalid file). */
export function readKubeconfigFile(path: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}
