//go:build tools

// Package tools records the one Go main package this module builds: kwok, which keeps fake
// Nodes alive and moves Pods through their lifecycle by Stages (no kubelet, no containers).
// It is its own module because kwok v0.8.0 uses the k8s.io v0.36 client libraries, which
// would not resolve beside the v1.35 staging pins of ../kube-binaries
// (see ../../../shared/upstream-notes/kwok.md "Build").
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
