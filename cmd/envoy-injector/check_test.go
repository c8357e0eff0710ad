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

// TestCheckExitCodes: 1 only when a Pod would be denied; 2 when check
// cannot decide (its command line, a file it cannot read or parse, a
// template it cannot load), so that a script tells them apart.
func TestCheckExitCodes(t *testing.T) {
	const asks = `apiVersion: v1
kind: Pod
metadata: {name: asks, labels: {sidecar.samplecrd.k8s.io/inject: "true"}}
spec: {containers: [{name: web, image: nginx}]}
`
	const plain = `apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: web, image: nginx}]}
`
	const greedy = `apiVersion: v1
kind: Pod
metadata: {name: greedy, annotations: {initializer.kubernetes.io/envoy: "true", sidecar.samplecrd.k8s.io/cpu-limit: "lots"}}
spec: {containers: [{name: web, image: nginx}]}
`
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	template := filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml")
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		// wantErr is in stderr.
		wantErr string
	}{
		{name: "every Pod admitted", args: []string{"-f", write("admitted.yaml", asks+"---\n"+plain), "--template", template}},
		{name: "a Pod denied", args: []string{"-f", write("denied.yaml", greedy), "--template", template}, wantCode: 1},
		{name: "no template, and no Pod asks for it", args: []string{"-f", write("plain.yaml", plain), "--template", missing}},
		{name: "a template file that is missing", args: []string{"-f", write("asks.yaml", asks), "--template", missing}, wantCode: 2,
			wantErr: "envoy-injector check: the template: open " + missing},
		{name: "a template file that is no ConfigMap", args: []string{"-f", write("asks2.yaml", asks), "--template", write("not-a-configmap.yaml", "kind: [")}, wantCode: 2,
			wantErr: "is not a ConfigMap"},
		{name: "a Pods file that is missing", args: []string{"-f", missing, "--template", template}, wantCode: 2,
			wantErr: "envoy-injector check: open " + missing},
		{name: "a Pods file that is no YAML", args: []string{"-f", write("broken.yaml", "kind: [\n"), "--template", template}, wantCode: 2,
			wantErr: "envoy-injector check: "},
		{name: "no -f", args: []string{"--template", template}, wantCode: 2, wantErr: "-f (--filename) is required"},
		{name: "an unknown flag", args: []string{"--bogus"}, wantCode: 2, wantErr: "unknown flag: --bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := execute(t, append([]string{"check"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, stderr)
			}
		})
	}
}
