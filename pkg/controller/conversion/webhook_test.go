package conversion_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
)

const uid = types.UID("0f4a8a9e-review")

// v1Network is a Ready v1 Network with one IPv4 subnet.
func v1Network(name string) *v1.Network {
	return &v1.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: "samplecrd.k8s.io/v1", Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: "uid-" + types.UID(name), Labels: map[string]string{"app": name}},
		Spec: v1.NetworkSpec{
			CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", DNSNameservers: []string{"10.0.0.53"},
			HostRoutes:     []v1.HostRoute{{Destination: "10.1.0.0/16", NextHop: "10.0.0.254"}},
			EnableDHCP:     ptr.To(true),
			MTU:            ptr.To[int32](1450),
			DeletionPolicy: v1.DeletionPolicy("Delete"),
		},
		Status: v1.NetworkStatus{ObservedGeneration: 3, NetworkID: "net-" + name, SubnetID: "sub-" + name, CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", MTU: 1450},
	}
}

// v2DualStack is a v2 Network with an IPv4 and an IPv6 subnet, both in
// Neutron.
func v2DualStack(name string) *v2.Network {
	return &v2.Network{
		TypeMeta:   metav1.TypeMeta{APIVersion: "samplecrd.k8s.io/v2", Kind: "Network"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: "uid-" + types.UID(name), Annotations: map[string]string{"note": "kept"}},
		Spec: v2.NetworkSpec{
			Subnets: []v2.SubnetSpec{
				{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"},
				{CIDR: "fd00:10::/64", IPv6AddressMode: "slaac", IPv6RAMode: "slaac", DNSNameservers: []string{"fd00:10::53"}},
			},
			MTU: ptr.To[int32](1450),
		},
		Status: v2.NetworkStatus{ObservedGeneration: 2, NetworkID: "net-" + name, Subnets: []v2.SubnetStatus{
			{CIDR: "10.0.0.0/24", ID: "sub4-" + name, Gateway: "10.0.0.1"},
			{CIDR: "fd00:10::/64", ID: "sub6-" + name, Gateway: "fd00:10::1"},
		}},
	}
}

func raw(t *testing.T, obj any) runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: b}
}

