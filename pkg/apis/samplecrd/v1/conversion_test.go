package v1_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	v1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// roundTrips is how many random objects each direction of the property
// test converts.
const roundTrips = 5000

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, v2.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// filler makes random Networks of either version that the API server
// could hold: the fill funcs below keep to what the schemas and the
// controller guarantee, and nothing else.
func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			// An IPv6 /64 has more free addresses than an int64 holds.
			if c.Bool() {
				*q = resource.MustParse("18446744073709551614")
			} else {
				*q = *resource.NewQuantity(c.Int63n(1<<20), resource.DecimalSI)
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.FillNoCustom(m)
			// The reserved annotation is the conversion's, never a user's.
			delete(m.Annotations, v1.SubnetsAnnotation)
		},
		func(n *v1.Network, c randfill.Continue) {
			c.FillNoCustom(n)
			n.TypeMeta = typeMeta(c, v1.SchemeGroupVersion.String())
			// status.router.id is required, and the controller always knows it.
			if n.Status.Router != nil && n.Status.Router.ID == "" {
				n.Status.Router.ID = "router"
			}
		},
		func(n *v2.Network, c randfill.Continue) {
			c.FillNoCustom(n)
			n.TypeMeta = typeMeta(c, v2.SchemeGroupVersion.String())
			// 1..2 subnets with distinct ranges, at most one from a pool
			// (cidr "").
			n.Spec.Subnets = n.Spec.Subnets[:min(len(n.Spec.Subnets), 2)]
			if len(n.Spec.Subnets) == 0 {
				n.Spec.Subnets = []v2.SubnetSpec{{}}
				c.Fill(&n.Spec.Subnets[0])
			}
			for i := range n.Spec.Subnets {
				n.Spec.Subnets[i].CIDR = fmt.Sprintf("%s/%d", n.Spec.Subnets[i].CIDR, i)
			}
			if c.Intn(4) == 0 {
				n.Spec.Subnets[c.Intn(len(n.Spec.Subnets))].CIDR = ""
			}
			// status.subnets: keyed by a range Neutron always reports, often
			// one of the spec's, in any order.
			seen := map[string]bool{}
			var statuses []v2.SubnetStatus
			for i, s := range n.Status.Subnets {
				switch pick := c.Intn(3); {
				case pick < 2 && pick < len(n.Spec.Subnets) && n.Spec.Subnets[pick].CIDR != "":
					s.CIDR = n.Spec.Subnets[pick].CIDR
				default:
					s.CIDR = fmt.Sprintf("%s/s%d", s.CIDR, i)
				}
				if seen[s.CIDR] {
					continue
				}
				seen[s.CIDR] = true
				if s.RouterInterface != nil && s.RouterInterface.PortID == "" {
					s.RouterInterface.PortID = "port"
				}
				statuses = append(statuses, s)
			}
			n.Status.Subnets = statuses
			// An interface is on status.router, which has an ID.
			hasInterface := false
			for _, s := range n.Status.Subnets {
				hasInterface = hasInterface || s.RouterInterface != nil
			}
			if hasInterface && n.Status.Router == nil {
				n.Status.Router = &v2.RouterStatus{}
			}
			if n.Status.Router != nil && n.Status.Router.ID == "" {
				n.Status.Router.ID = "router"
			}
			// status.adopted.subnets: at least one, keyed by ID.
			if a := n.Status.Adopted; a != nil {
				if len(a.Subnets) == 0 {
					a.Subnets = []v2.AdoptedSubnet{{}}
				}
				for i := range a.Subnets {
					a.Subnets[i].ID = fmt.Sprintf("%s-%d", a.Subnets[i].ID, i)
				}
			}
		},
	)
}

// typeMeta is either none, as a typed client's objects have, or the
// version's own.
func typeMeta(c randfill.Continue, apiVersion string) metav1.TypeMeta {
	if c.Bool() {
		return metav1.TypeMeta{}
	}
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: "Network"}
}

