// The Registry maps a Network to the OpenStack project its Neutron
// resources live in: the controller's own cloud, or the cloud that
// spec.cloudCredentialsRef names, from a Secret of the Network's own
// namespace. Each project gets what the controller keeps per Neutron (an
// inventory, its list loop, its breaker, a reconciler), built once per
// credential and kept while it is used, so that a broken credential holds
// only its own Networks, and each project is listed, collected and
// counted against its quota on its own.
//
// A Secret is read with a GET by name, never watched: watching would need
// the right to list every Secret of every namespace, and a namespace
// grants the read of one Secret with a Role of its own (docs/tenancy.md).

package tenancy

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// RegistryOptions configure a Registry.
type RegistryOptions struct {
	// Secrets reads the credentials' Secrets.
	Secrets corev1client.SecretsGetter
	// Own is the controller's cloud, which every tenant's must
	// authenticate at; nil when the controller runs without Keystone,
	// and then no Network may name credentials.
	Own *neutron.Cloud
	// Connect returns a Neutron client for cloud that authenticates
	// lazily (a neutron.Session).
	Connect func(cloud *neutron.Cloud) neutron.Interface
	// Build makes what the controller keeps for a project, on client,
	// whose lists keep pace, its namespace's at that project (paces.go).
	Build func(key Key, client neutron.Interface, pace *inventory.Pace) *Project
	// Inherit, if set, hands what new needs of old, the value it replaces
	// when a credential's Secret changed.
	Inherit func(old, new *Project)
	// Keeper keeps a copy of each credential Networks are made with, for
	// their deletion (keeper.go); nil keeps none.
	Keeper Keeper
	// Max bounds the credentials held at once. Beyond it one is let go
	// (its loop stopped) to make room: the least recently used of the
	// namespace that holds the most, so that a namespace never pushes
	// out the credential of one that holds fewer. A credential that
	// cannot be used holds no place: a namespace naming Secrets that do
	// not exist cannot push another's credential out.
	Max int
	// MaxPerNamespace bounds the credentials of one namespace held at
	// once: beyond it the least recently used of that same namespace is
	// let go, never another's. 0, or more than Max, is Max.
	MaxPerNamespace int
	// RereadAfter is how long a Secret's reading holds before it is read
	// again: a change of the Secret is seen within it.
	RereadAfter time.Duration
	// Clock is the real clock when nil.
	Clock clock.PassiveClock
}

// Registry hands each Network what the controller keeps for its project.
type Registry struct {
	opts RegistryOptions
	// ctx bounds every tenant's loop: the leader's term. Start sets it,
	// and start.
	ctx   context.Context
	start StartFunc
	own   *Project

	mu      sync.Mutex
	tenants map[Key]*tenant
	// refused are the credentials that cannot be used, remembered
	// apart from tenants: they hold no place (refusals.go).
	refused refusals
	// paces are each namespace's list paces at each project (paces.go).
	paces paces
}

// tenant is one credential as last read.
type tenant struct {
	// value is what was built from the credential; valid when built.
	value *Project
	built bool
	// digest is the Secret's clouds.yaml the value was built from, place
	// where Keystone said it reaches; kept says the Keeper holds that one.
	digest [sha256.Size]byte
	place  neutron.Place
	kept   bool
	// err is why the latest reading cannot be used; nil when it can.
	err error
	// readAt is when the Secret was read; usedAt when a Network last
	// asked for it.
	readAt, usedAt time.Time
	stop           context.CancelFunc
}

// NewRegistry returns a Registry whose own project is own.
func NewRegistry(own *Project, opts RegistryOptions) *Registry {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	opts.Max = max(opts.Max, 1)
	if opts.MaxPerNamespace <= 0 || opts.MaxPerNamespace > opts.Max {
		opts.MaxPerNamespace = opts.Max
	}
	return &Registry{opts: opts, own: own, tenants: map[Key]*tenant{}, refused: refusals{}, paces: paces{}}
}

