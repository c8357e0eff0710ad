package injector

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Why a Pod was or was not injected: the "reason" of a Decision, of the
// admissions metric's label, and of the Events on the Pod's owner.
const (
	// ReasonInjected: the sidecar was merged in.
	ReasonInjected = "Injected"
	// ReasonNotRequested: the Pod asks neither by label nor by annotation.
	ReasonNotRequested = "NotRequested"
	// ReasonHostNetwork: the Pod asks, but runs on the node's network,
	// where the sidecar's ports would be the node's.
	ReasonHostNetwork = "HostNetwork"
	// ReasonAlreadyInjected: the status annotation and the containers it
	// names are there (a reinvocation, a copy of an injected Pod).
	ReasonAlreadyInjected = "AlreadyInjected"
	// ReasonHasSidecar: the Pod has the sidecar's containers of its own.
	ReasonHasSidecar = "HasSidecar"
	// ReasonNoTemplate: the ConfigMap is missing, unread or invalid.
	ReasonNoTemplate = "NoTemplate"
	// ReasonTemplateFailed: the template does not render for this Pod.
	ReasonTemplateFailed = "TemplateFailed"
	// ReasonOverrideRefused: a per-Pod annotation asks for what is not
	// allowed.
	ReasonOverrideRefused = "OverrideRefused"
	// ReasonClash: the Pod has a container or volume of the sidecar's name
	// with other content.
	ReasonClash = "Clash"
	// ReasonMergeFailed: the strategic-merge patch of the sidecar into
	// the Pod failed; nothing was injected.
	ReasonMergeFailed = "MergeFailed"
	// ReasonUnreadable: the request is not a Pod that can be read.
	ReasonUnreadable = "Unreadable"
	// ReasonOverloaded: the review was refused unread (ResultOverloaded).
	ReasonOverloaded = "Overloaded"
)

// Decision is what the webhook decides for one Pod, and why: Result is
// one of the Result* values, Reason one of the Reason* values, Message
// what a person reads.
type Decision struct {
	Result, Reason, Message string
}

// decided builds a Decision.
func decided(result, reason, format string, args ...any) Decision {
	return Decision{Result: result, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// refusal is an error that knows its Reason.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

func refused(reason string, err error) error { return &refusal{reason: reason, err: err} }

// wantsWhy is Wants with its reason.
func wantsWhy(pod *corev1.Pod) (bool, string) {
	switch {
	case pod.Labels[RequestLabel] != "true" && pod.Annotations[RequestAnnotation] != "true":
		return false, ReasonNotRequested
	case pod.Spec.HostNetwork:
		return false, ReasonHostNetwork
	}
	return true, ""
}
