package job

import (
	"strconv"
	"strings"
)

// Resource is the type of a resource shared between tasks (insert_resource):
// a number of units (Extra.Amount) that runs of the tasks naming it take
// while they run. It never runs.
const Resource Type = "resource"

// ClaimMode is how a run takes a resource beyond a number of units.
type ClaimMode string

// Claim modes. The empty mode takes Units units.
const (
	// ClaimExclusive takes the whole resource: no other run holds any of
	// it meanwhile (a control resource's exclusive lock).
	ClaimExclusive ClaimMode = "exclusive"
	// ClaimShared takes no unit but excludes an exclusive holder: any
	// number of shared holders run together (a shared lock).
	ClaimShared ClaimMode = "shared"
)

// Claim is what a run of a task takes of one resource while it runs.
type Claim struct {
	Resource string    `json:"resource"`
	Units    int       `json:"units,omitempty"`
	Mode     ClaimMode `json:"mode,omitempty"`
}

// String writes the claim as the resources attribute does: NAME=N,
// NAME=exclusive or NAME=shared.
func (c Claim) String() string {
	if c.Mode != "" {
		return c.Resource + "=" + string(c.Mode)
	}
	return c.Resource + "=" + strconv.Itoa(c.Units)
}

// FormatClaims writes claims as the resources attribute holds them.
func FormatClaims(cs []Claim) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}
