package web

import (
	"maps"
	"net/url"
	"strconv"
)

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

// historyPage cuts a list read for a page of historyRows items (see
// cutPage) and returns the links to the pages older and newer than it,
// "" where there is none: base with the filter's parameters and older= or
// newer= the number (id) of the page's last or first item.
func historyPage[T any](list []T, fromNewer, fromOlder bool, base string, filter url.Values, id func(T) int64) (page []T, older, newer string) {
	page, hasOlder, hasNewer := cutPage(list, historyRows, fromNewer, fromOlder)
	link := func(param string, item T) string {
		p := maps.Clone(filter)
		p.Set(param, strconv.FormatInt(id(item), 10))
		return base + "?" + p.Encode()
	}
	if hasOlder {
		older = link("older", page[len(page)-1])
	}
	if hasNewer {
		newer = link("newer", page[0])
	}
	return page, older, newer
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
