// Command gnomon is the gnomon scheduler: the server and its command line.
// Called through a link named schd_def, schd_event, schd_task, schd_status
// or schd_runs it behaves as that command.
package main

import (
	"context"
	"os"
	_ "time/tzdata" // time zones for hosts without a zoneinfo database

	"github.com/gnomon-sched/gnomon/cli"
	"github.com/gnomon-sched/gnomon/executor"
)

func main() {
	executor.MaybeSupervise()
	os.Exit(cli.Run(context.Background(), os.Args, cli.Env{Stdout: os.Stdout, Stderr: os.Stderr}))
}
