"""Local stand-in for the Dynamo repository's `deploy/utils/dynamo_deployment.py`.

The released `ai-dynamo==1.6.1` profiler imports `cleanup_remaining_deployments`
(`dynamo/profiler/profile_sla.py`) and `DeploymentFailedError`, `DynamoDeploymentClient`
(`interpolation.py`, `thorough.py`) from this repo-root module, which the wheel does not ship (the
planner image has the repository at /workspace). Rapid mode never creates a deployment, so
cleanup has nothing to do; thorough mode needs a cluster with GPUs and is refused with a clear
error. Source: ../shared/upstream-notes/profiler.md section 3.1 (problem 4), section 3.7.
"""

from typing import Any, Optional


class DeploymentFailedError(RuntimeError):
    """A deployment reached a terminal failure (raised by the real client; never locally)."""


class DynamoDeploymentClient:
    """Thorough-mode deployment client: unavailable when the profiler runs locally."""

    def __init__(self, namespace: str, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "searchStrategy 'thorough' deploys candidate DGDs on a Kubernetes cluster with GPUs; "
            "the local profiler runs rapid mode only"
        )


async def cleanup_remaining_deployments(
    deployment_clients: Optional[list] = None, namespace: Optional[str] = None, *args: Any, **kwargs: Any
) -> None:
    """No deployment was created locally, so there is nothing to clean up."""
    return None
