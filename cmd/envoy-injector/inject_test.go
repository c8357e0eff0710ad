package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden is a case of pkg/injector's golden tests, which specify what
// offline injection and the webhook do; these tests check that the command
// line is wired to exactly that.
func golden(name, file string) string {
	return filepath.Join("..", "..", "pkg", "injector", "testdata", "golden", name, file)
}

func TestInjectCommandWritesTheGoldenOutput(t *testing.T) {
	for _, name := range []string{"workloads", "native-sidecar"} {
		t.Run(name, func(t *testing.T) {
			template := golden(name, "template.yaml")
			if _, err := os.Stat(template); err != nil {
				template = filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml")
			}
			var stdout, stderr bytes.Buffer
			if code := inject([]string{"-f", golden(name, "input.yaml"), "--template", template}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			want, err := os.ReadFile(golden(name, "output.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stdout.Bytes(), want) {
				t.Errorf("the output is not %s", golden(name, "output.yaml"))
			}
		})
	}
}

func TestInjectCommandRefusesWithTheGoldenMessage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := inject([]string{"-f", golden("refused-override", "input.yaml"),
		"--template", filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml")}, &stdout, &stderr)
	want, err := os.ReadFile(golden("refused-override", "error.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(stderr.String(), strings.TrimSpace(string(want))) {
		t.Errorf("exit %d, stderr %q: want 1 and the message of error.txt", code, stderr.String())
	}
}
