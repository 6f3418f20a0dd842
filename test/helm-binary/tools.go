//go:build tools

// Package tools pins the helm command the chart tests run. It is built from the Go module
// proxy (no GitHub release download is reachable here) by `dynamo-fn helm-build`.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
