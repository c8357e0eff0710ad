package reconcile

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/desired"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Outcome is what one pass of the reconciler did and found: everything the
// controller writes (status, Events, the finalizer) and how it queues the
// key again. The reconciler itself writes to the API server only the
// records that must precede a Neutron write (record.go).
type Outcome struct {
	// Condition is the Ready condition to record; nil records nothing.
	Condition *metav1.Condition
	// Warning is the reason of the Warning Event that announces Condition
	// when it changes; "" for none.
	Warning string
	// Observed is what Neutron holds for the Network, as far as the pass
	// knows; status reports it.
	Observed Observed
	// Events are what the pass did (created, updated, deleted...).
	Events []Event
	// Requeue says when the key comes back.
	Requeue Requeue
	// After is the delay of AddAfter.
	After time.Duration
	// Err is why the pass failed; nil when it did not.
	Err error
	// Finalized says Delete is done with Neutron: the finalizer may go.
	Finalized bool
}

// Requeue is what the queue does with a key after a pass, named after the
// workqueue call that does it.
type Requeue int

const (
	// Forget: the pass succeeded; the queue forgets the key's failures
	// (workqueue's Forget), and the key comes back on its next event or
	// resync.
	Forget Requeue = iota
	// AddRateLimited: the key comes back after its next backoff step
	// (workqueue's AddRateLimited), whether the pass failed (Err set:
	// Neutron unreachable, a conflict) or did a step whose next must
	// wait for the informer's cache (Err nil: no failure).
	AddRateLimited
	// ForgetUntilSpecChanges: the spec is one Neutron would refuse; the
	// queue forgets the key, and only a change to the spec, which queues
	// it again, can help.
	ForgetUntilSpecChanges
	// AddAfter: nothing will change by retrying soon (Neutron refused
	// the request); the queue forgets the key's failures and has it back
	// after the Outcome's After (workqueue's AddAfter), or at once when
	// the Network changes.
	AddAfter
)

func (r Requeue) String() string {
	return [...]string{"Forget", "AddRateLimited", "ForgetUntilSpecChanges", "AddAfter"}[r]
}

// MetricResult is the result label of network_controller_syncs_total for
// a pass that ends with r, failed when it ended on an error.
func (r Requeue) MetricResult(failed bool) string {
	switch {
	case r == ForgetUntilSpecChanges:
		return metrics.ResultInvalid
	case r == AddAfter:
		return metrics.ResultRejected
	case r == AddRateLimited && failed:
		return metrics.ResultError
	}
	return metrics.ResultSuccess
}

// Event is one Event to record.
type Event struct {
	Type, Reason, Message string
	// Regarding is the object the Event is about; nil is the Network.
	Regarding *corev1.ObjectReference
}

// Event reasons, besides the Ready condition's reasons.
const (
	eventCreated        = "Created"
	eventUpdated        = "Updated"
	eventDeleted        = "Deleted"
	eventDriftRepaired  = "DriftRepaired"
	eventDeletionFailed = "DeletionFailed"
	// eventDuplicateLeft: a duplicate network was not deleted, since
	// Neutron would take with it a subnet that is not the Network's.
	eventDuplicateLeft = "DuplicateLeft"
	eventOrphaned      = "Orphaned"
	eventAdopted       = "Adopted"
	eventAttached      = "Attached"
	eventDetached      = "Detached"
)

// rejectedRetryInterval is how long a Network that Neutron refused waits
// before it is tried again unchanged (a change to it retries at once): the
// refusal may have been caused by something else, e.g. an overlapping
// Network that has since been deleted.
const rejectedRetryInterval = 5 * time.Minute

// phase is what a pass was doing when it failed: the same error means
// different things to a Network being made and to one being deleted.
type phase int

const (
	phaseSyncing   phase = iota // making Neutron match the spec
	phaseWaiting                // before the first list of Neutron
	phaseDeleting               // deleting what the Network owns
	phaseReleasing              // deletionPolicy Orphan: giving it up
)

// verdict is what an error means: the Ready condition's reason and
// message, the Warning Event that announces it, and the retry.
type verdict struct {
	// reason is the Ready condition's; "" writes no condition.
	reason string
	// warning is the Warning Event's reason when it is not reason's own.
	warning string
	message string
	requeue Requeue
	// after is the delay of an AddAfter requeue.
	after time.Duration
}