// reviewBody is a ConversionReview as the API server sends it.
func reviewBody(t *testing.T, desired string, objects ...runtime.RawExtension) []byte {
	t.Helper()
	b, err := json.Marshal(&apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: desired, Objects: objects},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to the webhook as the API server does, behind its
// limits, and returns the status code and the review it answers. The API
// server it reads holds v2DualStack "a" and "b", which the tests read
// through v1 and write back.
func post(t *testing.T, method string, body []byte) (int, *apiextensionsv1.ConversionReview, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, conversion.Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	conversion.Handler(newStore(t, v2DualStack("a"), v2DualStack("b"))).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec.Code, nil, rec.Body.String()
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil {
		t.Fatalf("the answer is not a ConversionReview: %v\n%s", err, rec.Body)
	}
	if review.APIVersion != "apiextensions.k8s.io/v1" || review.Kind != "ConversionReview" || review.Response == nil {
		t.Fatalf("the answer is not an apiextensions.k8s.io/v1 ConversionReview with a response: %s", rec.Body)
	}
	return rec.Code, review, rec.Body.String()
}

func decode[T any](t *testing.T, r runtime.RawExtension) *T {
	t.Helper()
	out := new(T)
	if err := json.Unmarshal(r.Raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConversionReviews: the webhook converts every object of a review to
// the desired version with the scheme's conversions, echoes the review's
// UID, and answers Failure, saying why, for what it does not convert.
func TestConversionReviews(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired string
		objects []runtime.RawExtension
		// check the converted objects of a Success.
		check func(t *testing.T, out []runtime.RawExtension)
		// failure, if set, is a Failure whose message holds each part.
		failure []string
	}{{
		name:    "v1 to v2, several objects: each one subnet",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{raw(t, v1Network("a")), raw(t, v1Network("b"))},
		check: func(t *testing.T, out []runtime.RawExtension) {
			for i, name := range []string{"a", "b"} {
				got := decode[v2.Network](t, out[i])
				want := &v2.Network{
					TypeMeta:   metav1.TypeMeta{APIVersion: "samplecrd.k8s.io/v2", Kind: "Network"},
					ObjectMeta: v1Network(name).ObjectMeta,
					Spec: v2.NetworkSpec{
						Subnets: []v2.SubnetSpec{{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1", DNSNameservers: []string{"10.0.0.53"},
							HostRoutes: []v2.HostRoute{{Destination: "10.1.0.0/16", NextHop: "10.0.0.254"}}, EnableDHCP: ptr.To(true)}},
						MTU: ptr.To[int32](1450), DeletionPolicy: "Delete",
					},
					Status: v2.NetworkStatus{ObservedGeneration: 3, NetworkID: "net-" + name, MTU: 1450,
						Subnets: []v2.SubnetStatus{{CIDR: "10.0.0.0/24", ID: "sub-" + name, Gateway: "10.0.0.1"}}},
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("object %d (-want +got):\n%s", i, d)
				}
			}
		},
	}, {
		name:    "v2 to v1, several objects: the second subnet in the annotation, and back without loss",
		desired: "samplecrd.k8s.io/v1",
		objects: []runtime.RawExtension{raw(t, v2DualStack("a")), raw(t, v2DualStack("b"))},
		check: func(t *testing.T, out []runtime.RawExtension) {
			for i, name := range []string{"a", "b"} {
				got := decode[v1.Network](t, out[i])
				if got.APIVersion != "samplecrd.k8s.io/v1" || got.Spec.CIDR != "10.0.0.0/24" || got.Status.SubnetID != "sub4-"+name ||
					got.Annotations["note"] != "kept" || got.Annotations[v1.SubnetsAnnotation] == "" {
					t.Errorf("object %d: not the v1 form of the first subnet with the rest in %s: %+v", i, v1.SubnetsAnnotation, got)
				}
			}
			// The API server writes the v1 form back as v2 through the
			// webhook again: nothing of the dual-stack object is lost.
			code, back, body := post(t, http.MethodPost, reviewBody(t, "samplecrd.k8s.io/v2", out...))
			if code != http.StatusOK || back.Response.Result.Status != metav1.StatusSuccess {
				t.Fatalf("converting back: %d %s", code, body)
			}
			for i, name := range []string{"a", "b"} {
				if d := cmp.Diff(v2DualStack(name), decode[v2.Network](t, back.Response.ConvertedObjects[i])); d != "" {
					t.Errorf("object %d after v2 -> v1 -> v2 (-want +got):\n%s", i, d)
				}
			}
		},
	}, {
		name:    "a review of both versions to v2: the v2 object as it is",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{raw(t, v1Network("a")), raw(t, v2DualStack("b"))},
		check: func(t *testing.T, out []runtime.RawExtension) {
			if got := decode[v2.Network](t, out[0]); len(got.Spec.Subnets) != 1 || got.APIVersion != "samplecrd.k8s.io/v2" {
				t.Errorf("object 0: %+v", got)
			}
			if d := cmp.Diff(v2DualStack("b"), decode[v2.Network](t, out[1])); d != "" {
				t.Errorf("object 1 (-want +got):\n%s", d)
			}
		},
	}, {
		name:    "an empty review: nothing to convert",
		desired: "samplecrd.k8s.io/v1",
		check: func(t *testing.T, out []runtime.RawExtension) {
			if len(out) != 0 {
				t.Errorf("converted %d objects of none", len(out))
			}
		},
	}, {
		name:    "an object of an unknown version",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{raw(t, v1Network("a")), {Raw: []byte(`{"apiVersion":"samplecrd.k8s.io/v3","kind":"Network","metadata":{"namespace":"team-a","name":"c"}}`)}},
		failure: []string{"object 1", `"samplecrd.k8s.io/v3"`, `"team-a/c"`, "not a kind and version this webhook converts"},
	}, {
		name:    "an unknown desired version",
		desired: "samplecrd.k8s.io/v9",
		objects: []runtime.RawExtension{raw(t, v1Network("a"))},
		failure: []string{"object 0", `to "samplecrd.k8s.io/v9"`, "not a kind and version this webhook converts"},
	}, {
		name:    "a desired version of another group",
		desired: "apps/v1",
		objects: []runtime.RawExtension{raw(t, v1Network("a"))},
		failure: []string{`desiredAPIVersion "apps/v1"`, "converts samplecrd.k8s.io Networks only"},
	}, {
		name:    "an object of another group",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"team-a","name":"web"}}`)}},
		failure: []string{"object 0", `"apps/v1" "Deployment"`, "not a kind and version this webhook converts"},
	}, {
		name:    "a kind of the group that has no v2",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"samplecrd.k8s.io/v1","kind":"TenantPolicy","metadata":{"name":"p"}}`)}},
		failure: []string{"object 0", `"TenantPolicy"`, "not a kind and version this webhook converts"},
	}, {
		name:    "an object that is not JSON",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{{Raw: []byte(`"a string"`)}},
		failure: []string{"object 0", "not a JSON object"},
	}, {
		name:    "a reserved annotation that does not parse: the conversion's own error",
		desired: "samplecrd.k8s.io/v2",
		objects: []runtime.RawExtension{func() runtime.RawExtension {
			n := v1Network("a")
			n.Annotations = map[string]string{v1.SubnetsAnnotation: "{not json"}
			return raw(t, n)
		}()},
		failure: []string{"object 0", `to "samplecrd.k8s.io/v2"`, "does not parse"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			code, review, body := post(t, http.MethodPost, reviewBody(t, tc.desired, tc.objects...))
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			resp := review.Response
			if resp.UID != uid {
				t.Errorf("uid %q, want the request's %q", resp.UID, uid)
			}
			if tc.failure != nil {
				if resp.Result.Status != metav1.StatusFailure || resp.ConvertedObjects != nil {
					t.Fatalf("want a Failure without objects, got %s", body)
				}
				for _, part := range tc.failure {
					if !strings.Contains(resp.Result.Message, part) {
						t.Errorf("message %q does not say %q", resp.Result.Message, part)
					}
				}
				return
			}
			if resp.Result.Status != metav1.StatusSuccess {
				t.Fatalf("want Success, got %s", body)
			}
			if len(resp.ConvertedObjects) != len(tc.objects) {
				t.Fatalf("%d objects converted of %d", len(resp.ConvertedObjects), len(tc.objects))
			}
			tc.check(t, resp.ConvertedObjects)
		})
	}
}

