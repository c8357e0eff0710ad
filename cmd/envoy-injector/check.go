package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/injector"
)

// newCheckCommand is `envoy-injector check -f pod.yaml`: what the webhook
// would decide for each Pod of a file, and why, like `istioctl x
// check-inject`. It exits 1 when it would deny one.
func newCheckCommand() *cobra.Command {
	var file string
	var source templateSource
	fss := &cliflag.NamedFlagSets{}
	fss.FlagSet("check").StringVarP(&file, "filename", "f", "", `Pods to decide on: YAML or JSON, several documents; "-" is standard input.`)
	source.addFlags(fss.FlagSet("template"))
	cmd := &cobra.Command{
		Use:   "check -f POD.yaml [--template CONFIGMAP.yaml]",
		Short: "Say what the webhook would decide for each Pod, and why",
		Long:  "Says what the webhook would decide for each Pod of a file, and why, with the patch it would answer; exits 1 when it would deny one (docs/sidecar-injection.md).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return command.UsageErrorf(cmd, "-f (--filename) is required")
			}
			return check(file, cmd.InOrStdin(), cmd.OutOrStdout(), source)
		},
	}
	command.Setup(cmd, fss)
	return cmd
}

// check writes the decision on each Pod of file.
func check(file string, stdin io.Reader, stdout io.Writer, source templateSource) error {
	fail := func(err error) error { return command.Exit(1, fmt.Errorf("envoy-injector check: %w", err)) }
	data, err := readInput(file, stdin)
	if err != nil {
		return fail(err)
	}
	// The template is read once, and only if a Pod asks.
	wh := &injector.Webhook{Template: sync.OnceValues(source.load)}
	var denied error
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return denied
		} else if err != nil {
			return fail(err)
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
			denied = command.Exit(1, nil)
		}
	}
}

// readInput reads file, or stdin for "-".
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
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
