//go:build tools

// Package tools records the Go main packages this module builds: kube-apiserver,
// kube-controller-manager, kube-scheduler and etcd. The module exists only so that `go build` can
// resolve k8s.io/kubernetes with its staging modules pinned (see
// ../../../shared/upstream-notes/envtest.md, B.1 and B.2).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
