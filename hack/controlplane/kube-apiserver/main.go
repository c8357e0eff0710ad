// Command kube-apiserver is the real Kubernetes API server, built from the
// k8s.io/kubernetes module (no release binary is reachable from our
// machines). Its version is stamped by hack/build-controlplane.sh.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