// StartFunc starts what a project needs running (its list loop) until ctx
// ends. For the own project it may block (the controller lists it before
// its workers start); for any other it must not, since a worker asking
// for the project waits for it.
type StartFunc func(ctx context.Context, key Key, value *Project)

// Start starts the own project with start, and every other one with it
// as it is built, each until ctx ends.
func (r *Registry) Start(ctx context.Context, start StartFunc) {
	r.mu.Lock()
	r.ctx, r.start = ctx, start
	r.mu.Unlock()
	start(ctx, Key{}, r.own)
}

// Own is what the controller keeps for its own project.
func (r *Registry) Own() *Project { return r.own }

// Get returns what is kept for key, if a Network asked for it and it has
// not been let go: an orphan is collected only through a credential that
// is still in use.
func (r *Registry) Get(key Key) (*Project, bool) {
	if key == (Key{}) {
		return r.own, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok || !t.built {
		return nil, false
	}
	return t.value, true
}

// For returns what is kept for network's project, building it the first
// time. An error is a *neutron.CredentialsError when the credentials
// cannot be used, anything else when the Secret could not be read at all
// (the API server away) or the cloud could not say where it is (Keystone
// away, or refusing the credentials). A Network being deleted keeps the
// credential it was made with even if its Secret (or the grant to read it)
// changed for the worse or went away meanwhile, so that it can still be
// deleted: the one built before, or, after a restart or once let go, the
// Keeper's copy. A credential that now reaches another place than the
// Keeper's copy is refused (bound), and a deleting Network gets the copy.
// Any other Network's credential is kept by the Keeper before it is
// returned, so before anything is made with it.
func (r *Registry) For(ctx context.Context, network *samplecrdv2.Network) (*Project, error) {
	key := KeyOf(network)
	if key == (Key{}) {
		return r.own, nil
	}
	if r.opts.Own == nil {
		return nil, &neutron.CredentialsError{Reason: "spec.cloudCredentialsRef needs the controller to run with a cloud (--os-cloud), not --neutron-endpoint"}
	}
	now := r.opts.Clock.Now()
	deleting := network.DeletionTimestamp != nil
	if value, err, fresh := r.cached(key, now, deleting); fresh {
		return value, err
	}
	data, err := r.read(ctx, key)
	if err != nil && !neutron.IsCredentialsError(err) {
		return nil, err
	}
	// readErr is the Secret's refusal when the kept copy stands in for
	// it: only deleting Networks may use that copy.
	var (
		readErr error
		rd      aReading
	)
	if err != nil && deleting && !r.built(key) {
		if rd, readErr, err = r.standIn(ctx, key, err); err != nil {
			return nil, err
		}
	} else if err == nil {
		rd, err = r.reading(ctx, key, data)
		if rd.moved && deleting {
			if rd, readErr, err = r.standIn(ctx, key, err); err != nil {
				return nil, err
			}
		}
	}
	value, err := r.update(key, rd, cmp.Or(err, rd.err), now, deleting)
	if readErr != nil && err == nil {
		r.refuseLive(key, readErr)
	}
	if err != nil || deleting {
		return value, err
	}
	return value, r.keep(ctx, key, data, rd.place)
}

// standIn is the reading of the Keeper's copy of key's credential, which
// stands in for a Secret refused with why for a Network being deleted: the
// copy reaches the place it was kept for, by construction, so it is not
// asked again. readErr is why when the copy stands in; with no copy kept,
// the reading is why's, and err only says that the copy could not be read.
func (r *Registry) standIn(ctx context.Context, key Key, why error) (rd aReading, readErr, err error) {
	data, place, ok, err := r.kept(ctx, key)
	switch {
	case err != nil:
		return aReading{}, nil, err
	case !ok:
		return aReading{err: why}, nil, nil
	}
	rd = aReading{digest: sha256.Sum256(data), place: place}
	if _, ok := r.builtAt(key, rd.digest); ok {
		return rd, why, nil
	}
	cloud, err := neutron.ParseTenantCloud(r.opts.Own, data, key.Cloud)
	if err != nil {
		return aReading{err: err}, nil, nil
	}
	rd.client = r.opts.Connect(cloud)
	return rd, why, nil
}

// aReading is a credential's clouds.yaml as read: its digest and, when it
// is new, a client on it and the place the client reaches; or why it
// cannot be used.
type aReading struct {
	digest [sha256.Size]byte
	client neutron.Interface
	place  neutron.Place
	// moved says the place is not the kept copy's.
	moved bool
	err   error
}

// reading parses data, key's clouds.yaml as read, and binds it: a
// credential not yet built is connected, to learn the place it reaches,
// which must be the one its kept copy reaches, if one is kept. One the value was built
// from is neither parsed nor connected again.
func (r *Registry) reading(ctx context.Context, key Key, data []byte) (aReading, error) {
	rd := aReading{digest: sha256.Sum256(data)}
	if place, ok := r.builtAt(key, rd.digest); ok {
		// Where it was bound: what a copy kept now records.
		rd.place = place
		return rd, nil
	}
	cloud, err := neutron.ParseTenantCloud(r.opts.Own, data, key.Cloud)
	if err != nil {
		return rd, err
	}
	rd.client = r.opts.Connect(cloud)
	// No client is built on credentials before Keystone has said where
	// they reach: a plan's too, which keeps no copy.
	if rd.place, err = rd.client.Place(ctx); err != nil {
		return rd, fmt.Errorf("learning where %s reaches: %w", key, err)
	}
	keptData, kept, ok, err := r.kept(ctx, key)
	if err == nil && ok && kept.IsZero() {
		kept, err = r.placeOfKept(ctx, key, keptData)
	}
	switch {
	case err != nil:
		return rd, err
	case ok && neutron.CheckPlace(kept, rd.place) != nil:
		rd.moved = true
		return rd, movedError(key, kept, rd.place)
	}
	return rd, nil
}

// placeOfKept learns where data, key's copy kept before places were (no
// place recorded), reaches, and records it with the copy: a zero place
// asks nothing of the credentials compared with it (neutron.CheckPlace),
// and the Keeper would let any place overwrite the only credential of the
// Networks made with it. A copy that cannot say (unparsable, or refused
// by Keystone: a password rotated since) stays of unknown place, as
// before; one Keystone does not answer for is asked again later.
func (r *Registry) placeOfKept(ctx context.Context, key Key, data []byte) (neutron.Place, error) {
	cloud, err := neutron.ParseTenantCloud(r.opts.Own, data, key.Cloud)
	if err != nil {
		return neutron.Place{}, nil
	}
	place, err := r.opts.Connect(cloud).Place(ctx)
	switch {
	case neutron.IsAuthError(err) || neutron.IsCredentialsError(err):
		return neutron.Place{}, nil
	case err != nil:
		return neutron.Place{}, fmt.Errorf("learning where the copy kept of %s reaches: %w", key, err)
	}
	return place, r.opts.Keeper.Keep(ctx, key, data, place)
}

// builtAt returns the place key's value was bound to, if it was built
// from a clouds.yaml of digest.
func (r *Registry) builtAt(key Key, digest [sha256.Size]byte) (neutron.Place, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok || !t.built || t.digest != digest {
		return neutron.Place{}, false
	}
	return t.place, true
}

// Share is how many namespaces list the project key's credential reaches
// (inventory.Options.Share): those with a credential built at that
// project ID. Each namespace's lists of the project keep one pace
// (paces.go), whose cycle is that many times one namespace's: together
// they start no more lists of it than one namespace would, none more
// than an equal part, and a namespace's many credentials split its own.
// The own project, a credential not built, and one of no known project,
// have 1.
func (r *Registry) Share(key Key) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok || !t.built {
		return 1
	}
	return r.namespacesWith(paceKey{projectID: t.place.ProjectID})
}

