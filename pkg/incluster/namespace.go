// Package incluster knows where a program runs when it runs in a Pod.
package incluster

import (
	"os"
	"strings"
)

// Namespace is the namespace of the Pod the program runs in: $POD_NAMESPACE
// (set from the downward API), else the ServiceAccount's namespace file,
// else "default" (out of cluster).
func Namespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return strings.TrimSpace(string(data))
	}
	return "default"
}
