// Package conversion is the Network CRD's conversion webhook: the API
// server stores Networks as samplecrd.k8s.io/v2 and serves them as v1 too,
// and asks this webhook (POST /convert, an apiextensions.k8s.io/v1
// ConversionReview) to turn each object from the version it has into the
// version a client asked for. The conversion itself is the scheme's: the
// functions pkg/apis/samplecrd/v1/conversion.go registers, which the
// round-trip property test exercises, so the webhook and the tests convert
// by one path.
//
// Every replica of the controller serves it, leader or not (main.go's run
// starts it before leader election): while the CRD's conversion is a
// webhook, every read and write of a Network in a version other than the
// stored one goes through it. The controller itself reads and writes v2,
// the stored version, and needs no conversion; v1 clients (kubectl with
// networks.v1…, older tools) do, whoever leads.
package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/apis/samplecrd"
	v1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/serving"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
)

// Path is where the webhook is served, and what the CRD's
// spec.conversion.webhook.clientConfig names.
const Path = "/convert"

// MaxRequestBytes bounds a review's body. The API server's converter
// takes a list in one review (all its objects that are not in the asked
// version), about 4,400 Networks of 1.9 KiB in 8 MiB. Lists rarely reach
// it: the API server keeps a watch cache for each served version, filled
// object by object (one review each), and serves a v1 list from it with
// no review at all (10,000 Networks in one page: docs/operations.md). No
// single Network comes near it: kube-apiserver refuses requests over
// 3 MiB.
const MaxRequestBytes = 8 << 20

// ReviewCost is how many bytes converting a review of n bytes may hold at
// once besides its body: the review decoded, each object decoded,
// converted and encoded, and the answer encoded.
// TestReviewCostCoversWhatAReviewAllocates holds it above everything a
// review allocates (up to 28 times its size, for Networks of many small
// labels), which is more than it holds at once: a review of
// MaxRequestBytes needs about 256 MiB of the budget, one of a single
// Network about 300 KiB.
func ReviewCost(n int64) int64 { return 32*n + 256<<10 }

// Webhook answers ConversionReviews of samplecrd.k8s.io Networks with the
// conversions of scheme, the generated clientset's scheme (v1 and v2 and
// the conversions between them); a v1 Network that carries what only v2
// can say is also checked against v2's schema (fromV1), with Stored.
type Webhook struct {
	// Stored is read to check a v1 Network that carries
	// v1.SubnetsAnnotation; nil refuses such a Network.
	Stored Stored
}

// gvkOnly is what is read of an object before it is decoded: its
// apiVersion and kind.
type gvkOnly struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Namespace string `json:"namespace,omitempty"`
		Name      string `json:"name,omitempty"`
	} `json:"metadata"`
}

// ServeHTTP answers one ConversionReview: 405 for anything but a POST,
// 400 for a body that is not an apiextensions.k8s.io/v1 ConversionReview
// with a request, and otherwise 200 with a review whose result says
// Success, with every object converted, or Failure and why.
func (wh Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := serving.ReadPost(w, r, MaxRequestBytes, "a ConversionReview")
	if !ok {
		return
	}
	review := &apiextensionsv1.ConversionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	if gv := apiextensionsv1.SchemeGroupVersion.String(); review.APIVersion != gv || review.Kind != "ConversionReview" || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a %s ConversionReview with a request: apiVersion %q, kind %q", gv, review.APIVersion, review.Kind), http.StatusBadRequest)
		return
	}
	response := wh.Review(r.Context(), review.Request)
	if response.Result.Status != metav1.StatusSuccess {
		klog.FromContext(r.Context()).V(2).Info("Conversion failed", "uid", review.Request.UID,
			"desiredAPIVersion", review.Request.DesiredAPIVersion, "message", response.Result.Message)
	}
	out, err := json.Marshal(&apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Response: response})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// Review converts every object of req to req.DesiredAPIVersion, all or
// none: the first object that cannot be converted fails the review, with
// a message that quotes whatever of it comes from the request.
func (wh Webhook) Review(ctx context.Context, req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	response := &apiextensionsv1.ConversionResponse{UID: req.UID}
	converted, err := wh.convertAll(ctx, req)
	if err != nil {
		response.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
		return response
	}
	response.ConvertedObjects = converted
	response.Result = metav1.Status{Status: metav1.StatusSuccess}
	return response
}

func (wh Webhook) convertAll(ctx context.Context, req *apiextensionsv1.ConversionRequest) ([]runtime.RawExtension, error) {
	to, err := schema.ParseGroupVersion(req.DesiredAPIVersion)
	if err != nil || to.Group != samplecrd.GroupName {
		return nil, fmt.Errorf("desiredAPIVersion %s: this webhook converts %s Networks only", strconv.Quote(req.DesiredAPIVersion), samplecrd.GroupName)
	}
	converted := make([]runtime.RawExtension, len(req.Objects))
	for i, raw := range req.Objects {
		out, err := wh.convert(ctx, raw.Raw, to)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		converted[i] = runtime.RawExtension{Raw: out}
	}
	return converted, nil
}

// convert decodes one object with the scheme and converts it to the kind
// of the same name in to, returning it as JSON.
func (wh Webhook) convert(ctx context.Context, raw []byte, to schema.GroupVersion) ([]byte, error) {
	var head gvkOnly
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("not a JSON object: %s", strconv.Quote(err.Error()))
	}
	from := head.GroupVersionKind()
	what := fmt.Sprintf("%s %s %s", strconv.Quote(head.APIVersion), strconv.Quote(head.Kind), strconv.Quote(head.Metadata.Namespace+"/"+head.Metadata.Name))
	target := to.WithKind(from.Kind)
	if from.Group != samplecrd.GroupName || !scheme.Scheme.Recognizes(from) || !scheme.Scheme.Recognizes(target) {
		return nil, fmt.Errorf("%s to %s: not a kind and version this webhook converts (%s Network in v1 or v2)",
			what, strconv.Quote(to.String()), samplecrd.GroupName)
	}
	in, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, &from, nil)
	if err != nil {
		return nil, fmt.Errorf("%s does not decode: %s", what, strconv.Quote(err.Error()))
	}
	out := in
	if n, ok := in.(*v1.Network); ok && target == v2.SchemeGroupVersion.WithKind("Network") && v1.CarriesRest(n) {
		if out, err = fromV1(ctx, wh.Stored, n); err != nil {
			return nil, fmt.Errorf("%s to %s: %s", what, strconv.Quote(to.String()), strconv.Quote(err.Error()))
		}
	} else if from != target {
		if out, err = scheme.Scheme.New(target); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if err := scheme.Scheme.Convert(in, out, nil); err != nil {
			return nil, fmt.Errorf("%s to %s: %s", what, strconv.Quote(to.String()), strconv.Quote(err.Error()))
		}
	}
	out.GetObjectKind().SetGroupVersionKind(target)
	return json.Marshal(out)
}
