package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/plasmactl/plasma-node/pxe/backend"
	"github.com/plasmactl/plasma-node/pxe/registrar"
)

// defaultReinstallWait bounds reinstall --wait: a server's firmware, the
// installer and its reboot.
const defaultReinstallWait = 45 * time.Minute

// waitInstall prints each step of name's install on out until it is
// installed, timeout passes or ctx ends; nothing is powered off.
func waitInstall(ctx context.Context, w *registrar.InstallWatch, out io.Writer, name string, timeout time.Duration) error {
	res, err := w.Wait(ctx, timeout, func(e backend.Event) {
		fmt.Fprintf(out, "%s  %-20s %-9s %s\n", e.Time.Local().Format("15:04:05"), name, e.Kind, e.Detail)
	})
	switch {
	case err == nil:
		fmt.Fprintf(out, "Machine %s: %s (%s)\n", name, strings.Join(res.Steps, " > "), res.Took.Round(time.Second))
		return nil
	case errors.Is(err, registrar.ErrEventStream):
		return fmt.Errorf("reinstall %s: %w", name, err)
	}
	fmt.Fprintf(out, "Machine %s: %s\n", name, strings.Join(res.Steps, " > "))
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reinstall %s: not installed within %s (nothing was powered off)", name, timeout)
	}
	return fmt.Errorf("reinstall %s: stopped waiting; nothing was powered off", name)
}
