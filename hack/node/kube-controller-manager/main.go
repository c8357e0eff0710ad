// Command kube-controller-manager is the real one, for the local node: it
// runs the Deployment, ReplicaSet, ServiceAccount and endpoint controllers
// that the in-cluster e2e tests rely on.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream's main has it.

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