// TestRoundTripV1ThroughV2: every v1 Network survives the hub unchanged.
func TestRoundTripV1ThroughV2(t *testing.T) {
	scheme := newScheme(t)
	f := filler(1)
	for i := range roundTrips {
		in := &v1.Network{}
		f.Fill(in)
		hub, back := &v2.Network{}, &v1.Network{}
		if err := scheme.Convert(in.DeepCopy(), hub, nil); err != nil {
			t.Fatalf("object %d: v1 -> v2: %v", i, err)
		}
		if err := scheme.Convert(hub.DeepCopy(), back, nil); err != nil {
			t.Fatalf("object %d: v2 -> v1: %v", i, err)
		}
		if !apiequality.Semantic.DeepEqual(in, back) {
			t.Fatalf("object %d: v1 -> v2 -> v1 changed it (-in +back):\n%s", i, cmp.Diff(in, back))
		}
	}
}

// TestRoundTripV2ThroughV1: every v2 Network survives v1 unchanged, its
// second subnet and the status v1 has no field for included.
func TestRoundTripV2ThroughV1(t *testing.T) {
	scheme := newScheme(t)
	f := filler(2)
	twoSubnets := 0
	for i := range roundTrips {
		in := &v2.Network{}
		f.Fill(in)
		if len(in.Spec.Subnets) == 2 {
			twoSubnets++
		}
		spoke, back := &v1.Network{}, &v2.Network{}
		if err := scheme.Convert(in.DeepCopy(), spoke, nil); err != nil {
			t.Fatalf("object %d: v2 -> v1: %v", i, err)
		}
		if err := scheme.Convert(spoke.DeepCopy(), back, nil); err != nil {
			t.Fatalf("object %d: v1 -> v2: %v", i, err)
		}
		if !apiequality.Semantic.DeepEqual(in, back) {
			t.Fatalf("object %d: v2 -> v1 -> v2 changed it (-in +back):\n%s", i, cmp.Diff(in, back))
		}
	}
	// The generator must reach the case the annotation exists for.
	if twoSubnets < roundTrips/10 {
		t.Errorf("only %d of %d objects had two subnets", twoSubnets, roundTrips)
	}
}

// TestRoundTripLists: lists convert item by item, both ways.
func TestRoundTripLists(t *testing.T) {
	scheme := newScheme(t)
	f := filler(3)
	in := &v2.NetworkList{Items: make([]v2.Network, 20)}
	for i := range in.Items {
		f.Fill(&in.Items[i])
	}
	spoke, back := &v1.NetworkList{}, &v2.NetworkList{}
	if err := scheme.Convert(in.DeepCopy(), spoke, nil); err != nil {
		t.Fatal(err)
	}
	if err := scheme.Convert(spoke, back, nil); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(in, back) {
		t.Fatalf("v2 -> v1 -> v2 changed the list (-in +back):\n%s", cmp.Diff(in, back))
	}
}

func dualStack() *v2.Network {
	return &v2.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "ns", Annotations: map[string]string{"team": "a"}},
		Spec: v2.NetworkSpec{Subnets: []v2.SubnetSpec{
			{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"},
			{CIDR: "fd00:10::/64", IPv6AddressMode: v2.IPv6ModeSLAAC, IPv6RAMode: v2.IPv6ModeSLAAC},
		}},
		Status: v2.NetworkStatus{NetworkID: "net", Subnets: []v2.SubnetStatus{
			{CIDR: "fd00:10::/64", ID: "sub6"},
			{CIDR: "10.0.0.0/24", ID: "sub4", Gateway: "10.0.0.1"},
		}},
	}
}

