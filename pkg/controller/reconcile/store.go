package reconcile

import "context"

// writeRecord stores rec in the Network's status, what (the place, the
// adoption's names) saying which part is new, and, once stored, makes it
// the pass's record, which the pass's Outcome reports.
func (p *pass) writeRecord(ctx context.Context, what string, rec Record) error {
	if err := p.records.WriteRecord(ctx, p.network, rec); err != nil {
		return &recordError{what: what, err: err}
	}
	p.recorded = rec
	return nil
}
