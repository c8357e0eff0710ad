package reconcile

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// forged is a log line someone would like to add after their own text.
const forged = "I1125 12:00:00.000000       1 controller.go:1] \"Synced\" key=\"team-a/web\" ready=True"

// TestNeutronTextCannotForgeLines is issue 40's item on messages: whatever
// Neutron's text holds, the condition, the Event and the error the
// controller logs are each one line, with nothing that hides or reorders
// text; the rest of the text is kept as written, and the error is still
// the one Neutron returned.
func TestNeutronTextCannotForgeLines(t *testing.T) {
	tests := []struct {
		name, neutron string
		// want is a part of the message as it must be written.
		want string
	}{
		{"a newline and a forged log line", "Invalid input\n" + forged, `Invalid input\n` + forged},
		{"a carriage return", "Invalid input\r" + forged, `Invalid input\r` + forged},
		{"a terminal escape", "Invalid \x1b[2K\x1b[1Ainput", `Invalid \x1b[2K\x1b[1Ainput`},
		{"Unicode's line and paragraph separators", "Invalid\u2028input\u2029", `Invalid\u2028input\u2029`},
		{"a right-to-left override", "Invalid \u202etupni", `Invalid \u202etupni`},
		{"format characters: zero-width space, joiner, byte order mark, soft hyphen", "In\u200bva\u200dlid\ufeff in\u00adput",
			`In\u200bva\u200dlid\ufeff in\u00adput`},
		{"invisible tag characters, beyond the BMP", "Invalid\U000E0041\U000E0042", `Invalid\U000e0041\U000e0042`},
		{"bytes that are not UTF-8", "Invalid \xff\xfe input", `Invalid \xff\xfe input`},
		{"quotes, backslashes and accents stay as written", `Nom "réseau" \d+ 'x'`, `Nom "réseau" \d+ 'x'`},
	}
	network := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "a"}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// As classify makes it; a body that is not Neutron's JSON is
			// taken as it is, bytes that are not UTF-8 included.
			refused := &neutron.RejectedError{Op: "creating network", StatusCode: 400, Type: "InvalidInput", Message: tc.neutron}
			p := (&Reconciler{}).newPass(inTrace(0xab), toV2(t, network))
			p.eventf(corev1.EventTypeNormal, eventAdopted, "Adopted Neutron network %s", tc.neutron)
			out := p.failed(phaseSyncing, refused, Observed{})
			for what, text := range map[string]string{
				"condition": out.Condition.Message,
				"event":     out.Events[0].Message,
				"error":     out.Err.Error(),
			} {
				if !strings.Contains(text, tc.want) {
					t.Errorf("the %s %q does not hold %q", what, text, tc.want)
				}
				if i := strings.IndexFunc(text, unprintable); i >= 0 || !utf8.ValidString(text) {
					t.Errorf("the %s %q holds what could forge a line", what, text)
				}
			}
			var rejected *neutron.RejectedError
			if !errors.As(out.Err, &rejected) || rejected.Message != tc.neutron {
				t.Errorf("the error is no longer Neutron's refusal: %#v", out.Err)
			}
		})
	}
}

// TestAnEscapeIsNeverCutInTwo: a message of nothing but escaped
// characters, cut to MaxMessageLength, ends on a whole escape.
func TestAnEscapeIsNeverCutInTwo(t *testing.T) {
	messages := []string{strings.Repeat("\n", 2000), "x" + strings.Repeat("\u2028", 2000), "xy" + strings.Repeat("\x1b", 2000)}
	// The longest escape, a tag character's (10 bytes), after each
	// length of text, so that the cut falls at each byte of one.
	for n := range 10 {
		messages = append(messages, strings.Repeat("x", n)+strings.Repeat("\U000E0041", 2000))
	}
	for _, s := range messages {
		msg := BoundMessage(s)
		kept, _, ok := strings.Cut(msg, "…")
		head := kept
		if len(msg) > MaxMessageLength || !ok {
			t.Fatalf("a %d-byte message became %d bytes: %q", len(s), len(msg), msg)
		}
		for _, esc := range []string{`\n`, `\u2028`, `\x1b`, `\U000e0041`} {
			head = strings.ReplaceAll(head, esc, "")
		}
		if strings.Contains(head, `\`) {
			t.Errorf("the cut message ends in a piece of an escape: %q", kept[max(0, len(kept)-12):])
		}
	}
}

// TestOverlapConditionsNameNoOtherSubnet is issue 40's finding 13b: each
// of Neutron's overlap refusals (neutron-server 21's words, the other
// subnet named where it names it) is a CIDRConflict whose message says
// what the Network's author can do, in the controller's words, and
// nothing of the other subnet.
func TestOverlapConditionsNameNoOtherSubnet(t *testing.T) {
	const theirID, theirCIDR = "5b0e2a8e-0d0b-4a55-9d4c-3b1c1f0e9a11", "10.20.1.0/24"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"a subnet create that overlaps", neutron.ErrorForResponse("creating subnet", 400, "InvalidInput",
			"Invalid input for operation: Requested subnet with cidr: 10.20.0.0/16 for network: 0c5e1f7a-0000-4000-8000-000000000001 overlaps with another subnet."),
			"Choose another range"},
		{"a router interface that overlaps a subnet on the router", neutron.ErrorForResponse("attaching port", 400, "BadRequest",
			"Bad router request: Cidr 10.20.0.0/16 of subnet 9a9a9a9a-0000-4000-8000-000000000002 overlaps with cidr "+theirCIDR+" of subnet "+theirID+"."),
			"spec.router"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := classify(phaseSyncing, tc.err)
			if v.reason != samplecrdv1.ReasonCIDRConflict || v.requeue != AddAfter {
				t.Errorf("classify = %s, %v; want CIDRConflict, AddAfter", v.reason, v.requeue)
			}
			if strings.Contains(v.message, theirID) || strings.Contains(v.message, theirCIDR) || strings.Contains(v.message, "Bad router request") {
				t.Errorf("the condition %q echoes Neutron's words about another subnet", v.message)
			}
			if !strings.Contains(v.message, tc.want) {
				t.Errorf("the condition %q does not say %q", v.message, tc.want)
			}
		})
	}
}
