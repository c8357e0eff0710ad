// Package reconcile makes Neutron match one Network. It is the body of the
// controller's syncHandler: Preflight and the ladder of the network and its
// subnets (ladder.go, subnets.go), adoption (adopt.go), ranges from pools
// (subnetpool.go), the router interface (router.go), and deletion and
// release (delete.go); below them, what a pass chooses from what it read
// (choose.go), why it stops (errors.go), what it stores before it writes
// to Neutron (record.go) and what it returns (outcome.go). It reads and
// writes Neutron only through an inventory.Inventory, and the API server
// only for the record a pass stores in status before it makes or marks
// anything (a Network's place, an adoption's names): each pass returns an
// Outcome, and the controller writes status, Events and the finalizer from
// it. classify (outcome.go) is the one table from errors to reasons and
// retries. What deleted Networks left behind is the garbage collector's
// (pkg/controller/collector), which deletes it with DeleteOwned.
package reconcile

import (
	"context"
	"fmt"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/tracing"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Options tune a Reconciler.
type Options struct {
	// Adoption says which networks an administrator named, by ID, for a
	// namespace to adopt (pkg/controller/tenancy); nil names none. Only a named
	// network may be adopted when another namespace released it, and only
	// a named one (or one the namespace itself released) has the fields in
	// which it differs from the spec named (adopt.go).
	Adoption AdoptionGrants
	// Records writes what a pass must have stored before it changes
	// Neutron (record.go): ApplyRecord, or a plan's, which writes
	// nothing.
	Records RecordWriter
}

// AdoptionGrants says whether a TenantPolicy that selects a namespace
// names a Neutron network, by ID, for its Networks to adopt.
type AdoptionGrants interface {
	NamesForAdoption(namespace, networkID string) (bool, error)
}

// Reconciler makes Neutron match Networks, one pass at a time.
type Reconciler struct {
	inv  *inventory.Inventory
	mark neutron.Mark
	// records stores a pass's Record before the pass goes on.
	records RecordWriter
	opts    Options
}

// New returns a Reconciler that acts through inv on what carries mark, and
// stores its records with opts.Records.
func New(inv *inventory.Inventory, mark neutron.Mark, opts Options) *Reconciler {
	return &Reconciler{inv: inv, mark: mark, records: opts.Records, opts: opts}
}

// pass is one reconcile of one Network: whom it acts for, and the Events
// it has to report.
type pass struct {
	*Reconciler
	network *samplecrdv2.Network
	owner   neutron.Owner
	events  []Event
	// router is the Network's router interface as far as the pass knows:
	// status's until the pass detaches or attaches one.
	router *samplecrdv1.RouterStatus
	// interfaces are the Network's router interfaces by subnet ID, as far
	// as the pass knows: one per subnet, status.subnets'.
	interfaces map[string]samplecrdv2.RouterInterfaceStatus
	// requestID is the global request ID the pass's Neutron requests
	// carry (pkg/component/tracing), named by a condition that Neutron's answer, or
	// its silence, caused; "" when the pass has none.
	requestID string
	// recorded is the place and adoption the API server holds, as far as
	// the pass knows: status's, until the pass stores more (writeRecord).
	recorded Record
}

func (r *Reconciler) newPass(ctx context.Context, network *samplecrdv2.Network) *pass {
	return &pass{Reconciler: r, network: network, owner: OwnerOf(network), router: LastObserved(network.Status).Router, interfaces: interfacesOf(network.Status),
		requestID: tracing.RequestID(ctx), recorded: Record{Place: recordedPlace(network.Status), Adopted: network.Status.Adopted}}
}

func (p *pass) eventf(eventType, reason, format string, args ...any) {
	p.events = append(p.events, Event{Type: eventType, Reason: reason, Message: BoundMessage(fmt.Sprintf(format, args...))})
}

// failed is the Outcome of a pass that stopped at err in phase ph. When
// err is Neutron's answer to a request, or its silence, the condition
// names the request (requestOf), so that Neutron's log finds it.
func (p *pass) failed(ph phase, err error, obs Observed) Outcome {
	v := classify(ph, err)
	if id := requestOf(err, p.requestID); id != "" {
		v.message = namingRequest(v.message, id)
	}
	return v.outcome(err, obs, p.events)
}

// knowingQuota is out, an Outcome of a pass of network, with the quota
// of its project as r's inventory last read it (Inventory.Quota: nil
// before the first read, none when the credentials now reach another
// place): every pass of a Network of r's project says QuotaNearlyFull
// from the same read, so none keeps a stale one.
func (r *Reconciler) knowingQuota(network *samplecrdv2.Network, out Outcome) Outcome {
	out.Observed.Quota = r.inv.Quota(recordedPlace(network.Status))
	return out
}

// OwnerOf is the owner Neutron resources of network are created for.
func OwnerOf(network *samplecrdv2.Network) neutron.Owner {
	return neutron.Owner{Namespace: network.Namespace, Name: network.Name, UID: network.UID}
}

// interfacesOf are the router interfaces st records, by subnet ID.
func interfacesOf(st samplecrdv2.NetworkStatus) map[string]samplecrdv2.RouterInterfaceStatus {
	out := map[string]samplecrdv2.RouterInterfaceStatus{}
	for _, s := range st.Subnets {
		if r := s.RouterInterface; r != nil && s.ID != "" {
			out[s.ID] = *r
		}
	}
	return out
}

// statusSubnet is status.subnets' entry of subnet id, if it has one.
func statusSubnet(st samplecrdv2.NetworkStatus, id string) (samplecrdv2.SubnetStatus, bool) {
	for _, s := range st.Subnets {
		if s.ID == id {
			return s, true
		}
	}
	return samplecrdv2.SubnetStatus{}, false
}
