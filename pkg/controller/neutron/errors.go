package neutron

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// RejectedError is a request Neutron understood and refused: invalid input,
// an overlapping range, a quota, a policy. Retrying it unchanged will fail
// the same way, so the controller reports it and does not retry hot.
type RejectedError struct {
	// Op says what was asked.
	Op string
	// StatusCode is Neutron's HTTP status.
	StatusCode int
	// Type is Neutron's error type, e.g. "InvalidInput" or "OverQuota".
	Type string
	// Message is Neutron's own explanation.
	Message string
	// RequestID is Neutron's own ID of the request it refused
	// (X-Openstack-Request-Id in its answer), which every line of its log
	// about the request names; "" when it sent none.
	RequestID string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("%s: neutron refused (%d %s): %s", e.Op, e.StatusCode, e.Type, e.Message)
}

// OverQuota reports whether Neutron refused a create because the project's
// quota is used up: not terminal, since someone may raise the quota or free
// a resource, so it is retried with capped backoff.
func (e *RejectedError) OverQuota() bool { return e.Type == "OverQuota" }

// InUse reports whether Neutron refused a delete because the resource is
// still in use (ports on the network or subnet, e.g. Nova's). Not terminal
// either: it ends when the ports go.
func (e *RejectedError) InUse() bool {
	return e.StatusCode == http.StatusConflict && strings.HasSuffix(e.Type, "InUse")
}

// Overlap reports whether Neutron refused a subnet because its range
// overlaps another subnet's.
func (e *RejectedError) Overlap() bool {
	return strings.Contains(strings.ToLower(e.Message), "overlap")
}

// Stale reports whether Neutron refused a conditional update (If-Match:
// revision_number=N, see SubnetUpdate.IfRevision) because the resource
// changed since it was read: 412 Precondition Failed, of type
// RevisionNumberConstraintFailed. Retrying it unchanged fails the same
// way; reading the resource again is the only way on.
func (e *RejectedError) Stale() bool { return e.StatusCode == http.StatusPreconditionFailed }

// TypeRevisionNumberConstraintFailed is Neutron's error type for a
// conditional update of a resource that changed since it was read.
const TypeRevisionNumberConstraintFailed = "RevisionNumberConstraintFailed"

// IsStale reports whether err is, or wraps, a conditional update that
// Neutron refused because the resource changed since it was read (see
// RejectedError.Stale).
func IsStale(err error) bool {
	var rejected *RejectedError
	return errors.As(err, &rejected) && rejected.Stale()
}

// StaleError is the error the real client returns for op when Neutron
// refuses a conditional update, expecting revision expected, of a resource
// now at revision current: in Neutron's words, for fakes to return.
func StaleError(op string, expected, current int) error {
	return ErrorForResponse(op, http.StatusPreconditionFailed, TypeRevisionNumberConstraintFailed,
		fmt.Sprintf("Constrained to %d, but current revision is %d", expected, current))
}

// AuthError is a request the cloud refused because the controller's
// credentials are wrong (Keystone or Neutron answered 401): not a refusal
// of the request itself, and not unavailability. It lasts until the
// credentials are fixed, which the controller notices (see Session).
type AuthError struct {
	// Op says what was asked.
	Op  string
	Err error
}

func (e *AuthError) Error() string {
	return e.Op + ": the cloud refused the credentials (401): " + e.Err.Error()
}

func (e *AuthError) Unwrap() error { return e.Err }

// IsNotFound reports whether err is Neutron's 404: the resource does not
// exist, or is another project's, which a client cannot tell apart.
func IsNotFound(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }

// IsAuthError reports whether err is, or wraps, an authentication failure.
func IsAuthError(err error) bool {
	var auth *AuthError
	return errors.As(err, &auth) || gophercloud.ResponseCodeIs(err, http.StatusUnauthorized)
}

// classify wraps a gophercloud error with what was asked, and turns
// Neutron's refusals (4xx other than 401, 404, 408 and 429) into a
// RejectedError and a 401 into an AuthError. Everything else — connection
// errors, timeouts, 5xx — is unavailability and worth retrying.
func classify(op string, err error) error {
	if IsAuthError(err) {
		return &AuthError{Op: op, Err: err}
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		switch c := code.Actual; {
		case c == http.StatusNotFound || c == http.StatusRequestTimeout || c == http.StatusTooManyRequests:
		case c >= 400 && c < 500:
			typ, msg := neutronError(code.Body)
			return &RejectedError{Op: op, StatusCode: c, Type: typ, Message: msg, RequestID: code.ResponseHeader.Get("X-Openstack-Request-Id")}
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// neutronError extracts Neutron's {"NeutronError": {"type", "message"}}.
func neutronError(body []byte) (typ, msg string) {
	var e struct {
		NeutronError struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"NeutronError"`
	}
	if json.Unmarshal(body, &e) == nil && e.NeutronError.Message != "" {
		return e.NeutronError.Type, e.NeutronError.Message
	}
	return "", strings.TrimSpace(string(body))
}

// ErrorForResponse returns the error Interface's methods return when
// Neutron answers op with the HTTP status code and its error type and
// message: a *RejectedError for refusals, a wrapped transient error
// otherwise. Fakes use it so that their errors classify as the real
// client's do.
func ErrorForResponse(op string, code int, typ, message string) error {
	body, _ := json.Marshal(map[string]any{"NeutronError": map[string]string{"type": typ, "message": message}})
	return classify(op, gophercloud.ErrUnexpectedResponseCode{Actual: code, Body: body})
}

// Unreachable reports whether err means Neutron gave no usable answer: no
// HTTP response at all (connection refused, a timeout, a reset) or a
// server error (5xx). A refusal or a 404 is an answer: Neutron is up.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var rejected *RejectedError
	if errors.As(err, &rejected) || IsAuthError(err) {
		return false
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		return code.Actual >= 500
	}
	return true
}

// CredentialsError is credentials a Network names that cannot be used:
// its Secret is missing or unreadable, or its clouds.yaml is malformed or
// asks for what a namespace may not have. Nothing was asked of Neutron. It
// lasts until someone fixes the Secret or the grant.
type CredentialsError struct {
	// Reason says what is wrong and what to do.
	Reason string
}

func (e *CredentialsError) Error() string { return e.Reason }

// IsCredentialsError reports whether err is, or wraps, a CredentialsError.
func IsCredentialsError(err error) bool {
	var creds *CredentialsError
	return errors.As(err, &creds)
}