// classify is the one table from errors to reasons and retries. Neutron's
// refusals of an invalid request are retried after a fixed, long delay
// (retrying them unchanged is pointless); a used-up quota and everything
// else (unreachable, 5xx, timeouts) with backoff capped at
// --max-retry-delay; a spec Neutron would refuse not at all.
func classify(ph phase, err error) verdict {
	var (
		rejected  *neutron.RejectedError
		invalid   *desired.InvalidSpecError
		adoption  *adoptionError
		record    *recordError
		external  *externalNetworkError
		refused   *NotAllowedError
		removal   *subnetRemovalBlockedError
		strangers *inventory.SubnetsNotOursError
	)
	isRejected := errors.As(err, &rejected)
	switch {
	case errors.Is(err, inventory.ErrFenced):
		// Not this replica's to say anything: it may no longer lead, and
		// a status or Warning written now could overwrite what the new
		// leader wrote. No condition; the retry finds out which it is.
		return verdict{requeue: AddRateLimited}
	case errors.Is(err, inventory.ErrNotOurs):
		// A broken invariant, not Neutron's doing: said as such.
		return verdict{reason: samplecrdv1.ReasonInternalError, message: "The controller stopped before a request that would break its ownership rule; nothing was changed in Neutron (a bug: report it): " + err.Error(), requeue: AddRateLimited}
	case neutron.IsCredentialsError(err):
		// Lasts until someone fixes the Secret or its grant; capped
		// backoff notices either, the Secret being read at most every
		// few seconds (pkg/controller/tenancy).
		return verdict{reason: samplecrdv1.ReasonCredentialsUnavailable, message: err.Error(), requeue: AddRateLimited}
	case ph == phaseWaiting:
		reason := samplecrdv1.ReasonNeutronUnavailable
		if neutron.IsAuthError(err) {
			reason = samplecrdv1.ReasonAuthenticationFailed
		}
		return verdict{reason: reason, message: "Neutron has not been listed yet: " + err.Error(), requeue: AddRateLimited}
	case ph == phaseDeleting && errors.As(err, &strangers):
		// Nothing was sent: Neutron would take these subnets with the
		// network. Someone else's hand removes them; backoff notices.
		return verdict{reason: samplecrdv1.ReasonDeletionBlocked, message: fmt.Sprintf(
			"Neutron network %s holds subnets this Network did not make, which Neutron would delete with it; "+
				"the network is deleted once they are removed: %s", strangers.NetworkID, boundList(strangers.SubnetIDs)), requeue: AddRateLimited}
	case ph == phaseDeleting && isRejected && rejected.InUse():
		// Retried with backoff, capped at --max-retry-delay: the ports of
		// a blocked delete go away by someone else's hand.
		return verdict{reason: samplecrdv1.ReasonDeletionBlocked, message: "Neutron refused: " + rejected.Message, requeue: AddRateLimited}
	case ph == phaseDeleting:
		return verdict{reason: samplecrdv1.ReasonDeleting, warning: eventDeletionFailed, message: "Waiting for Neutron to delete the network: " + err.Error(), requeue: AddRateLimited}
	case ph == phaseReleasing:
		return verdict{reason: samplecrdv1.ReasonDeleting, warning: eventDeletionFailed, message: "Waiting for Neutron to release the network (deletionPolicy: Orphan): " + err.Error(), requeue: AddRateLimited}
	case errors.As(err, &record):
		// The API server did not store what must precede a Neutron
		// write; nothing was written there. Backoff retries it.
		return verdict{reason: samplecrdv1.ReasonProvisioning, message: err.Error(), requeue: AddRateLimited}
	case errors.As(err, &adoption):
		return verdict{reason: adoption.reason, message: adoption.msg, requeue: AddAfter, after: rejectedRetryInterval}
	case errors.As(err, &removal):
		// Someone else's ports: they go by their owner's hand, which
		// capped backoff notices.
		return verdict{reason: samplecrdv1.ReasonSubnetRemovalBlocked, message: err.Error(), requeue: AddRateLimited}
	case errors.As(err, &invalid):
		// The spec must change, and its change queues the Network again.
		return verdict{reason: samplecrdv1.ReasonInvalidSpec, message: invalid.Message, requeue: ForgetUntilSpecChanges}
	case errors.Is(err, errAdoptionRecordPending):
		// The cache catches up in moments: retried with backoff.
		return verdict{reason: samplecrdv1.ReasonProvisioning, message: err.Error(), requeue: AddRateLimited}
	case neutron.IsStale(err):
		// Not a refusal of the request: the resource changed between the
		// door's read and its write, twice in a row (writeOwned sends one
		// more try after a 412). A read again settles it: backoff, not
		// rejectedRetryInterval.
		return verdict{reason: samplecrdv1.ReasonProvisioning, message: "Neutron's resource changed while it was being written; reading it again: " + err.Error(), requeue: AddRateLimited}
	case errors.Is(err, inventory.ErrMarkGone):
		// Not an outage: a resource the inventory holds for the Network
		// is no longer its own in Neutron (its mark removed, another
		// Network's written) or is gone, since the latest list. Nothing
		// was sent; the list the door asked for settles it.
		return verdict{reason: samplecrdv1.ReasonProvisioning, message: "waiting for a list of Neutron: " + err.Error(), requeue: AddRateLimited}
	case errors.Is(err, errAdoptionChanged):
		// Not Neutron's refusal of the request, which was right when
		// sent: a read again settles it, a refusal or a mark, soon.
		return verdict{reason: samplecrdv1.ReasonProvisioning, message: err.Error(), requeue: AddRateLimited}
	case neutron.IsAuthError(err):
		// Lasts until the credentials are fixed, which the Neutron
		// session notices by itself; backoff keeps the retries cheap.
		return verdict{reason: samplecrdv1.ReasonAuthenticationFailed, message: err.Error(), requeue: AddRateLimited}
	case isRejected && rejected.OverQuota():
		// Not terminal: a quota is raised, a network freed. Backoff,
		// capped, notices either without anyone touching the Network.
		return verdict{reason: samplecrdv1.ReasonNeutronQuotaExceeded, message: "Neutron refused: " + rejected.Message, requeue: AddRateLimited}
	case errors.As(err, &refused):
		// The administrator's to grant: a change of a TenantPolicy or of
		// the namespace's labels queues the Network again; otherwise it
		// is looked at every few minutes.
		return verdict{reason: refused.Reason, message: refused.Message, requeue: AddAfter, after: rejectedRetryInterval}
	case errors.As(err, &external):
		// An administrator may allow it, someone make the network:
		// capped backoff notices either.
		return verdict{reason: samplecrdv1.ReasonExternalNetworkNotAllowed, message: external.msg, requeue: AddRateLimited}
	case isRejected && rejected.Type == neutron.TypeRouterNotFound:
		// Someone may yet make the router: capped backoff finds it.
		return verdict{reason: samplecrdv1.ReasonRouterNotFound, message: "spec.router: " + rejected.Message, requeue: AddRateLimited}
	case isRejected && rejected.Overlap():
		// Neutron's words are left out: on a router they name the other
		// subnet, ID and range, which may be another namespace's. The
		// message says what the Network's author can do; the request it
		// names finds the rest in neutron-server's log, an
		// administrator's to read (docs/conditions.md).
		return verdict{reason: samplecrdv1.ReasonCIDRConflict, message: overlapMessage(rejected), requeue: AddAfter, after: rejectedRetryInterval}
	case isRejected:
		return verdict{reason: samplecrdv1.ReasonNeutronRejected, message: "Neutron refused: " + rejected.Message, requeue: AddAfter, after: rejectedRetryInterval}
	}
	return verdict{reason: samplecrdv1.ReasonNeutronUnavailable, message: err.Error(), requeue: AddRateLimited}
}

