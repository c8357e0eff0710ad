package neutron

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Ownership is written into the create request itself, so a resource of
// ours is recognisable from the moment Neutron holds it, even when the
// controller dies before it reads the answer. Neutron (Zed) refuses tags in
// a POST, but takes a name and a description, and filters lists on an exact
// description. So:
//
//   - the description is the Mark: the same text on every resource of one
//     cluster's controller, which makes "list what is ours" one filtered
//     request per page, and leaves other tools' and other clusters'
//     resources out of the controller's view entirely;
//   - the name is the owning Network and the cluster it lives in,
//     "<namespace>/<name>/<uid>/<cluster-uid>": readable in
//     `openstack network list`, and parsed back strictly (canonical UUIDs)
//     before the controller touches anything.
//
// A resource is the controller's only when both hold. Tags are not used at
// all: they would cost a write per resource and could not close the window
// between create and tag.

// MaxNameLength is Neutron's limit on a name and on a description.
const MaxNameLength = 255

// truncatedSuffix ends a Network name that was cut to fit MaxNameLength.
// It cannot occur in a Kubernetes name, so a cut name is never mistaken for
// a whole one.
const truncatedSuffix = "~"

// Owner is the Network a Neutron resource implements.
type Owner struct {
	Namespace string
	// Name is the Network's name. In an Owner parsed back from Neutron it
	// may be cut short (ending in "~"): only Namespace and UID identify.
	Name string
	UID  types.UID
	// ClusterUID is the UID of the kube-system namespace of the cluster
	// whose controller made the resource, as its name records it; empty
	// for a name that records none (made before names recorded it). Only
	// in an Owner parsed back from Neutron.
	ClusterUID types.UID
}

// Key is the owner's namespace/name.
func (o Owner) Key() string { return o.Namespace + "/" + o.Name }

// Truncated reports whether Name was cut short to fit Neutron's limit, so
// that it cannot be looked up by name.
func (o Owner) Truncated() bool { return strings.HasSuffix(o.Name, truncatedSuffix) }

// Mark is one cluster's ownership mark: the description of every Neutron
// resource its controller creates, and the cluster's UID, which the name of
// each resource records.
type Mark struct {
	description string
	clusterUID  types.UID
}

// NewMark returns the mark of the cluster whose kube-system namespace has
// the UID clusterUID. Its identity in the description is cluster, or the
// UID itself when cluster is empty: that default cannot collide by accident
// between two clusters, as the name "kubernetes" that every cluster is
// given did. A cluster name must be a DNS-1123 label: it is written into
// every description, and lowercase letters, digits and '-' keep the mark
// readable and unambiguous (no spaces, commas, '=' or quotes).
func NewMark(cluster string, clusterUID types.UID) (Mark, error) {
	if !isCanonicalUUID(string(clusterUID)) {
		return Mark{}, fmt.Errorf("cluster UID %q is not a canonical UUID", clusterUID)
	}
	if cluster == "" {
		cluster = string(clusterUID)
	}
	if errs := validation.IsDNS1123Label(cluster); len(errs) > 0 {
		return Mark{}, fmt.Errorf("cluster name %q cannot be part of the ownership mark of Neutron resources: %s",
			cluster, strings.Join(errs, "; "))
	}
	return Mark{description: markPrefix + "cluster=" + cluster, clusterUID: clusterUID}, nil
}

// markPrefix begins every cluster's mark.
const markPrefix = "managed-by=network-controller,"

// IsMark reports whether description is some cluster's mark, this one's or
// another's.
func IsMark(description string) bool { return strings.HasPrefix(description, markPrefix) }

// Description is the exact description of the cluster's resources.
func (m Mark) Description() string { return m.description }

// ClusterUID is the UID of the cluster's kube-system namespace.
func (m Mark) ClusterUID() types.UID { return m.clusterUID }

// Released is the description of a resource that owner's controller left
// in place on purpose (deletionPolicy: Orphan): not the mark, so never
// recognised as anyone's again, and saying to a person where it came from.
func (m Mark) Released(owner Owner) string {
	s := releasedPrefix + strings.TrimPrefix(m.description, markPrefix) +
		") when Network " + owner.Key() + " was deleted"
	if len(s) > MaxNameLength {
		s = s[:MaxNameLength-len(truncatedSuffix)] + truncatedSuffix
	}
	return s
}

