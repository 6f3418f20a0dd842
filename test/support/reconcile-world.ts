/**
 * The reconcile function on loopback behind the event bridge, as the integration files that drive
 * DGDs through the real API server start it: the DGD and child subscriptions the chart's
 * ApiServerSources deliver (`reconcileSubscriptions`), no resync (child events are what restore
 * state, well within a test's wait), and a Broker's bounded retries.
 * @module
 */
import type { Logger } from 'pino';
import { reconcileSubscriptions, startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { testKubeConfig } from '../harness/testing.js';

export interface ReconcileWorld {
  readonly server: FunctionServer;
  readonly bridge: EventBridge;
  /** Stops the bridge, then the function server. */
  stop(): Promise<void>;
}

/** Starts the reconcile function (the run's KUBECONFIG, admin) and the bridge delivering to it. */
export async function startReconcileWorld(log: Logger): Promise<ReconcileWorld> {
  const server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] }), log, host: '127.0.0.1' });
  const bridge = await startEventBridge({ kubeConfig: testKubeConfig(), log, resyncIntervalSeconds: 0, retry: { retries: 3, backoffDelayMs: 50 }, subscriptions: reconcileSubscriptions(server.url) });
  return {
    server,
    bridge,
    stop: async () => {
      await bridge.stop();
      await server.close();
    },
  };
}
