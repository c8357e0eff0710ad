package main

import (
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
			code, stdout, stderr := execute(t, "inject", "-f", golden(name, "input.yaml"), "--template", template)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(golden(name, "output.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Errorf("the output is not %s", golden(name, "output.yaml"))
			}
		})
	}
}

func TestInjectCommandRefusesWithTheGoldenMessage(t *testing.T) {
	code, _, stderr := execute(t, "inject", "-f", golden("refused-override", "input.yaml"),
		"--template", filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml"))
	want, err := os.ReadFile(golden("refused-override", "error.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(stderr, strings.TrimSpace(string(want))) {
		t.Errorf("exit %d, stderr %q: want 1 and the message of error.txt", code, stderr)
	}
}
