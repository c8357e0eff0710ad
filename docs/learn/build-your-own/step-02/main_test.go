package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestRunListsTheGreetingsOfTheKubeconfigsServer: run reads the
// kubeconfig, and the generated clientset asks the server it names for the
// Greetings of the group and version register.go declares.
func TestRunListsTheGreetingsOfTheKubeconfigsServer(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/tutorial.samplecrd.k8s.io/v1/greetings" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion": "tutorial.samplecrd.k8s.io/v1", "kind": "GreetingList",
			"items": [{"metadata": {"name": "hello", "namespace": "default"}, "spec": {"message": "Hello, world"}}]}`))
	}))
	defer server.Close()

	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["test"] = &clientcmdapi.Cluster{Server: server.URL}
	kubeconfig.Contexts["test"] = &clientcmdapi.Context{Cluster: "test"}
	kubeconfig.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(t.Context(), path, &out); err != nil {
		t.Fatal(err)
	}
	if want := "default/hello: Hello, world\n"; out.String() != want {
		t.Errorf("run printed %q, want %q", out.String(), want)
	}
}