// TestV2ToV1 says what a v1 client sees of a v2 Network.
func TestV2ToV1(t *testing.T) {
	oneSubnet := dualStack()
	oneSubnet.Spec.Subnets = oneSubnet.Spec.Subnets[:1]
	oneSubnet.Status.Subnets = oneSubnet.Status.Subnets[1:]
	pool := dualStack()
	pool.Spec.Subnets[0] = v2.SubnetSpec{SubnetPool: "pool4"}
	pool.Status.Subnets = []v2.SubnetStatus{{CIDR: "fd00:10::/64", ID: "sub6"}, {CIDR: "10.9.0.0/24", ID: "sub4"}}
	notYet := dualStack()
	notYet.Status.Subnets = notYet.Status.Subnets[:1]
	for _, tc := range []struct {
		name           string
		in             *v2.Network
		wantSpecCIDR   string
		wantSubnetID   string
		wantAnnotation bool
	}{
		{"one subnet: a plain v1 Network, without the annotation", oneSubnet, "10.0.0.0/24", "sub4", false},
		{"two subnets: the first is v1's, its status found by range", dualStack(), "10.0.0.0/24", "sub4", true},
		{"a pool subnet first: its status is the one no other spec subnet claims", pool, "", "sub4", true},
		{"the first subnet not yet in Neutron: v1 shows no subnet status", notYet, "10.0.0.0/24", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &v1.Network{}
			if err := newScheme(t).Convert(tc.in.DeepCopy(), out, nil); err != nil {
				t.Fatal(err)
			}
			if out.Spec.CIDR != tc.wantSpecCIDR || out.Status.SubnetID != tc.wantSubnetID {
				t.Errorf("spec.cidr %q, status.subnetID %q; want %q, %q", out.Spec.CIDR, out.Status.SubnetID, tc.wantSpecCIDR, tc.wantSubnetID)
			}
			if _, ok := out.Annotations[v1.SubnetsAnnotation]; ok != tc.wantAnnotation {
				t.Errorf("annotation %s present: %v, want %v (annotations %v)", v1.SubnetsAnnotation, ok, tc.wantAnnotation, out.Annotations)
			}
			if out.Annotations["team"] != "a" {
				t.Errorf("the user's annotations were lost: %v", out.Annotations)
			}
		})
	}
}

// TestV1ToV2RefusesABadAnnotation: the reserved annotation is read as the
// rest of the Network or refused, never ignored and never a panic.
func TestV1ToV2RefusesABadAnnotation(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"not JSON", "{", "does not parse"},
		{"JSON of another shape", `["10.1.0.0/24"]`, "does not parse"},
		{"a field of the wrong type", `{"subnets": "fd00::/64"}`, "does not parse"},
		{"the first subnet again", `{"subnets": [{"cidr": "10.0.0.0/24"}]}`, "is spec.cidr already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &v1.Network{
				ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "ns", Annotations: map[string]string{v1.SubnetsAnnotation: tc.value}},
				Spec:       v1.NetworkSpec{CIDR: "10.0.0.0/24"},
			}
			err := newScheme(t).Convert(in, &v2.Network{}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), v1.SubnetsAnnotation) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, v1.SubnetsAnnotation, tc.want)
			}
		})
	}
}

// TestV1ClientThatDropsTheAnnotation documents what it costs: the v2
// Network loses its second subnet, which the controller then deletes.
func TestV1ClientThatDropsTheAnnotation(t *testing.T) {
	scheme := newScheme(t)
	spoke := &v1.Network{}
	if err := scheme.Convert(dualStack(), spoke, nil); err != nil {
		t.Fatal(err)
	}
	delete(spoke.Annotations, v1.SubnetsAnnotation)
	back := &v2.Network{}
	if err := scheme.Convert(spoke, back, nil); err != nil {
		t.Fatal(err)
	}
	if got := len(back.Spec.Subnets); got != 1 || back.Spec.Subnets[0].CIDR != "10.0.0.0/24" {
		t.Errorf("spec.subnets %v, want only 10.0.0.0/24", back.Spec.Subnets)
	}
}

// TestV1ToV2RefusesAnAnnotationItCannotRead: the annotation is the
// conversion's, and what it does not know is an error, not a subnet
// quietly lost; a subnet named twice is not two. Whether what it adds is a
// v2 Network the API server would accept is v2's schema's to say, which
// the conversion webhook applies (pkg/controller/conversion's
// TestAV1WriteGetsNoSpecV2Refuses).
func TestV1ToV2RefusesAnAnnotationItCannotRead(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"spec.cidr again", `{"subnets": [{"cidr": "10.0.0.0/24"}]}`, "spec.cidr already"},
		{"a misspelt field", `{"subnet": [{"cidr": "fd00::/64"}]}`, "does not parse"},
		{"a misspelt field of a subnet", `{"subnets": [{"cidr": "fd00::/64", "gatway": "fd00::1"}]}`, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &v1.Network{
				ObjectMeta: metav1.ObjectMeta{Name: "n", Namespace: "ns", Annotations: map[string]string{v1.SubnetsAnnotation: tc.value}},
				Spec:       v1.NetworkSpec{CIDR: "10.0.0.0/24"},
			}
			err := newScheme(t).Convert(in, &v2.Network{}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), v1.SubnetsAnnotation) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, v1.SubnetsAnnotation, tc.want)
			}
		})
	}
}
