package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/internal/smtptest"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// devCmd groups the tools for trying gnomon out on one machine.
func devCmd(env *Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "dev",
		Short: "tools for trying gnomon out on one machine: smtp-sink",
	}
	var listen string
	sink := &cobra.Command{
		Use:   "smtp-sink [--listen ADDR]",
		Short: "run an SMTP server that accepts every mail and prints a line for each, until interrupted",
		Long: `smtp-sink runs, on this machine, the SMTP server the test suite mails its
alerts to: it accepts every message, keeps none, and prints one line for
each on stdout (the sender, the recipients and the subject), until it is
interrupted (Ctrl-C, SIGTERM). Point a server's --smtp-addr at it to see
the alerts of a tour without a mail server of your own. It is for trying
gnomon out: it has no authentication and no TLS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return smtpSink(ctx, env, listen)
		},
	}
	sink.Flags().StringVar(&listen, "listen", "127.0.0.1:2525", "the address to listen on")
	c.AddCommand(sink)
	return c
}

// smtpSink runs the SMTP sink on listen until ctx is done.
func smtpSink(ctx context.Context, env *Env, listen string) error {
	var mu sync.Mutex // messages come from the server's goroutines
	mb, err := smtptest.Listen(listen, func(m smtptest.Message) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(env.Stdout, "mail from %s to %s: %s\n", termsafe.String(m.From), safeList(m.To, ", "), termsafe.String(m.Subject))
	})
	if err != nil {
		return &exitError{code: ExitRejected, msg: fmt.Sprintf("smtp-sink: %v (is another server on %s? give --listen another address)", err, listen)}
	}
	fmt.Fprintf(env.Stderr, "smtp-sink: listening on %s (Ctrl-C stops it)\n", mb.Addr)
	<-ctx.Done()
	mb.Close()
	mu.Lock() // a line being printed is printed whole
	defer mu.Unlock()
	return nil
}
