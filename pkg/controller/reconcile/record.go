package reconcile

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// Record is what a pass writes to a Network's status before it changes
// anything in Neutron, and waits for the API server to store: the place
// its credentials reach, before a network is made or adopted there, and
// an adoption's names, before either resource is marked. A crash right
// after the Neutron write then leaves a resource whose place (and own
// names) status already holds.
type Record struct {
	// Place is the Network's place; zero on a Neutron without Keystone,
	// which has one place and records none.
	Place neutron.Place
	// Adopted is what spec.adopt's network and every subnet are called
	// before they are marked; nil until an adoption finds them.
	Adopted *samplecrdv2.AdoptedResources
}

// RecordWriter writes a Network's Record to its status, and returns once
// the API server has stored it (or an error: then nothing may be made).
type RecordWriter interface {
	WriteRecord(ctx context.Context, network *samplecrdv2.Network, rec Record) error
}

// RecordFieldManager is the field manager of the record in status: not the
// controller's status manager (network-controller), whose every apply names
// all the fields it owns, so that an apply of the record alone would drop
// the conditions and IDs. The controller's apply that ends the pass names
// the record too, so both own it.
const RecordFieldManager = "network-controller-record"

// ApplyRecord is the controller's RecordWriter: a server-side apply of
// status.place and status.adopted, synchronous, within the pass. The CRD
// refuses a place that changes one recorded, whoever writes it: a cache
// that had not caught up cannot record a second place.
type ApplyRecord struct{ Client clientset.Interface }

// WriteRecord implements RecordWriter.
func (a ApplyRecord) WriteRecord(ctx context.Context, network *samplecrdv2.Network, rec Record) error {
	if a.Client == nil {
		return errors.New("no client to write the record with")
	}
	status := applyv2.NetworkStatus()
	Observed{Place: rec.Place, Adopted: rec.Adopted}.Apply(status)
	if _, err := a.Client.SamplecrdV2().Networks(network.Namespace).ApplyStatus(ctx, applyv2.Network(network.Name, network.Namespace).WithStatus(status),
		metav1.ApplyOptions{FieldManager: RecordFieldManager, Force: true}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Recorded in status before writing to Neutron", "place", rec.Place, "adopting", rec.Adopted != nil)
	return nil
}
