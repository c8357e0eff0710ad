package neutron

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// maxPages bounds the pages of one list: 10,000 pages of pageSize (1,000)
// are ten million resources, more than any Neutron holds for a project.
// It is a guard against a server whose next links never end, not a
// limit any real list meets.
const maxPages = 10_000

// eachPage visits the pages of pager, a list of client, as
// pager.EachPage does, and is the one way this package follows Neutron's
// next links. A link is Neutron's text, and the client's token goes with
// every request it is followed to, so a link is followed only
//   - to the scheme and host of the endpoint the catalog (or the
//     configuration) gave: a Neutron behind a TLS proxy that writes its
//     links as http:// is refused, not sent the token in clear;
//   - without userinfo, which would put an Authorization header of
//     Neutron's choosing on the request;
//   - to a page not read already in this list: a link that loops would
//     list forever, and hold the store's list (and the namespaces it
//     serves) with it. A page is known by what is requested (pageKey),
//     not by the link's text, and is remembered by a hash of it: a
//     fixed size per page, however long Neutron's links are;
//   - for at most maxPages pages.
//
// A link refused fails the list, which the next list asks again; what
// was visited before it is discarded by the caller, as for any error.
func eachPage(ctx context.Context, client *gophercloud.ServiceClient, pager pagination.Pager, visit func(pagination.Page) error) error {
	endpoint, err := url.Parse(client.ResourceBaseURL())
	if err != nil {
		return fmt.Errorf("parsing the Neutron endpoint: %w", err)
	}
	seen := map[[sha256.Size]byte]struct{}{}
	return pager.EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		if err := visit(page); err != nil {
			return false, err
		}
		next, err := page.NextPageURL()
		if err != nil || next == "" {
			// EachPage reads the link again, and stops at "" or fails
			// with the error.
			return true, nil
		}
		return true, followable(endpoint, next, seen)
	})
}

// followable reports why next may not be followed, nil if it may; it
// records next in seen.
func followable(endpoint *url.URL, next string, seen map[[sha256.Size]byte]struct{}) error {
	u, err := url.Parse(next)
	if err != nil {
		return fmt.Errorf("Neutron's next-page link is no URL: %w", err)
	}
	if u.Scheme != endpoint.Scheme || u.Host != endpoint.Host {
		return fmt.Errorf("Neutron's next-page link leads to %s://%s, not to its endpoint's %s://%s: not followed, for the token goes with it (behind a TLS proxy, Neutron needs [oslo_middleware] enable_proxy_headers_parsing)",
			printableLink(u.Scheme), printableLink(u.Host), endpoint.Scheme, endpoint.Host)
	}
	if u.User != nil {
		return fmt.Errorf("Neutron's next-page link carries userinfo: not followed")
	}
	key, err := pageKey(u)
	if err != nil {
		return err
	}
	if _, again := seen[key]; again {
		return fmt.Errorf("Neutron's next-page link leads back to a page this list read already: not followed, for it would list forever")
	}
	if len(seen) >= maxPages {
		return fmt.Errorf("Neutron's list goes on past %d pages: not followed further", maxPages)
	}
	seen[key] = struct{}{}
	return nil
}

// pageKey is the hash of the page u requests, the same however Neutron
// spells the link: the fragment is never sent, and Neutron reads the
// path percent-decoded and the query's parameters (and a parameter's
// values) in any order and any percent-encoding. A query that does not
// decode is refused: what Neutron would make of it is not known.
func pageKey(u *url.URL) ([sha256.Size]byte, error) {
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("Neutron's next-page link has a query that does not decode: not followed: %w", err)
	}
	for _, values := range query {
		slices.Sort(values)
	}
	// Encode sorts the keys and escapes each part, so that neither holds
	// a separator of the other: the text is the page's alone.
	return sha256.Sum256([]byte(u.Scheme + "://" + u.Host + url.PathEscape(u.Path) + "?" + query.Encode())), nil
}

// printableLink is a part of a link as an error may show it: quoted (any
// byte that is not printable escaped), and cut at 100 bytes.
func printableLink(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}
