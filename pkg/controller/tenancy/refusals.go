package tenancy

import (
	"time"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// maxRefusalsPerNamespace bounds the refusals one namespace holds: past
// it, its own oldest is forgotten, never another namespace's. A refusal
// is an error value, so the bound is generous: a namespace that names
// more refused credentials than this only has its own read again sooner.
const maxRefusalsPerNamespace = 256

// refusals remember the credentials that cannot be used, each until its
// reading is due again (RereadAfter): a Network's every sync would
// otherwise read its Secret again and, for credentials Keystone refuses,
// send Keystone another login that fails, which a namespace could aim at
// another user to have it locked out. A refusal holds no place under
// Max. The Registry's lock guards it.
type refusals map[Key]refusal

// refusal is why key's latest reading cannot be used, and when it was
// read.
type refusal struct {
	err error
	at  time.Time
}

// refusable reports whether err is a refusal worth remembering: the
// credentials' own fault (a Secret missing or malformed, a cloud not
// allowed, Keystone's refusal), not an API server or Keystone away.
func refusable(err error) bool {
	return neutron.IsCredentialsError(err) || neutron.IsAuthError(err)
}

// get returns key's refusal while it holds.
func (rs refusals) get(key Key, now time.Time, holds time.Duration) (error, bool) {
	r, ok := rs[key]
	if !ok || now.Sub(r.at) >= holds {
		return nil, false
	}
	return r.err, true
}

// put remembers err as key's refusal, forgetting first the namespace's
// refusals that no longer hold and, past the bound, its oldest.
func (rs refusals) put(key Key, err error, now time.Time, holds time.Duration) {
	var (
		held   int
		oldest *Key
	)
	for k, r := range rs {
		switch {
		case k.Namespace != key.Namespace:
		case now.Sub(r.at) >= holds:
			delete(rs, k)
		default:
			held++
			if oldest == nil || r.at.Before(rs[*oldest].at) {
				oldest = &k
			}
		}
	}
	if _, replaced := rs[key]; !replaced && held >= maxRefusalsPerNamespace && oldest != nil {
		delete(rs, *oldest)
	}
	rs[key] = refusal{err: err, at: now}
}
