package collector

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// Config is what the controller's flags say of garbage collection: the
// same for every project.
type Config struct {
	// Mark is this cluster's ownership mark: only what carries it, and
	// whose name records this very cluster, is ever collected.
	Mark neutron.Mark
	// Networks is read live (never the cache) before an orphan is
	// collected.
	Networks clientset.Interface
	// Namespace, when not empty, is the only namespace whose Networks the
	// controller manages (--namespace); Neutron resources of other
	// namespaces are left alone, even when they look orphaned from here.
	Namespace string
	// Enabled turns collection on (--orphan-collection); off, orphans are
	// only counted.
	Enabled bool
	// GracePeriod is how long a resource must have been seen orphaned,
	// by two lists of Neutron, before it is collected.
	GracePeriod time.Duration
	// MaxPerList caps the orphans collected per list of Neutron.
	MaxPerList int
}

// Orphans is the garbage collection of one OpenStack project: its
// sightings and per-list budget (sightings.go), over the project's
// inventory, the one door to its Neutron. pkg/controller/tenancy builds one with
// each project, so that a project let go or rebuilt (a rotated password)
// starts its sightings afresh.
type Orphans struct {
	inv     *inventory.Inventory
	cfg     Config
	tracker *tracker
}

// NewOrphans returns the garbage collection of the project whose Neutron
// inv lists.
func NewOrphans(inv *inventory.Inventory, cfg Config) *Orphans {
	return &Orphans{inv: inv, cfg: cfg, tracker: newTracker(cfg.GracePeriod, cfg.MaxPerList)}
}

// manages reports whether owner's Network is in the controller's scope
// (--namespace). A controller limited to one namespace cannot see the
// Networks of others, so their resources must not look orphaned to it.
func (o *Orphans) manages(owner neutron.Owner) bool {
	return o.cfg.Namespace == "" || owner.Namespace == o.cfg.Namespace
}

// namespaceOf is the namespace of the Network whose resources in Neutron
// carry uid: what the collector's queue is fair across.
func (o *Orphans) namespaceOf(uid types.UID) string { return o.inv.Get(uid).Owner.Namespace }
