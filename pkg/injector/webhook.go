package injector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	jsonpatch "gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/component/serving"
)

// TemplateSource returns the current template, or why there is none.
type TemplateSource func() (*Template, error)

// The results of an admission, as Webhook.Observe is told them.
const (
	// ResultInjected: the Pod was admitted with the sidecar.
	ResultInjected = "injected"
	// ResultUnchanged: the Pod asks, but has the sidecar already
	// (reinvocation, a copy of an injected Pod, or its own envoy).
	ResultUnchanged = "unchanged"
	// ResultSkipped: not a Pod that asks (or may have) the sidecar.
	ResultSkipped = "skipped"
	// ResultDenied: the Pod asks, and was refused with the reason.
	ResultDenied = "denied"
	// ResultOverloaded: the review was refused unread, with 503: too many
	// were under way (serving.LimitConcurrency).
	ResultOverloaded = "overloaded"
)

// Webhook serves AdmissionReview requests for Pod CREATE.
type Webhook struct {
	// Template is read on every request that needs it, so an edit of the
	// ConfigMap applies to the next Pod.
	Template TemplateSource
	// Observe, if set, is told the result, reason and duration of every
	// review: the program's metrics.
	Observe func(result, reason string, elapsed time.Duration)
}

// Nothing a review says reaches any object but through the answer, which
// the API server applies to the Pod it is admitting: the webhook cannot
// tell the API server's reviews from anyone else's (a Pod may reach it),
// so it writes nothing of its own (no Event, no object) that a forged
// review could aim at another namespace's objects, or spend. Why a Pod was
// injected is on it (StatusAnnotation); why one was refused, in the
// refusal its creator sees (and its controller's FailedCreate Event); and
// every decision, in the admissions metric and `envoy-injector check`.

// MaxRequestBytes bounds a request body: kube-apiserver's own limit on a
// request (--max-request-body-bytes' default, 3 MiB), which no Pod it
// sends on can exceed.
const MaxRequestBytes = 3 << 20

// ReviewCost is how many bytes answering a review of n bytes may hold at
// once besides its body: the review and its Pod decoded, the merged Pod,
// both as JSON and as generic values for the patch, and the answer. It is
// measured, not derived: a review of many small fields (environment
// variables, labels) holds up to about 28 times its size at its peak
// (TestReviewCostCoversWhatAReviewHolds holds it to that). The fixed 1 MiB
// is the measurement's spread on a loaded machine under -race, where the
// live heap counts what a slow collection could not yet free: a review of
// 46,900 bytes measured 1.3 MB quietly, once 1.79 MB, over 256 KiB's
// 1.76 MB. serving.LimitConcurrency reserves it from the memory budget
// before a review is answered, so a review of MaxRequestBytes needs 97 MiB
// of it (100 MiB with its body), and one the API server sends for a common
// Pod (10 KiB) about 1.3 MiB.
func ReviewCost(n int64) int64 { return 32*n + 1<<20 }

// ServeHTTP answers one AdmissionReview.
func (wh *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	logger := klog.FromContext(r.Context())
	body, ok := serving.ReadPost(w, r, MaxRequestBytes, "an AdmissionReview")
	if !ok {
		return
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	start := time.Now()
	response, d := wh.review(review.Request)
	if wh.Observe != nil {
		wh.Observe(d.Result, d.Reason, time.Since(start))
	}
	response.UID = review.Request.UID
	logger.V(2).Info("Admission", "namespace", review.Request.Namespace, "name", review.Request.Name,
		"result", d.Result, "reason", d.Reason)
	out, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: response})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// Review decides one admission request: allow other objects and Pods that
// do not ask untouched; for Pods that ask, allow with the JSON patch that
// turns the Pod into the merged one, or deny saying why.
func (wh *Webhook) Review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	response, _ := wh.review(req)
	return response
}

// Decide is what the webhook would decide for pod (raw is the Pod as
// written): what `envoy-injector check` prints. The patch of an injection
// is the second value.
func (wh *Webhook) Decide(raw []byte, pod *corev1.Pod) (Decision, []byte) {
	if wants, why := wantsWhy(pod); !wants {
		if why == ReasonHostNetwork {
			return decided(ResultSkipped, why, "the Pod asks for the sidecar, but runs on the node's network (hostNetwork), where the sidecar's ports would be the node's"), nil
		}
		return decided(ResultSkipped, why, "the Pod asks for no sidecar: neither the label %s=true nor the annotation %s=true", RequestLabel, RequestAnnotation), nil
	}
	tmpl, err := wh.Template()
	if err != nil {
		return decided(ResultDenied, ReasonNoTemplate, "envoy sidecar injection: the Pod asks for it but %v", err), nil
	}
	merged, why, err := injectJSON(raw, pod, tmpl)
	switch {
	case err != nil:
		return decided(ResultDenied, why, "envoy sidecar injection: %v", err), nil
	case merged == nil && why == ReasonHasSidecar:
		return decided(ResultUnchanged, why, "the Pod has the sidecar's containers of its own; nothing is added"), nil
	case merged == nil:
		return decided(ResultUnchanged, why, "the Pod was injected already (%s); nothing is added", StatusAnnotation), nil
	}
	patch, err := podPatch(raw, merged)
	if err != nil {
		return decided(ResultDenied, ReasonUnreadable, "envoy sidecar injection: %v", err), nil
	}
	return decided(ResultInjected, ReasonInjected, "the sidecar of template %s was merged in", tmpl.Hash), patch
}

func (wh *Webhook) review(req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, Decision) {
	if req.Kind.Kind != "Pod" || req.Operation != admissionv1.Create {
		return allowed(), decided(ResultSkipped, ReasonNotRequested, "not the creation of a Pod")
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		d := decided(ResultDenied, ReasonUnreadable, "envoy sidecar injection: cannot read the Pod: %v", err)
		return denied(d.Message), d
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace // for the template's .Namespace only
	}
	d, patch := wh.Decide(req.Object.Raw, pod)
	switch d.Result {
	case ResultDenied:
		return denied(d.Message), d
	case ResultInjected:
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt}, d
	}
	return allowed(), d
}

// podPatch is the JSON patch from the Pod as the API server sent it to
// merged. Both are the raw request and its merge, not re-encodings, so it
// holds the sidecar and nothing else, and applies to exactly what the API
// server holds.
func podPatch(original, merged []byte) ([]byte, error) {
	ops, err := jsonpatch.CreatePatch(original, merged)
	if err != nil {
		return nil, fmt.Errorf("computing the patch: %w", err)
	}
	return json.Marshal(ops)
}

func allowed() *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func denied(msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Message: msg, Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
	}}
}
