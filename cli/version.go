package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// BuildInfo is what a binary says of itself: gnomon's version, the
// commit it was built from (with "+dirty" when the checkout had changes)
// and when, and the Go that built it.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Time    string `json:"commit_time,omitempty"`
	Go      string `json:"go"`
}

// Build reads the build's information from the binary.
func Build() BuildInfo {
	b := BuildInfo{Version: Version, Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Commit != "" {
		b.Commit += "+dirty"
	}
	return b
}

// String is the one line `gnomon version` prints.
func (b BuildInfo) String() string {
	s := "gnomon " + b.Version
	if b.Commit != "" {
		s += ", commit " + b.Commit
	}
	if b.Time != "" {
		s += " of " + b.Time
	}
	return s + ", " + b.Go
}

func versionCmd(env *Env) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "version",
		Short: "print gnomon's version, the commit it was built from and the Go that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := Build()
			if out.structured() {
				return out.write(env.Stdout, b)
			}
			fmt.Fprintln(env.Stdout, b)
			return nil
		},
	}
	out = addOutput(c, "version, commit, commit_time, go")
	return c
}
