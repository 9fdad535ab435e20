// Command gnomon is the gnomon scheduler: the server and its command line.
// Called through a link named schd_def, schd_event, schd_task, schd_status
// or schd_runs it behaves as that command.
//
// With GNOMON_CPUPROFILE set to a file name, the process writes a CPU
// profile there when it exits normally (for the benchmarks).
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	_ "time/tzdata" // time zones for hosts without a zoneinfo database

	"github.com/gnomon-sched/gnomon/cli"
	"github.com/gnomon-sched/gnomon/executor"
)

func main() {
	executor.MaybeSupervise()
	if p := os.Getenv("GNOMON_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ERROR GNOMON_CPUPROFILE:", err)
			os.Exit(1)
		}
		code := cli.Run(context.Background(), os.Args, cli.Env{Stdout: os.Stdout, Stderr: os.Stderr})
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(cli.Run(context.Background(), os.Args, cli.Env{Stdout: os.Stdout, Stderr: os.Stderr}))
}
