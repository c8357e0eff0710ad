package reconcile

import (
	"errors"
	"net/url"
	"regexp"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// A condition that Neutron's answer caused names the request's global
// request ID (pkg/component/tracing), which neutron-server logs: grep its log for it.
// Each retry sends new requests with a new ID, so the ID is left out when
// two conditions are compared: a Network stuck for one reason keeps the ID
// of the first refusal, and its status is not written again at every
// retry.

// namingRequest is message ending with the request id, cut as every
// message is (MaxMessageLength) but never through the request's name;
// message as it is, bounded, when id is "".
func namingRequest(message, id string) string {
	if id == "" {
		return BoundMessage(message)
	}
	// The ID is Neutron's (a response header): Printable too.
	suffix := " (Neutron request " + Printable(id) + ")"
	return boundTo(message, MaxMessageLength-len(suffix)) + suffix
}

// requestIDSuffix matches requestSuffix at the end of a message.
var requestIDSuffix = regexp.MustCompile(` \(Neutron request req-[0-9a-f-]{36}\)$`)

// sameMessage reports whether two messages say the same, whatever
// request they name.
func sameMessage(a, b string) bool {
	return a == b || requestIDSuffix.ReplaceAllString(a, "") == requestIDSuffix.ReplaceAllString(b, "")
}

// requestOf is the ID by which Neutron's log finds the request that err
// answers: Neutron's own request ID of a refusal, which every line it logs
// about the request names; else, for a request it left unanswered, sent
// (the sync's global request ID, which Neutron logs where it keeps it:
// neutron-server 21 (Zed) with ML2/OVN keeps it on reads, and drops it on
// writes); "" for an error no request caused.
func requestOf(err error, sent string) string {
	var (
		rejected *neutron.RejectedError
		code     gophercloud.ErrUnexpectedResponseCode
		noAnswer *url.Error
	)
	switch {
	case errors.As(err, &rejected) && rejected.RequestID != "":
		return rejected.RequestID
	case errors.As(err, &rejected), neutron.IsAuthError(err), errors.As(err, &code), errors.As(err, &noAnswer):
		return sent
	}
	return ""
}
