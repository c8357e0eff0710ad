package leader

import (
	"context"
	"errors"
	"sync"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// errNotOurs refuses the release of a Lease another replica holds.
var errNotOurs = errors.New("the Lease names another holder: not ours to release")

// releasesOnlyOurs is lock, except that a release (an Update that leaves
// the holder empty) goes through only while the Lease still names id.
//
// client-go's release reads the Lease, then asks its own cached view
// (IsLeader) whether it holds it, not the record it has just read. After a
// renewal failed because every read failed (this replica partitioned from
// the API server, or frozen), that cached view still says "me", while
// another replica has taken the Lease meanwhile: the release then empties
// the successor's Lease, a third replica takes it, and the successor
// writes beside it until its own next renewal. The soak's history saw
// exactly that (docs/reliability.md). Refused here, the release fails,
// client-go logs it, and the Lease stays the successor's.
type releasesOnlyOurs struct {
	resourcelock.Interface
	id string

	mu sync.Mutex
	// holder is the holder of the record the latest Get returned:
	// client-go's release Gets first, and its Update carries that
	// record's resourceVersion, so a Lease changed in between is a
	// conflict, retried with a new Get.
	holder string
}

func (l *releasesOnlyOurs) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	record, raw, err := l.Interface.Get(ctx)
	if err == nil {
		l.mu.Lock()
		l.holder = record.HolderIdentity
		l.mu.Unlock()
	}
	return record, raw, err
}

func (l *releasesOnlyOurs) Update(ctx context.Context, record resourcelock.LeaderElectionRecord) error {
	l.mu.Lock()
	holder := l.holder
	l.mu.Unlock()
	if record.HolderIdentity == "" && holder != l.id {
		return errNotOurs
	}
	return l.Interface.Update(ctx, record)
}
