package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes results as one JSON array, for a pipeline (a GitOps
// pull request's check) to read.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteText writes results for a person: each Network, the requests a
// sync would send in order, and the condition it would then report.
func WriteText(w io.Writer, results []Result) error {
	var b strings.Builder
	for _, r := range results {
		state := "new"
		if r.Exists {
			state = "exists"
		}
		fmt.Fprintf(&b, "Network %s (%s):\n", r.Network, state)
		if len(r.Requests) == 0 && r.Unknown == "" && !r.Refused {
			b.WriteString("  no Neutron request: Neutron matches the spec\n")
		}
		for _, req := range r.Requests {
			fmt.Fprintf(&b, "  %s\n", describe(req))
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", w)
		}
		if r.Unknown != "" {
			fmt.Fprintf(&b, "  then stops: %s\n", r.Unknown)
		}
		if c := r.Condition; c != nil {
			verdict := "then"
			if r.Refused {
				verdict = "refused"
			}
			fmt.Fprintf(&b, "  %s: Ready=%s %s: %s\n", verdict, c.Status, c.Reason, c.Message)
		}
		if r.Error != "" {
			fmt.Fprintf(&b, "  refused, with no condition to report: %s\n", r.Error)
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
