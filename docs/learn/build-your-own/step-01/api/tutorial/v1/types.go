package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Greeting asks for a message to be published in a ConfigMap of the same
// namespace, named after the Greeting, under the key "message".
type Greeting struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the user wants published.
	Spec GreetingSpec `json:"spec"`
	// Status is what the controller last did.
	// +optional
	Status GreetingStatus `json:"status,omitempty"`
}

// GreetingSpec is the desired state of a Greeting.
type GreetingSpec struct {
	// Message is the text to publish.
	Message string `json:"message"`
}

// GreetingStatus is the observed state of a Greeting.
type GreetingStatus struct {
	// ObservedGeneration is the metadata.generation the conditions describe:
	// a reader knows whether they are about the spec it sees.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions holds Ready: True once the ConfigMap holds Spec.Message.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is the type of the condition that says whether the
// ConfigMap holds the message.
const ConditionReady = "Ready"

// Finalizer is the controller's finalizer: a Greeting keeps it until the
// controller has said farewell (step 6 of the chapter).
const Finalizer = "tutorial.samplecrd.k8s.io/farewell"

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// GreetingList is a list of Greetings, as a list call returns it.
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Greetings.
	Items []Greeting `json:"items"`
}
