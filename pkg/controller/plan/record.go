package plan

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// Unwritten is the reconcile.RecordWriter of a plan's reconcilers: the
// record the controller stores in status before it makes or marks
// anything (a Network's place, an adoption's names) is not sent, and is
// answered as stored, so that the sync goes on as the controller's would;
// the status the controller then applies to the plan's Cluster carries it.
// Without it the plan's API server client (ReadOnly) would refuse the
// write, and the plan would stop there.
type Unwritten struct{}

// WriteRecord implements reconcile.RecordWriter: it writes nothing.
func (Unwritten) WriteRecord(context.Context, *samplecrdv2.Network, reconcile.Record) error {
	return nil
}

// Unrecorded is the record.EventRecorder of a plan's controller: an Event
// is a write to the API server, and a plan reports in its Result instead.
type Unrecorded struct{}

// Event records nothing.
func (Unrecorded) Event(runtime.Object, string, string, string) {}

// Eventf records nothing.
func (Unrecorded) Eventf(runtime.Object, string, string, string, ...any) {}

// AnnotatedEventf records nothing.
func (Unrecorded) AnnotatedEventf(runtime.Object, map[string]string, string, string, string, ...any) {
}