// namespacesWith counts the namespaces with a credential built at
// key.projectID, key.namespace among them if it is not "": the share
// key's namespace has there with a credential built again (paces.prune).
// 1 for no known project. r.mu is held.
func (r *Registry) namespacesWith(key paceKey) int {
	if key.projectID == "" {
		return 1
	}
	namespaces := map[string]bool{}
	if key.namespace != "" {
		namespaces[key.namespace] = true
	}
	for k, t := range r.tenants {
		if t.built && t.place.ProjectID == key.projectID {
			namespaces[k.Namespace] = true
		}
	}
	return max(len(namespaces), 1)
}

// keepsPace reports whether a credential built keeps key's pace. r.mu is
// held.
func (r *Registry) keepsPace(key paceKey) bool {
	for k, t := range r.tenants {
		if t.built && k.Namespace == key.namespace && t.place.ProjectID == key.projectID {
			return true
		}
	}
	return false
}

// refuseLive records err as key's reading, which Networks that are not
// being deleted get until the Secret is read again.
func (r *Registry) refuseLive(key Key, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.tenants[key]; ok {
		t.err = err
	}
}

// built reports whether a value is held for key.
func (r *Registry) built(key Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	return ok && t.built
}

// kept reads the Keeper's copy of key's credential.
func (r *Registry) kept(ctx context.Context, key Key) ([]byte, neutron.Place, bool, error) {
	if r.opts.Keeper == nil {
		return nil, neutron.Place{}, false, nil
	}
	return r.opts.Keeper.Kept(ctx, key)
}

