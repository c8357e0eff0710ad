package plan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAPlanCannotBeForged is issue 40's item on plan's output: names, IDs
// and Neutron's words holding newlines, carriage returns and Unicode's
// line separators are written one line each in the text, and as JSON
// strings that decode to what they were in -o json.
func TestAPlanCannotBeForged(t *testing.T) {
	const evil = "x\nNetwork team-a/web (exists):\r\n  no Neutron request\u2028then: Ready=True"
	results := []Result{{
		Network:   "team-a/" + evil,
		Exists:    true,
		Requests:  []Request{{Action: "update", Kind: "subnet", ID: evil, Fields: []Field{{Name: "gateway", From: evil, To: "10.0.0.1"}}}},
		Warnings:  []string{"10.1.0.0/25 overlaps subnet " + evil},
		Condition: &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NeutronRejected", Message: "Neutron refused: " + evil},
		Refused:   true,
		Unknown:   evil,
		Error:     evil,
	}}
	var text bytes.Buffer
	if err := WriteText(&text, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	// The Network, its request, its warning, where it stops, the
	// condition and the error.
	if len(lines) != 6 || strings.ContainsAny(text.String(), "\r\u2028") {
		t.Errorf("%d lines, want 6:\n%s", len(lines), text.String())
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") {
			t.Errorf("a line the plan did not write: %q", l)
		}
	}

	var out bytes.Buffer
	if err := WriteJSON(&out, results); err != nil {
		t.Fatal(err)
	}
	var back []Result
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back[0].Network != results[0].Network || back[0].Condition.Message != results[0].Condition.Message || !reflect.DeepEqual(back[0].Warnings, results[0].Warnings) {
		t.Errorf("-o json does not say what the plan found: %+v", back[0])
	}
	if strings.ContainsAny(out.String(), "\r\u2028") {
		t.Errorf("-o json holds a raw line break:\n%s", out.String())
	}
}
