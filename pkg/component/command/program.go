package command

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// Main runs cmd, a program's root command, until SIGTERM (the kubelet
// stopping the Pod) or SIGINT cancels its context, and exits with Run's
// code.
func Main(cmd *cobra.Command) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	cmd.SetContext(ctx)
	code := Run(cmd)
	stop()
	os.Exit(code)
}

// Serve is the RunE of a program's root command, the long-running
// program itself: each step of validate in turn (complete the flags,
// check them, apply the logging flags), a usage error at the first that
// fails, then run until the command's context ends; a failure of run is
// logged and exits 1.
func Serve(name string, run func(context.Context) error, validate ...func() error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		for _, step := range validate {
			if err := step(); err != nil {
				return Exit(UsageCode, fmt.Errorf("%s: %w", name, err))
			}
		}
		logger := klog.FromContext(cmd.Context())
		if err := run(cmd.Context()); err != nil {
			logger.Error(err, name+" failed")
			return Exit(1, nil)
		}
		logger.Info("Shut down cleanly")
		return nil
	}
}