// ProjectRefused is the Outcome of a Network whose project may not or
// cannot be used, and ok, when err says so: its namespace is not granted
// what it names (a *NotAllowedError), or its credentials
// (spec.cloudCredentialsRef) cannot be used (a *neutron.CredentialsError),
// or Keystone refused them (an *neutron.AuthError, asked when credentials
// are first used, to learn their place). Nothing was asked of Neutron. The
// same holds while it is being deleted, so that its finalizer stays until
// the credentials can be used. Any other error is not a refusal: ok is
// false, and the caller retries.
func ProjectRefused(network *samplecrdv2.Network, err error) (_ Outcome, ok bool) {
	if !IsNotAllowed(err) && !neutron.IsCredentialsError(err) && !neutron.IsAuthError(err) {
		return Outcome{}, false
	}
	obs := LastObserved(network.Status)
	obs.Quota = noProjectsQuota()
	return classify(phaseSyncing, err).outcome(err, obs, nil), true
}

// outcome turns the verdict on err into the Outcome of a failed pass.
// A verdict without a reason writes no condition.
func (v verdict) outcome(err error, obs Observed, events []Event) Outcome {
	out := Outcome{Observed: obs, Events: events, Requeue: v.requeue, After: v.after, Err: printableErr(err)}
	out.Warning = cmp.Or(v.warning, v.reason)
	if v.reason != "" {
		cond := notReady(v.reason, v.message)
		out.Condition = &cond
	}
	return out
}

