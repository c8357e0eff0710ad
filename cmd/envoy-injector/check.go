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

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/injector"
)

// Exit codes of check: deniedCode when the webhook would deny a Pod,
// command.UsageCode when check cannot decide (a command line it cannot
// run, a file it cannot read or parse, a template it cannot load), so
// that a script tells a refusal from its own mistake.
const deniedCode = 1

// newCheckCommand is `envoy-injector check -f pod.yaml`: what the webhook
// would decide for each Pod of a file, and why, like `istioctl x
// check-inject`. It exits deniedCode when it would deny one.
func newCheckCommand() *cobra.Command {
	var file string
	var source templateSource
	fss := &cliflag.NamedFlagSets{}
	fss.FlagSet("check").StringVarP(&file, "filename", "f", "", `Pods to decide on: YAML or JSON, several documents; "-" is standard input.`)
	source.addFlags(fss.FlagSet("template"))
	cmd := &cobra.Command{
		Use:   "check -f POD.yaml [--template CONFIGMAP.yaml]",
		Short: "Say what the webhook would decide for each Pod, and why",
		Long:  "Says what the webhook would decide for each Pod of a file, and why, with the patch it would answer. Exits 0 when it would admit every Pod, 1 when it would deny one, 2 when it cannot decide: a command line it cannot run, a file it cannot read or parse, a template (--template, or the ConfigMap in the cluster) it cannot load (docs/sidecar-injection.md).",
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

// check writes the decision on each Pod of file. It stops at what it
// cannot read: the file, or the template once a Pod asks for it, which
// the webhook would refuse the Pod for (NoTemplate) but is the input's
// fault here.
func check(file string, stdin io.Reader, stdout io.Writer, source templateSource) error {
	fail := func(err error) error {
		return command.Exit(command.UsageCode, fmt.Errorf("envoy-injector check: %w", err))
	}
	data, err := readInput(file, stdin)
	if err != nil {
		return fail(err)
	}
	// The template is read once, and only if a Pod asks.
	var templateErr error
	wh := &injector.Webhook{Template: sync.OnceValues(func() (*injector.Template, error) {
		t, err := source.load()
		templateErr = err
		return t, err
	})}
	var denied error
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return denied
		} else if err != nil {
			return fail(err)
		}
		var pod corev1.Pod
		if err := json.Unmarshal(raw, &pod); err != nil || pod.Kind != "Pod" {
			continue
		}
		d, patch := wh.Decide(raw, &pod)
		if templateErr != nil {
			return fail(fmt.Errorf("the template: %w", templateErr))
		}
		name := pod.Name
		if name == "" {
			name = pod.GenerateName + "…"
		}
		fmt.Fprintf(stdout, "%s: %s (%s): %s\n", quoteIfNeeded(name), d.Result, d.Reason, quoteIfNeeded(d.Message))
		if patch != nil {
			fmt.Fprintf(stdout, "  patch: %s\n", patch)
		}
		if d.Result == injector.ResultDenied {
			denied = command.Exit(deniedCode, nil)
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
