package conversion_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/crdschema"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
)

// crdFile is the Network CRD as the project ships it.
const crdFile = "../../../artifacts/crd/networks.samplecrd.k8s.io.yaml"

// store is conversion.Stored as the API server answers it: the Networks it
// holds, by namespace/name, and v2's schema of the CRD the project ships.
type store struct {
	networks map[string]*v2.Network
	schema   *crdschema.Schema
}

func newStore(t *testing.T, stored ...*v2.Network) *store {
	t.Helper()
	data, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	schema, err := crdschema.New(crd, "v2")
	if err != nil {
		t.Fatal(err)
	}
	s := &store{networks: map[string]*v2.Network{}, schema: schema}
	for _, n := range stored {
		s.networks[n.Namespace+"/"+n.Name] = n.DeepCopy()
	}
	return s
}

func (s *store) Network(_ context.Context, namespace, name string) (*v2.Network, error) {
	if n, ok := s.networks[namespace+"/"+name]; ok {
		return n.DeepCopy(), nil
	}
	return nil, nil
}

func (s *store) Schema(context.Context) (*crdschema.Schema, error) { return s.schema, nil }

// asV1 is n as a v1 client reads it: its first subnet at the top, the
// rest in v1.SubnetsAnnotation.
func asV1(t *testing.T, n *v2.Network) *v1.Network {
	t.Helper()
	out := &v1.Network{}
	if err := scheme.Scheme.Convert(n.DeepCopy(), out, nil); err != nil {
		t.Fatal(err)
	}
	out.APIVersion, out.Kind = "samplecrd.k8s.io/v1", "Network"
	return out
}

// withRest is in with the annotation's spec of the other subnets changed
// by edit, as a v1 client may write it.
func withRest(t *testing.T, in *v1.Network, edit func(rest map[string]any)) *v1.Network {
	t.Helper()
	out := in.DeepCopy()
	rest := map[string]any{}
	if raw, ok := out.Annotations[v1.SubnetsAnnotation]; ok {
		if err := json.Unmarshal([]byte(raw), &rest); err != nil {
			t.Fatal(err)
		}
	}
	edit(rest)
	b, err := json.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[v1.SubnetsAnnotation] = string(b)
	return out
}

// secondSubnet edits the first subnet of the annotation's spec.
func secondSubnet(edit func(s map[string]any)) func(rest map[string]any) {
	return func(rest map[string]any) {
		subnets, _ := rest["subnets"].([]any)
		edit(subnets[0].(map[string]any))
	}
}

// convertToV2 is the webhook's answer to converting in to v2 with st.
func convertToV2(t *testing.T, st conversion.Stored, in *v1.Network) *apiextensionsv1.ConversionResponse {
	t.Helper()
	return conversion.Webhook{Stored: st}.Review(context.Background(), &apiextensionsv1.ConversionRequest{
		UID: uid, DesiredAPIVersion: "samplecrd.k8s.io/v2", Objects: []runtime.RawExtension{raw(t, in)},
	})
}

// poolDualStack is a Ready v2 Network whose IPv6 subnet is allocated from
// a pool.
func poolDualStack(name string) *v2.Network {
	n := v2DualStack(name)
	n.Spec.Subnets[1] = v2.SubnetSpec{SubnetPool: "pool6", PrefixLength: ptr.To[int32](64)}
	return n
}

