package nodecmd

import (
	"errors"
	"fmt"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/internal/cli"
)

// CheckBoot settles provision's --boot, --wait and --timeout: --wait
// defaults to --boot when waitGiven is false, --wait needs --boot, and
// the timeout must be positive (usage errors otherwise).
func CheckBoot(o *plasmanode.ProvisionOptions, waitGiven bool) error {
	if !waitGiven {
		o.Wait = o.Boot
	}
	if o.Wait && !o.Boot {
		return cli.Usage(errors.New("--wait follows the machines --boot starts; add --boot"))
	}
	if o.WaitTimeout <= 0 {
		return cli.Usage(fmt.Errorf("--timeout %s: want a positive duration such as 45m", o.WaitTimeout))
	}
	return nil
}
