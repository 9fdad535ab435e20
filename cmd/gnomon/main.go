// Command gnomon is the gnomon scheduler: the server and its command line.
// Called through a link named schd_def, schd_event, schd_task, schd_status
// or schd_runs it behaves as that command.
//
// For the benchmarks: with GNOMON_CPUPROFILE set to a file name, the
// process writes a CPU profile there when it exits normally; with
// GNOMON_MEMPROFILE, a profile of every allocation it made.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	_ "time/tzdata" // time zones for hosts without a zoneinfo database

	"github.com/gnomon-sched/gnomon/cli"
	"github.com/gnomon-sched/gnomon/executor"
)

func main() {
	executor.MaybeSupervise()
	os.Exit(profiled(func() int {
		return cli.Run(context.Background(), os.Args, cli.Env{Stdout: os.Stdout, Stderr: os.Stderr})
	}))
}

// profiled runs run with the profiles the environment asks for.
func profiled(run func() int) int {
	cpu, mem := os.Getenv("GNOMON_CPUPROFILE"), os.Getenv("GNOMON_MEMPROFILE")
	if mem != "" {
		runtime.MemProfileRate = 4096
	}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ERROR GNOMON_CPUPROFILE:", err)
			return 1
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	code := run()
	if mem != "" {
		f, err := os.Create(mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ERROR GNOMON_MEMPROFILE:", err)
			return 1
		}
	}
	return code
}