// TestAV1WriteGetsNoSpecV2Refuses: the API server validates a v1 write
// against v1's schema only, where v1.SubnetsAnnotation is a string, and
// stores what it converts to as v2. So whatever the annotation adds must
// be what v2's own schema, CEL rules and transition rules (the stored
// Network as oldSelf) accept of a v2 writer, or the write is refused;
// the rules are the CRD's, compiled by apiextensions-apiserver, never a
// Go copy of them.
func TestAV1WriteGetsNoSpecV2Refuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored *v2.Network
		write  func(t *testing.T, read *v1.Network) *v1.Network
		// refused, if set, is a part of the Failure's message.
		refused string
	}{{
		name:   "read and written back as it is",
		stored: v2DualStack("n"),
		write:  func(_ *testing.T, read *v1.Network) *v1.Network { return read },
	}, {
		name:   "a DNS server of the second subnet changed: it may change",
		stored: v2DualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			return withRest(t, read, secondSubnet(func(s map[string]any) { s["dnsNameservers"] = []any{"fd00:10::54"} }))
		},
	}, {
		name: "a create that names a second subnet v2 accepts",
		write: func(t *testing.T, _ *v1.Network) *v1.Network {
			return withRest(t, v1Network("n"), func(rest map[string]any) {
				rest["subnets"] = []any{map[string]any{"cidr": "fd00:10::/64"}}
			})
		},
	}, {
		name:   "a gateway outside the second subnet's range",
		stored: v2DualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			return withRest(t, read, secondSubnet(func(s map[string]any) { s["gateway"] = "fd00:99::1" }))
		},
		refused: "spec.subnets[1]",
	}, {
		name:   "2,000 host routes",
		stored: v2DualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			routes := make([]any, 2000)
			for i := range routes {
				routes[i] = map[string]any{"destination": "fd00:20::/64", "nextHop": "fd00:10::fe"}
			}
			return withRest(t, read, secondSubnet(func(s map[string]any) { s["hostRoutes"] = routes }))
		},
		refused: "hostRoutes",
	}, {
		name:   "the second subnet's pool changed",
		stored: poolDualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			return withRest(t, read, secondSubnet(func(s map[string]any) { s["subnetPool"] = "pool7" }))
		},
		refused: "subnetPool and prefixLength are fixed at creation",
	}, {
		name:   "the second subnet's IPv6 modes changed",
		stored: v2DualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			return withRest(t, read, secondSubnet(func(s map[string]any) {
				s["ipv6AddressMode"], s["ipv6RAMode"] = "dhcpv6-stateful", "dhcpv6-stateful"
			}))
		},
		refused: "ipv6AddressMode and ipv6RAMode are immutable",
	}, {
		name:   "both a range and a pool",
		stored: v2DualStack("n"),
		write: func(t *testing.T, read *v1.Network) *v1.Network {
			return withRest(t, read, secondSubnet(func(s map[string]any) { s["subnetPool"] = "pool6" }))
		},
		refused: "spec.subnets[1]",
	}, {
		name: "neither a range nor a pool",
		write: func(t *testing.T, _ *v1.Network) *v1.Network {
			return withRest(t, v1Network("n"), func(rest map[string]any) {
				rest["subnets"] = []any{map[string]any{"gateway": "fd00:10::1"}}
			})
		},
		refused: "spec.subnets[1]",
	}, {
		name: "three subnets",
		write: func(t *testing.T, _ *v1.Network) *v1.Network {
			return withRest(t, v1Network("n"), func(rest map[string]any) {
				rest["subnets"] = []any{map[string]any{"cidr": "fd00:10::/64"}, map[string]any{"cidr": "fd00:20::/64"}}
			})
		},
		refused: "spec.subnets",
	}, {
		name: "a second IPv4 subnet",
		write: func(t *testing.T, _ *v1.Network) *v1.Network {
			return withRest(t, v1Network("n"), func(rest map[string]any) {
				rest["subnets"] = []any{map[string]any{"cidr": "10.1.0.0/24"}}
			})
		},
		refused: "at most one subnet per IP family",
	}, {
		name: "a range that overlaps spec.cidr",
		write: func(t *testing.T, _ *v1.Network) *v1.Network {
			return withRest(t, v1Network("n"), func(rest map[string]any) {
				rest["subnets"] = []any{map[string]any{"cidr": "10.0.0.0/16"}}
			})
		},
		refused: "subnets must not overlap",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var st *store
			var read *v1.Network
			if tc.stored != nil {
				st = newStore(t, tc.stored)
				read = asV1(t, tc.stored)
			} else {
				st = newStore(t)
			}
			resp := convertToV2(t, st, tc.write(t, read))
			switch {
			case tc.refused == "" && resp.Result.Status != "Success":
				t.Fatalf("refused: %s", resp.Result.Message)
			case tc.refused != "" && resp.Result.Status == "Success":
				t.Fatalf("converted to %s, which v2's schema refuses (%s)", resp.ConvertedObjects[0].Raw, tc.refused)
			case tc.refused != "" && (!strings.Contains(resp.Result.Message, tc.refused) || !strings.Contains(resp.Result.Message, v1.SubnetsAnnotation)):
				t.Fatalf("refused with %q, want a message naming %s and saying %q", resp.Result.Message, v1.SubnetsAnnotation, tc.refused)
			}
		})
	}
}