// TestAFailureQuotesWhatTheRequestSays: what a request holds reaches the
// message (which the API server returns to a client, and logs) quoted, so
// a name or version cannot forge lines or terminal escapes.
func TestAFailureQuotesWhatTheRequestSays(t *testing.T) {
	hostile := "x\n\x1b[31mE1126 forged log line"
	for _, tc := range []struct {
		name    string
		desired string
		object  string
	}{
		{"in the desired version", "samplecrd.k8s.io/" + hostile, `{"apiVersion":"samplecrd.k8s.io/v1","kind":"Network","metadata":{"name":"a"}}`},
		{"in the desired group", hostile + "/v1", `{"apiVersion":"samplecrd.k8s.io/v1","kind":"Network","metadata":{"name":"a"}}`},
		{"in an object's name", "samplecrd.k8s.io/v2", `{"apiVersion":"samplecrd.k8s.io/v3","kind":"Network","metadata":{"name":` + strQuoteJSON(hostile) + `}}`},
		{"in an object's kind", "samplecrd.k8s.io/v2", `{"apiVersion":"samplecrd.k8s.io/v1","kind":` + strQuoteJSON(hostile) + `}`},
		{"in an object's field", "samplecrd.k8s.io/v2", `{"apiVersion":"samplecrd.k8s.io/v1","kind":"Network","spec":{"cidr":` + strQuoteJSON(hostile) + `,"mtu":"` + hostile[:1] + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, review, body := post(t, http.MethodPost, reviewBody(t, tc.desired, runtime.RawExtension{Raw: []byte(tc.object)}))
			if review == nil || review.Response.Result.Status != metav1.StatusFailure {
				t.Fatalf("want a Failure, got %s", body)
			}
			if msg := review.Response.Result.Message; strings.ContainsAny(msg, "\n\x1b") {
				t.Errorf("the message holds the request's text unescaped: %q", msg)
			}
		})
	}
}

func strQuoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRequestsThatAreNotReviews: what is not a POSTed
// apiextensions.k8s.io/v1 ConversionReview with a request is refused with
// an HTTP error, not answered with a review.
func TestRequestsThatAreNotReviews(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		body   string
		want   int
	}{
		{"a malformed body", http.MethodPost, `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": {`, http.StatusBadRequest},
		{"a review without a request", http.MethodPost, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, http.StatusBadRequest},
		{"a v1beta1 review", http.MethodPost, `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"samplecrd.k8s.io/v1"}}`, http.StatusBadRequest},
		{"an AdmissionReview", http.MethodPost, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}`, http.StatusBadRequest},
		{"a GET", http.MethodGet, "", http.StatusMethodNotAllowed},
		{"a body over the limit", http.MethodPost, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"` +
			strings.Repeat("u", conversion.MaxRequestBytes) + `"}}`, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _, body := post(t, tc.method, []byte(tc.body)); code != tc.want {
				t.Errorf("status %d, want %d: %s", code, tc.want, body)
			}
		})
	}
}
