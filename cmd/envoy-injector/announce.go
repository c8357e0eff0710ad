package main

import (
	"encoding/json"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/samplecrd/network-controller/pkg/injector"
)

// announcer records why a Pod was or was not injected as an Event on what
// `kubectl describe` shows for it: the Pod's owner (its ReplicaSet, Job...),
// which exists while the Pod is being admitted, or the Pod itself when it
// has a name and no owner. A Pod injected again (a reinvocation) says
// nothing new, and is not announced.
type announcer struct{ recorder record.EventRecorder }

func (a announcer) announce(req *admissionv1.AdmissionRequest, d injector.Decision) {
	if d.Result == injector.ResultUnchanged || d.Reason == injector.ReasonNotRequested {
		return
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return
	}
	ref := regarding(&pod, req.Namespace)
	if ref == nil {
		return
	}
	eventType := corev1.EventTypeNormal
	if d.Result != injector.ResultInjected {
		eventType = corev1.EventTypeWarning
	}
	name := pod.Name
	if name == "" {
		name = pod.GenerateName + "…"
	}
	a.recorder.Eventf(ref, eventType, "Sidecar"+d.Reason, "Pod %s: %s", name, d.Message)
}

// regarding is the object an Event about pod goes on: its controller, or
// the Pod when it has a name; nil when neither is known yet.
func regarding(pod *corev1.Pod, namespace string) *corev1.ObjectReference {
	for _, o := range pod.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return &corev1.ObjectReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Namespace: namespace}
		}
	}
	if pod.Name != "" {
		return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, Namespace: namespace}
	}
	return nil
}
