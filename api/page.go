package api

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
)

// MaxPage is the most items one answer of a list holds; a list that has
// more says so with a next cursor.
const MaxPage = 10_000

// cursor is where the next page of a list starts. Clients see it as an
// opaque string (base64url of its JSON) and send it back unchanged.
type cursor struct {
	// List names the list, Query is a digest of the parameters that
	// select its items: a cursor is refused elsewhere.
	List  string `json:"l"`
	Query uint64 `json:"q"`
	// ID is the id (or sequence number) of the last item given, in lists
	// ordered by id.
	ID int64 `json:"id,omitempty"`
	// At is the instant of the last item given (Unix nanoseconds), in
	// lists ordered by instant, and Name its task.
	At   int64  `json:"at,omitempty"`
	Name string `json:"name,omitempty"`
	// Skip is how many items of entry ID were given (received events).
	Skip int `json:"skip,omitempty"`
	// From and To keep a forecast's range (Unix nanoseconds) across its
	// pages.
	From int64 `json:"from,omitempty"`
	To   int64 `json:"to,omitempty"`
}

// encode returns the cursor as clients see it.
func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// queryDigest digests the parameters that select a list's items, so that a
// cursor is only taken with the parameters it was given for.
func queryDigest(r *http.Request, params ...string) uint64 {
	h := fnv.New64a()
	q := r.URL.Query()
	for _, p := range params {
		h.Write([]byte(p + "=" + q.Get(p) + "\x00"))
	}
	return h.Sum64()
}

// readCursor reads the cursor parameter of a request for list, selected by
// params; ok is false when there is none.
func readCursor(r *http.Request, list string, params ...string) (c cursor, ok bool, err error) {
	v := r.URL.Query().Get("cursor")
	if v == "" {
		return c, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, false, badRequest("cursor: %q is not a cursor (give back the next value of an answer, unchanged)", v)
	}
	if c.List != list {
		return c, false, badRequest("cursor: the cursor is one of another list")
	}
	if c.Query != queryDigest(r, params...) {
		return c, false, badRequest("cursor: the cursor was given for other parameters (%s): give the same ones with it", strings.Join(params, ", "))
	}
	if c.ID < 0 || c.Skip < 0 {
		return c, false, badRequest("cursor: %q is not a cursor (give back the next value of an answer, unchanged)", v)
	}
	return c, true, nil
}

// pageCount reads the count parameter: at most count items (default def),
// and no more than MaxPage in one answer.
func pageCount(r *http.Request, def int) (int, error) {
	n := def
	if c := r.URL.Query().Get("count"); c != "" {
		v, err := strconv.Atoi(c)
		if err != nil || v < 1 {
			return 0, badRequest("count must be a whole number of at least 1, got %q", c)
		}
		n = v
	}
	return min(n, MaxPage), nil
}

// byID returns a page of count items of a list ordered by descending ID,
// after the cursor's item when there is one: fetch reads at most limit
// items with an ID below before (0: from the newest). It reports whether
// more remain.
func byID[T any](c cursor, hasCursor bool, count int, fetch func(limit int, before int64) ([]T, error)) ([]T, bool, error) {
	var before int64
	if hasCursor {
		before = c.ID
	}
	items, err := fetch(count+1, before)
	if err != nil {
		return nil, false, err
	}
	if len(items) > count {
		return items[:count], true, nil
	}
	return items, false, nil
}
