package web

import "net/url"

// The lists of history (runs, the audit) are newest first, and paged by
// the item that ends or begins the page shown (see store.RunPage): a
// read asks for one item more than a page, to know if there are more.

// cutPage cuts a list read for a page of n items, one more than n asked
// for, to the page: the n nearest the cursor. fromNewer says the list was
// read towards newer items (from a newer= cursor), fromOlder towards
// older ones. It reports whether there are older and newer items than the
// page's.
func cutPage[T any](list []T, n int, fromNewer, fromOlder bool) (page []T, older, newer bool) {
	more := len(list) > n
	if more {
		if fromNewer {
			list = list[len(list)-n:] // the newer page: the items nearest the cursor
		} else {
			list = list[:n]
		}
	}
	if len(list) == 0 {
		return list, false, false
	}
	return list, fromNewer || more, fromOlder || fromNewer && more
}

// params returns URL parameters from name, value pairs, leaving out those
// without a value.
func params(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	return v
}
