package tenancy

import (
	"bytes"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// TestAKeptCopyHoldsOnlyItsCloud: a kept copy is written per credential
// (namespace, Secret, cloud), and it holds the Secret's whole clouds.yaml.
// An attacker with one valid credential writes one Secret of n clouds
// that all authenticate the same way (the limit is the Secret's 1 MiB:
// some 5,000 entries), and n Networks each naming one cloud, with a spec
// that Preflight refuses so that nothing is made in Neutron and no quota
// is spent: every one of them is kept, before Preflight, as a copy of the
// whole Secret. That is n copies of n entries, O(n^2) bytes (5,000 MiB
// for a 1 MiB Secret), written into the controller's own namespace,
// whose Secrets quota and etcd every namespace's kept copies share: once
// etcd is out of space the cluster stops, and once the quota is spent no
// other namespace's Network can be kept, so none can be made. The
// per-namespace bound (--max-cloud-credentials-per-namespace) bounds what
// is held in memory, not what is kept. It also copies credentials the
// namespace never named into the controller's namespace.
//
// What the fix should guarantee: a kept copy holds the named cloud alone
// (re-serialized), so that what one namespace can make the controller
// keep grows with its credentials in use, not with their square; and
// (for the lead to decide) a bound on the copies one namespace may have
// kept, and no copy before anything is to be made.
func TestAKeptCopyHoldsOnlyItsCloud(t *testing.T) {
	const clouds = 50
	var yaml bytes.Buffer
	yaml.WriteString("clouds:\n")
	for i := range clouds {
		fmt.Fprintf(&yaml, "  c%d:\n    auth:\n      auth_url: %s\n      username: u\n      password: p\n      project_name: team\n", i, keystone)
	}
	many := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "attacker", Name: "many"},
		Data: map[string][]byte{samplecrdv1.CloudsYAMLKey: yaml.Bytes()}}
	f := newBoundedFixture(t, 256, 4, many)
	for i := range clouds {
		n := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Namespace: "attacker", Name: fmt.Sprintf("n%d", i)},
			Spec: samplecrdv2.NetworkSpec{CloudCredentialsRef: &samplecrdv2.CloudCredentialsReference{SecretName: "many", CloudName: fmt.Sprintf("c%d", i)}}}
		if _, err := f.For(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := f.kube.CoreV1().Secrets(controllerNamespace).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range kept.Items {
		total += len(s.Data[samplecrdv1.CloudsYAMLKey])
	}
	oneCloud := len(cloudsYAML("c10", keystone)) + 64
	if total > len(kept.Items)*oneCloud {
		t.Errorf("one namespace made the controller keep %d copies holding %d bytes (its Secret is %d bytes): each copy holds the whole clouds.yaml, "+
			"not the one cloud it is for (at most %d bytes each)", len(kept.Items), total, yaml.Len(), oneCloud)
	}
}