// keep has the Keeper keep data, the credential key's value was just
// built from, which reaches place, unless it already does.
func (r *Registry) keep(ctx context.Context, key Key, data []byte, place neutron.Place) error {
	if r.opts.Keeper == nil {
		return nil
	}
	digest := sha256.Sum256(data)
	r.mu.Lock()
	t, ok := r.tenants[key]
	done := ok && t.kept && t.digest == digest
	r.mu.Unlock()
	if done {
		return nil
	}
	if err := r.opts.Keeper.Keep(ctx, key, data, place); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.tenants[key]; ok && t.digest == digest {
		t.kept = true
	}
	return nil
}

// Release lets go of key's credential, and has the Keeper forget it: the
// Set calls it once the last Network that named it is gone (set.go).
func (r *Registry) Release(ctx context.Context, key Key) error {
	if key == (Key{}) {
		return nil
	}
	r.mu.Lock()
	if t, ok := r.tenants[key]; ok {
		if t.stop != nil {
			t.stop()
		}
		delete(r.tenants, key)
	}
	delete(r.refused, key)
	r.mu.Unlock()
	if r.opts.Keeper == nil {
		return nil
	}
	return r.opts.Keeper.Forget(ctx, key)
}

// cached answers from the latest reading while it holds (fresh). A
// deleting Network takes a value built before over a newer refusal; a
// live one is not answered from a value whose copy is not kept.
func (r *Registry) cached(key Key, now time.Time, deleting bool) (_ *Project, _ error, fresh bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok {
		// A deleting Network reads on: its Secret's refusal may leave it
		// the kept copy.
		if err, held := r.refused.get(key, now, r.opts.RereadAfter); held && !deleting {
			return nil, err, true
		}
		return nil, nil, false
	}
	if now.Sub(t.readAt) >= r.opts.RereadAfter {
		return nil, nil, false
	}
	if t.built && t.err == nil && !deleting && !t.kept && r.opts.Keeper != nil {
		// Built, but its copy not kept yet (the keep failed): a live
		// Network gets it only from a reading that keeps it first.
		return nil, nil, false
	}
	t.usedAt = now
	if t.built && (t.err == nil || deleting) {
		return t.value, nil, true
	}
	return nil, t.err, true
}