// ready is the condition of a Network whose Neutron resources match.
func ready() metav1.Condition {
	return metav1.Condition{
		Type:    samplecrdv1.ConditionReady,
		Status:  metav1.ConditionTrue,
		Reason:  samplecrdv1.ReasonProvisioned,
		Message: "The Neutron network and subnet match the spec",
	}
}

func notReady(reason, message string) metav1.Condition {
	return metav1.Condition{Type: samplecrdv1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: BoundMessage(message)}
}

// overlapMessage is the condition of a range Neutron refused as
// overlapping another subnet, in the controller's words, never Neutron's:
// what the Network's author needs, and nothing of the other subnet.
func overlapMessage(rejected *neutron.RejectedError) string {
	// neutron-server's refusal of a router interface is "Bad router
	// request: Cidr ... of subnet ... overlaps with cidr ... of subnet
	// ..."; of a subnet, "Requested subnet with cidr: ... for network:
	// ... overlaps with another subnet".
	if strings.Contains(strings.ToLower(rejected.Message), "router") {
		return "Neutron refused to attach the subnet to spec.router: its range (spec.cidr) overlaps a subnet already on that router, which may be another Network's. Choose another range (a new Network) or another router"
	}
	return "Neutron refused the subnet: its range (spec.cidr) overlaps another subnet of the network, or, where the cloud refuses overlapping ranges, of the project, which may be another Network's. Choose another range (a new Network)"
}

// MaxMessageLength bounds every condition and Event message the controller
// writes (docs/conditions.md). Neutron's answers, a list of ports, an error
// with a response body: none of it may grow a status past what the API
// server accepts, or an Event past what a person reads.
const MaxMessageLength = 1024

// BoundMessage is msg as every condition and Event message is written:
// Printable, then cut to MaxMessageLength, saying how much was left out.
func BoundMessage(msg string) string { return boundTo(msg, MaxMessageLength) }

// boundTo is msg Printable and cut to max bytes, saying how much was left
// out. It is the one door of messages: Neutron's words (a refusal, a
// name, a port's device_owner) reach a condition, an Event or the log
// through it.
func boundTo(msg string, max int) string {
	msg = Printable(msg)
	if len(msg) <= max {
		return msg
	}
	// The note takes at most 40 bytes; the cut backs off to a rune start,
	// and to before a backslash close by, so as not to cut an escape
	// (at most 10 bytes: \U000e0041, a tag character) in two.
	cut := max - 40
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	near := cut - min(cut, 9)
	if i := strings.LastIndexByte(msg[near:cut], '\\'); i >= 0 {
		cut = near + i
	}
	return fmt.Sprintf("%s… and %d more characters", msg[:cut], len(msg)-cut)
}

// Printable is s with what could forge a line, or hide or reorder text,
// where a message is read (a log line, kubectl describe, a terminal)
// escaped as Go escapes it in a quoted string: control characters
// (newline, carriage return, escape...), Unicode's line and paragraph
// separators, its format characters (category Cf: the bidirectional
// controls, zero-width spaces and joiners, the byte order mark, the
// invisible tag characters), and bytes that are not UTF-8. The rest,
// quotes and backslashes included, is left as it is, so that a message
// reads as written; an emoji joined by U+200D shows its joiner.
func Printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unprintable(r):
			q := strconv.QuoteRuneToASCII(r) // '\n', '\u2028': without the quotes
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

// unprintable reports whether r is one that Printable escapes.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf)
}

// printableError is an error whose text is Printable, for the log keys
// the controller writes it under; errors.Is and As see the error it
// wraps.
type printableError struct{ err error }

func (e printableError) Error() string { return Printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

// printableErr is err as printableError; nil stays nil.
func printableErr(err error) error {
	if err == nil {
		return nil
	}
	return printableError{err}
}
