package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSaysWhatTheWebhookWouldDecideAndWhy: one line per Pod, with
// the result and the reason, and exit 1 when one would be denied.
func TestCheckSaysWhatTheWebhookWouldDecideAndWhy(t *testing.T) {
	pods := `apiVersion: v1
kind: Pod
metadata: {name: by-label, labels: {sidecar.samplecrd.k8s.io/inject: "true"}}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: on-the-host, annotations: {initializer.kubernetes.io/envoy: "true"}}
spec: {hostNetwork: true, containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: greedy, annotations: {initializer.kubernetes.io/envoy: "true", sidecar.samplecrd.k8s.io/cpu-limit: "lots"}}
spec: {containers: [{name: web, image: nginx}]}
`
	file := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(file, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := execute(t, "check", "-f", file, "--template", filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml"))
	if code != 1 {
		t.Errorf("exit %d, want 1 (one Pod would be denied); stderr %s", code, stderr)
	}
	var decisions []string
	for line := range strings.Lines(stdout) {
		if !strings.HasPrefix(line, " ") {
			decisions = append(decisions, strings.Join(strings.SplitN(line, ": ", 3)[:2], ": "))
		}
	}
	want := []string{"by-label: injected (Injected)", "plain: skipped (NotRequested)", "on-the-host: skipped (HostNetwork)", "greedy: denied (OverrideRefused)"}
	if strings.Join(decisions, "\n") != strings.Join(want, "\n") {
		t.Errorf("decisions:\n%s\nwant:\n%s\n(output:\n%s)", strings.Join(decisions, "\n"), strings.Join(want, "\n"), stdout)
	}
}

// TestCheckWritesOneLinePerPod: a Pod whose name and annotations hold
// newlines (the file is anyone's) is one line of check's output; the
// message quotes what it holds.
func TestCheckWritesOneLinePerPod(t *testing.T) {
	const pods = `apiVersion: v1
kind: Pod
metadata: {generateName: "forger\nweb: injected (Injected)\n", annotations: {initializer.kubernetes.io/envoy: "true", sidecar.samplecrd.k8s.io/cpu-limit: "1\nweb: injected (Injected): fine\u2028"}}
spec: {containers: [{name: web, image: nginx}]}
`
	file := filepath.Join(t.TempDir(), "pods.yaml")
	if err := os.WriteFile(file, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := execute(t, "check", "-f", file, "--template", filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml"))
	var decisions []string
	for line := range strings.Lines(stdout) {
		if !strings.HasPrefix(line, " ") {
			decisions = append(decisions, line)
		}
	}
	if len(decisions) != 1 || strings.ContainsAny(stdout, "\r\u2028") {
		t.Errorf("%d lines of decisions for one Pod, want 1:\n%s", len(decisions), stdout)
	}
}
