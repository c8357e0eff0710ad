package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// WriteJSON writes results as one JSON array, for a pipeline (a GitOps
// pull request's check) to read. encoding/json escapes control characters
// and Unicode's line separators in every string.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteText writes results for a person: each Network, the requests a
// sync would send in order, and the condition it would then report. What
// the manifests and Neutron say (names, IDs, Neutron's refusals, the
// warnings that quote them) is written Printable, one line each: a name
// cannot forge a line of the plan.
func WriteText(w io.Writer, results []Result) error {
	var b strings.Builder
	line := func(format string, args ...string) {
		printable := make([]any, len(args))
		for i, a := range args {
			printable[i] = reconcile.Printable(a)
		}
		fmt.Fprintf(&b, format+"\n", printable...)
	}
	for _, r := range results {
		state := "new"
		if r.Exists {
			state = "exists"
		}
		line("Network %s (%s):", r.Network, state)
		if len(r.Requests) == 0 && r.Unknown == "" && !r.Refused {
			line("  no Neutron request: Neutron matches the spec")
		}
		for _, req := range r.Requests {
			line("  %s", describe(req))
		}
		for _, w := range r.Warnings {
			line("  warning: %s", w)
		}
		if r.Unknown != "" {
			line("  then stops: %s", r.Unknown)
		}
		if c := r.Condition; c != nil {
			verdict := "then"
			if r.Refused {
				verdict = "refused"
			}
			line("  %s: Ready=%s %s: %s", verdict, string(c.Status), c.Reason, c.Message)
		}
		if r.Error != "" {
			line("  refused, with no condition to report: %s", r.Error)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is one request on one line: "update subnet ID: gateway
// 10.0.0.1 -> 10.0.0.254".
func describe(r Request) string {
	line := r.Action + " " + r.Kind
	if r.ID != "" {
		line += " " + r.ID
	}
	var fields []string
	for _, f := range r.Fields {
		if f.From != nil {
			fields = append(fields, fmt.Sprintf("%s %v -> %v", f.Name, show(f.From), show(f.To)))
		} else {
			fields = append(fields, fmt.Sprintf("%s=%v", f.Name, show(f.To)))
		}
	}
	if len(fields) > 0 {
		line += ": " + strings.Join(fields, ", ")
	}
	return line
}

// show is a field's value as JSON says it, so that an empty gateway
// reads "" and a list [..].
func show(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