// releasedPrefix begins the description of every resource a controller
// released, whichever cluster's.
const releasedPrefix = "released by network-controller ("

// IsReleased reports whether description says some cluster's controller
// released the resource (Released): a network handed out by a Network's
// deletion with deletionPolicy Orphan, which its namespace's workloads may
// still use.
func IsReleased(description string) bool { return strings.HasPrefix(description, releasedPrefix) }

// ReleasedFrom returns the namespace of the Network whose deletion released
// a resource of description, when this mark's cluster released it; ok is
// false for any other description (another cluster's release, a person's
// text). The namespace is never cut: Released cuts only the Network's
// name, after it.
func (m Mark) ReleasedFrom(description string) (namespace string, ok bool) {
	rest, ok := strings.CutPrefix(description, releasedPrefix+strings.TrimPrefix(m.description, markPrefix)+") when Network ")
	if !ok {
		return "", false
	}
	ns, _, ok := strings.Cut(rest, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 {
		return "", false
	}
	return ns, true
}

// ResourceName is the name of owner's Neutron network and subnet:
// "<namespace>/<name>/<uid>/<cluster-uid>". Namespaces (63) and UIDs (36)
// are kept whole; the Network's name (up to 253) is cut, and marked so,
// when the whole would pass Neutron's 255 characters. The cluster's UID is
// what lets garbage collection prove that a resource whose Network is gone
// was this cluster's, even where two clusters share a mark.
func (m Mark) ResourceName(owner Owner) string {
	suffix := "/" + string(owner.UID) + "/" + string(m.clusterUID)
	room := MaxNameLength - len(owner.Namespace) - 1 - len(suffix)
	name := owner.Name
	if len(name) > room {
		name = name[:room-len(truncatedSuffix)] + truncatedSuffix
	}
	return owner.Namespace + "/" + name + suffix
}

// OwnerOf returns the Network that owns a Neutron resource of the given
// name and description, and whether the resource provably belongs to this
// mark's controller: the description is exactly the mark, the namespace is
// a valid namespace name, and the UIDs are canonical UUIDs. Anything else —
// another tool's, another cluster's, a person's, one whose name was edited
// — is not ours, and is never changed or deleted.
//
// A Network UID is unique across clusters, so a live Network of that UID
// proves a resource its own; where the Network is gone, only the recorded
// cluster UID does (see Collectable).
func (m Mark) OwnerOf(name, description string) (Owner, bool) {
	if description != m.description {
		return Owner{}, false
	}
	return parseResourceName(name)
}

// Collectable reports whether a resource of owner (as OwnerOf parsed it)
// may be deleted when no Network of its UID exists: only when its name
// records this very cluster. A cluster that shares the mark by an explicit
// --cluster-name, or a name written before cluster UIDs were recorded,
// proves nothing, and its resources are left alone.
func (m Mark) Collectable(owner Owner) bool {
	return owner.ClusterUID != "" && owner.ClusterUID == m.clusterUID
}

// parseResourceName parses "<namespace>/<name>/<uid>[/<cluster-uid>]".
func parseResourceName(s string) (Owner, bool) {
	parts := strings.Split(s, "/")
	if (len(parts) != 3 && len(parts) != 4) || parts[1] == "" {
		return Owner{}, false
	}
	ns, name, uid := parts[0], parts[1], parts[2]
	if len(validation.IsDNS1123Label(ns)) > 0 || !isCanonicalUUID(uid) {
		return Owner{}, false
	}
	o := Owner{Namespace: ns, Name: name, UID: types.UID(uid)}
	if len(parts) == 4 {
		if !isCanonicalUUID(parts[3]) {
			return Owner{}, false
		}
		o.ClusterUID = types.UID(parts[3])
	}
	return o, true
}

// isCanonicalUUID accepts only the form the API server gives UIDs in
// (36 characters, lowercase, hyphenated); uuid.Parse alone also takes
// braces, "urn:uuid:" and raw hex.
func isCanonicalUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
