package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// clusterAdmin is a document someone would like an administrator to
// apply: a binding of cluster-admin.
const clusterAdmin = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: pwned
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: User
  name: mallory
`

// hostileNames are Neutron names (which may hold any text) that would
// become documents, comments or lines of their own if printed raw.
var hostileNames = []struct{ what, name string }{
	{"a YAML document after a separator", "app\n---\n" + clusterAdmin},
	{"a document in JSON after a separator", "app\n---\n{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"pwned\"}}"},
	{"a document after a carriage return", "app\r---\r" + clusterAdmin},
	{"a comment and a key", "app # comment\nkind: ClusterRoleBinding"},
	{"quotes", `app "quoted" 'single' \"escaped\"`},
	{"unicode line separators", "app\u2028---\u2028kind: ClusterRoleBinding\u2029"},
	{"a very long name", strings.Repeat("x\n---\n", 5000)},
}

// TestNeutronNamesNeverBecomeDocuments is issue 40's finding 2: whatever a
// Neutron name holds, import's output, read by a real YAML decoder (the
// one kubectl uses), is exactly one Network per importable network and
// nothing else; and its stderr has exactly one line per skipped network.
func TestNeutronNamesNeverBecomeDocuments(t *testing.T) {
	f := neutronfake.New()
	want := map[string]bool{} // the IDs of the importable networks
	for i, h := range hostileNames {
		id := f.AddNetwork(h.name, h.name)
		f.AddSubnet(id, h.name, h.name, fmt.Sprintf("10.%d.0.0/24", 10+i), fmt.Sprintf("10.%d.0.1", 10+i))
		want[id] = true
		// And the same name on a network import skips (no subnet).
		f.AddNetwork(h.name, "")
	}
	cs, err := Candidates(context.Background(), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Real Neutron IDs are UUIDs, which the comment above a manifest
	// names; the fake's are not.
	for i := range cs {
		id := uuid.NewString()
		if want[cs[i].NetworkID] {
			delete(want, cs[i].NetworkID)
			want[id] = true
			cs[i].Network.Spec.Adopt.NetworkID = id
		}
		cs[i].NetworkID = id
	}
	var manifests, skipped bytes.Buffer
	if err := Write(&manifests, &skipped, cs); err != nil {
		t.Fatal(err)
	}

	got := map[string]bool{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests.Bytes()), 4096)
	for i := 0; ; i++ {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("document %d does not parse: %v\n%s", i, err, manifests.String())
		}
		if doc == nil {
			t.Errorf("document %d is empty:\n%s", i, manifests.String())
			continue
		}
		raw, _ := json.Marshal(doc)
		var n samplecrdv1.Network
		if err := json.Unmarshal(raw, &n); err != nil || n.Kind != "Network" || n.APIVersion != samplecrdv1.SchemeGroupVersion.String() || n.Spec.Adopt == nil {
			t.Errorf("document %d is not a Network that adopts (%v): %s", i, err, raw)
			continue
		}
		if !want[n.Spec.Adopt.NetworkID] || got[n.Spec.Adopt.NetworkID] {
			t.Errorf("document %d adopts %s: not an importable network, or twice", i, n.Spec.Adopt.NetworkID)
		}
		got[n.Spec.Adopt.NetworkID] = true
	}
	if len(got) != len(want) {
		t.Errorf("%d Networks, want %d:\n%s", len(got), len(want), manifests.String())
	}

	lines := strings.Split(strings.TrimSuffix(skipped.String(), "\n"), "\n")
	if len(lines) != len(hostileNames) {
		t.Errorf("%d lines on stderr, want one per skipped network (%d):\n%s", len(lines), len(hostileNames), skipped.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "skipped Neutron network ") || strings.ContainsAny(l, "\r\u2028\u2029") {
			t.Errorf("a line on stderr that import did not write: %q", l)
		}
	}
}
