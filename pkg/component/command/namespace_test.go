package command

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNamespaceIsClientcmds(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Out of any Pod: no service account, whatever the machine running
	// the test has in its environment.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("POD_NAMESPACE", "")
	tests := []struct {
		name, kubeconfig, want string
	}{
		{"the kubeconfig context's namespace", kubeconfig, "team-a"},
		{"no kubeconfig, no Pod: default", "", "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Namespace(tc.kubeconfig)
			if err != nil || got != tc.want {
				t.Errorf("Namespace(%q) = %q, %v; want %q", tc.kubeconfig, got, err, tc.want)
			}
		})
	}
}
