package plan

import (
	"context"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/reconcile"
)

// Unwritten is the reconcile.RecordWriter of a plan's reconcilers: the
// record the controller stores in status before it makes or marks
// anything (a Network's place, an adoption's names) is not sent, and is
// answered as stored, so that the pass goes on as the controller's would;
// the Outcome's status, which a plan folds into the next pass, carries it.
// Without it the plan's API server client (ReadOnly) would refuse the
// write, and the plan would stop there.
type Unwritten struct{}

// WriteRecord implements reconcile.RecordWriter: it writes nothing.
func (Unwritten) WriteRecord(context.Context, *samplecrdv1.Network, reconcile.Record) error {
	return nil
}