// TestAV1SpecWriteLeavesStatusAlone: the API server keeps the stored
// status from a write of spec, but v1.SubnetsAnnotation is metadata, which
// a writer of spec may change. What it says of status (the other
// subnets', the first's address counts, the adopted subnets but the
// first) is the stored Network's, whatever the writer put there; on a
// create, where there is no status to keep, it is nothing.
func TestAV1SpecWriteLeavesStatusAlone(t *testing.T) {
	stored := v2DualStack("n")
	stored.Status.Subnets[0].UsedIPs = ptr.To(resource.MustParse("3"))
	stored.Status.Adopted = &v2.AdoptedResources{NetworkID: "adopted", Subnets: []v2.AdoptedSubnet{{ID: "a4"}, {ID: "a6", Name: "kept"}}}
	forge := func(rest map[string]any) {
		rest["status"] = []any{map[string]any{"cidr": "fd00:10::/64", "id": "forged", "gateway": "fd00:10::99"}}
		rest["usedIPs"] = "999"
		rest["adoptedSubnets"] = []any{map[string]any{"id": "forged"}}
	}
	for _, tc := range []struct {
		name   string
		stored *v2.Network
		in     *v1.Network
		want   v2.NetworkStatus
	}{{
		name:   "an update: the stored status",
		stored: stored,
		in:     withRest(t, asV1(t, stored), forge),
		want:   stored.Status,
	}, {
		name: "a create: no status but v1's own",
		in: withRest(t, v1Network("n"), func(rest map[string]any) {
			forge(rest)
			rest["subnets"] = []any{map[string]any{"cidr": "fd00:10::/64"}}
		}),
		want: func() v2.NetworkStatus {
			n := &v2.Network{}
			if err := scheme.Scheme.Convert(v1Network("n"), n, nil); err != nil {
				t.Fatal(err)
			}
			return n.Status
		}(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var st *store
			if tc.stored != nil {
				st = newStore(t, tc.stored)
			} else {
				st = newStore(t)
			}
			resp := convertToV2(t, st, tc.in)
			if resp.Result.Status != "Success" {
				t.Fatalf("refused: %s", resp.Result.Message)
			}
			got := decode[v2.Network](t, resp.ConvertedObjects[0])
			if diff := cmp.Diff(tc.want, got.Status); diff != "" {
				t.Errorf("status (-stored +converted):\n%s", diff)
			}
		})
	}
}

// TestAWebhookThatReadsNoAPIServerRefusesTheAnnotation: without Stored,
// a v1 Network that carries what only v2 says cannot be checked, and is
// refused rather than converted unchecked; one without it converts.
func TestAWebhookThatReadsNoAPIServerRefusesTheAnnotation(t *testing.T) {
	if resp := convertToV2(t, nil, asV1(t, v2DualStack("n"))); resp.Result.Status == "Success" || !strings.Contains(resp.Result.Message, "reads no API server") {
		t.Errorf("a dual-stack Network through v1: %s %q, want a Failure saying why", resp.Result.Status, resp.Result.Message)
	}
	if resp := convertToV2(t, nil, v1Network("n")); resp.Result.Status != "Success" {
		t.Errorf("a one-subnet Network: %s", resp.Result.Message)
	}
}
