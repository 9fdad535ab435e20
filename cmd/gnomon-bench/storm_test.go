package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestServerP99 checks the p99 read from two scrapes of the request
// histogram: only what was answered between them counts, both status
// classes of a route add up, and a p99 past the last bound is infinite.
func TestServerP99(t *testing.T) {
	scrape := func(route string, counts map[string][]int) string {
		var b strings.Builder
		les := []string{"0.001", "0.01", "0.1", "+Inf"}
		for code, cs := range counts {
			for i, le := range les {
				fmt.Fprintf(&b, "gnomon_http_request_duration_seconds_bucket{code=%q,route=%q,le=%q} %d\n", code, route, le, cs[i])
			}
			fmt.Fprintf(&b, "gnomon_http_request_duration_seconds_count{code=%q,route=%q} %d\n", code, route, cs[len(cs)-1])
		}
		return b.String()
	}
	route := "GET /api/v1/tasks/{name}"
	// Before: 1,000 requests, all under 1 ms. Between: 200 more, 197
	// under 10 ms, 2 under 100 ms (a 4xx among them), 1 slower still.
	before := parseMetrics(scrape(route, map[string][]int{"2xx": {1000, 1000, 1000, 1000}}) + "# HELP x\ngo_goroutines 7\n")
	after := parseMetrics(scrape(route, map[string][]int{"2xx": {1100, 1197, 1198, 1199}, "4xx": {0, 0, 1, 1}}))
	got := serverP99(before, after)[route]
	if got != [2]float64{100, 200} {
		t.Errorf("p99 and count between the scrapes: %v, want [100 200]", got)
	}
	if _, ok := before["go_goroutines"]; ok {
		t.Errorf("a series not gnomon's was read")
	}
	after = parseMetrics(scrape(route, map[string][]int{"2xx": {1000, 1000, 1000, 1010}}))
	if got := serverP99(before, after)[route]; got[0] < 1e300 || got[1] != 10 {
		t.Errorf("all past the last bound: %v, want +Inf over 10", got)
	}
}