// read GETs key's Secret and returns its clouds.yaml, holding key's cloud
// alone (neutron.OneCloud): what is built, compared and kept.
func (r *Registry) read(ctx context.Context, key Key) ([]byte, error) {
	secret, err := r.opts.Secrets.Secrets(key.Namespace).Get(ctx, key.Secret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, &neutron.CredentialsError{Reason: fmt.Sprintf("Secret %s/%s does not exist", key.Namespace, key.Secret)}
	case apierrors.IsForbidden(err):
		return nil, &neutron.CredentialsError{Reason: fmt.Sprintf("the controller may not read Secret %s/%s: the namespace grants it with a Role and RoleBinding (docs/tenancy.md)", key.Namespace, key.Secret)}
	case err != nil:
		return nil, fmt.Errorf("reading Secret %s/%s: %w", key.Namespace, key.Secret, err)
	}
	data, ok := secret.Data[samplecrdv1.CloudsYAMLKey]
	if !ok {
		return nil, &neutron.CredentialsError{Reason: fmt.Sprintf("Secret %s/%s has no key %q", key.Namespace, key.Secret, samplecrdv1.CloudsYAMLKey)}
	}
	return neutron.OneCloud(data, key.Cloud)
}

// update records a reading of key: the client on the cloud it gave (nil
// when it is the one the value was built from) and the place it reaches,
// or why it cannot be used. A cloud that differs from the one the value was built from
// replaces it (its loop stopped, a new one started); the same one only
// renews the reading.
func (r *Registry) update(key Key, rd aReading, err error, now time.Time, deleting bool) (*Project, error) {
	digest, client := rd.digest, rd.client
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok && err != nil {
		// Nothing built, nothing to hold: a reading that cannot be used
		// takes no place, and is remembered until it is due again.
		if refusable(err) {
			r.refused.put(key, err, now, r.opts.RereadAfter)
		}
		return nil, err
	}
	delete(r.refused, key)
	if !ok {
		t = &tenant{}
		r.tenants[key] = t
	}
	t.readAt, t.usedAt, t.err = now, now, err
	switch {
	case err != nil && t.built && deleting:
		return t.value, nil
	case err != nil:
		return nil, err
	case t.built && t.digest == digest:
		return t.value, nil
	}
	if r.ctx == nil {
		return nil, errors.New("the registry has not been started")
	}
	if t.stop != nil {
		t.stop()
	}
	r.makeRoom(key)
	ctx, stop := context.WithCancel(r.ctx)
	old, wasBuilt := t.value, t.built
	r.paces.prune(now, r.keepsPace, r.namespacesWith)
	pace := r.paces.of(key.Namespace, rd.place.ProjectID)
	t.value, t.built, t.digest, t.place, t.kept, t.stop = r.opts.Build(key, client, pace), true, digest, rd.place, false, stop
	if wasBuilt && r.opts.Inherit != nil {
		r.opts.Inherit(old, t.value)
	}
	r.start(ctx, key, t.value)
	return t.value, nil
}

// makeRoom lets credentials other than keep go, each the least recently
// used of those it may choose from: while keep's namespace holds more
// than MaxPerNamespace, one of that namespace's; then, while more than
// Max are held, one of the namespace that holds the most (keep counted),
// so that one namespace's many credentials push out its own before any
// of a namespace that holds fewer.
func (r *Registry) makeRoom(keep Key) {
	held := map[string]int{}
	for k := range r.tenants {
		held[k.Namespace]++
	}
	for held[keep.Namespace] > r.opts.MaxPerNamespace {
		if !r.letGoOldest(keep, func(k Key) bool { return k.Namespace == keep.Namespace }, held) {
			return
		}
	}
	for len(r.tenants) > r.opts.Max {
		most := 0
		for k := range r.tenants {
			if k != keep {
				most = max(most, held[k.Namespace])
			}
		}
		if !r.letGoOldest(keep, func(k Key) bool { return held[k.Namespace] == most }, held) {
			return
		}
	}
}

// letGoOldest lets go the least recently used credential other than keep
// of those from says, and counts it out of held; false when there is
// none.
func (r *Registry) letGoOldest(keep Key, from func(Key) bool, held map[string]int) bool {
	var oldest *Key
	var at time.Time
	for k, t := range r.tenants {
		if k != keep && from(k) && (oldest == nil || t.usedAt.Before(at)) {
			oldest, at = &k, t.usedAt
		}
	}
	if oldest == nil {
		return false
	}
	if t := r.tenants[*oldest]; t.stop != nil {
		t.stop()
	}
	delete(r.tenants, *oldest)
	held[oldest.Namespace]--
	return true
}
