// The namespace a program works in, which a Pod is told and a kubeconfig names.

package command

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// Namespace is the namespace the program works in, as client-go's clientcmd
// decides it for kubectl and every controller: in a Pod, $POD_NAMESPACE
// (set from the downward API) or its ServiceAccount's namespace; out of
// cluster, the namespace of kubeconfig's current context, else "default".
// kubeconfig is the --kubeconfig flag; empty means none (in cluster).
func Namespace(kubeconfig string) (string, error) {
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{})
	ns, _, err := cfg.Namespace()
	if clientcmd.IsEmptyConfig(err) {
		// Neither a kubeconfig nor a Pod: the API server's own default. The
		// missing configuration is reported where the client is built.
		return "default", nil
	}
	if err != nil {
		return "", fmt.Errorf("finding the namespace to work in: %w", err)
	}
	return ns, nil
}
