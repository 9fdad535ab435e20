package web

import (
	"slices"
	"testing"

	"github.com/gnomon-sched/gnomon/auth"
)

// Every entry of the navigation has a name and an address, for every
// role and with or without the tokens page.
func TestSectionsAreNamed(t *testing.T) {
	t.Parallel()
	for _, role := range auth.Roles {
		for _, tokens := range []bool{false, true} {
			v := &view{Identity: &auth.Identity{Name: "x", Role: role}, tokens: tokens, cluster: tokens}
			for _, s := range v.Sections() {
				if e := sections[s]; e.name == "" || e.url == "" {
					t.Errorf("%s (tokens page %v): section %q has no entry", role, tokens, s)
				}
			}
			if got := slices.Contains(v.Sections(), "tokens"); got != (tokens && role == auth.Admin) {
				t.Errorf("%s (tokens page %v): tokens in the navigation: %v", role, tokens, got)
			}
		}
	}
}
