package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/samplecrd/network-controller/pkg/injector"
)

// check is `envoy-injector check -f pod.yaml`: what the webhook would
// decide for each Pod of a file, and why, like `istioctl x check-inject`.
// It exits 1 when it would deny one.
func check(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("envoy-injector check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.StringP("filename", "f", "", `Pods to decide on: YAML or JSON, several documents; "-" is standard input.`)
	var source templateSource
	source.addFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: envoy-injector check -f POD.yaml [--template CONFIGMAP.yaml]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *file == "" {
		fmt.Fprintln(stderr, "envoy-injector check: -f (--filename) is required")
		return 2
	}
	data, err := readInput(*file)
	if err != nil {
		fmt.Fprintf(stderr, "envoy-injector check: %v\n", err)
		return 1
	}
	// The template is read once, and only if a Pod asks.
	wh := &injector.Webhook{Template: sync.OnceValues(source.load)}
	code := 0
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return code
		} else if err != nil {
			fmt.Fprintf(stderr, "envoy-injector check: %v\n", err)
			return 1
		}
		var pod corev1.Pod
		if err := json.Unmarshal(raw, &pod); err != nil || pod.Kind != "Pod" {
			continue
		}
		d, patch := wh.Decide(raw, &pod)
		name := pod.Name
		if name == "" {
			name = pod.GenerateName + "…"
		}
		fmt.Fprintf(stdout, "%s: %s (%s): %s\n", quoteIfNeeded(name), d.Result, d.Reason, quoteIfNeeded(d.Message))
		if patch != nil {
			fmt.Fprintf(stdout, "  patch: %s\n", patch)
		}
		if d.Result == injector.ResultDenied {
			code = 1
		}
	}
}

// readInput reads file, or standard input for "-".
func readInput(file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(file)
}

// quoteIfNeeded is s as it is, or, when it holds what a line cannot (a
// newline, a control character: the Pod's name and the annotations a
// message quotes are the file's), strconv.Quote's: one line per Pod.
func quoteIfNeeded(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return s
	}
	return strconv.Quote(s)
}
