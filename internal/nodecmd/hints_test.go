package nodecmd

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	plasmanode "github.com/plasmactl/plasma-node"
	"github.com/plasmactl/plasma-node/ipam"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// TestLibraryErrorsGetFlagHints checks the one place the library's words
// for options and consents become the command line's flags.
func TestLibraryErrorsGetFlagHints(t *testing.T) {
	provision := command{platform: "demo", approve: "--auto-approve"}
	badIP := &plasmanode.OptionError{Field: "PrivateIP", Value: "192.168.0.300",
		Err: fmt.Errorf("%w: want an IPv4 or IPv6 address such as 192.168.1.10", plasmanode.ErrInvalidAddress)}
	conflict := func(field, words, want, have string) error {
		return &plasmanode.OptionError{Field: field, Value: want,
			Err: fmt.Errorf("platform demo exists with %s %q: %w (edit platform.yaml to change it)", words, have, plasmanode.ErrConflict)}
	}
	del := []tofu.Change{{Address: "hcloud_server.demo_web_002"}}
	tests := map[string]struct {
		err       error
		cmd       command
		want      string
		wantIs    error
		wantRC    int
		unchanged bool // the very error comes back
	}{
		"a bad address names its flag": {err: badIP, cmd: command{platform: "demo"},
			want: `--private-ip "192.168.0.300": invalid address: want an IPv4 or IPv6 address such as 192.168.1.10`, wantIs: plasmanode.ErrInvalidAddress, wantRC: 2},
		"an address in use, wrapped, names its flag in place": {
			err:  fmt.Errorf("register: %w", &plasmanode.OptionError{Field: "PublicIP", Err: fmt.Errorf("51.159.0.1 is already used by node n1: %w", ipam.ErrInUse)}),
			want: "register: --public-ip: 51.159.0.1 is already used by node n1: address already used", wantIs: ipam.ErrInUse, wantRC: 2},
		"each conflicting setting names its flag": {err: errors.Join(conflict("Provider", "provider", "ovh", "manual"), conflict("Domain", "domain", "b.example", "a.example")),
			want: "--provider \"ovh\": platform demo exists with provider \"manual\": conflicting settings (edit platform.yaml to change it)\n" +
				"--domain \"b.example\": platform demo exists with domain \"a.example\": conflicting settings (edit platform.yaml to change it)",
			wantIs: plasmanode.ErrConflict, wantRC: 2},
		"a value that cannot be guessed asks for its flag": {
			err:  &plasmanode.OptionNeededError{Field: "Hostname", Err: fmt.Errorf("server 4711 has no display name that is a hostname: %w", errors.New(`hostname "A_b": invalid name`))},
			want: `server 4711 has no display name that is a hostname: hostname "A_b": invalid name; pass --hostname`, wantRC: 2},
		"a planned delete under auto-approval alone names --allow-delete": {cmd: provision,
			err: &plasmanode.PlanRefusedError{Command: "provision", Reason: plasmanode.RefusedDelete, Deletes: del},
			want: "plasma-node provision refused to delete servers under --auto-approve alone:\n  hcloud_server.demo_web_002 (action: delete)\n" +
				"Review the plan interactively (typed \"yes\"), or add --allow-delete beside --auto-approve: destructive plan refused",
			wantIs: plasmanode.ErrDestructivePlan, wantRC: 1},
		"a destructive update under auto-approval names --allow-destructive-update": {cmd: provision,
			err: &plasmanode.PlanRefusedError{Command: "join", Reason: plasmanode.RefusedDestructiveUpdate,
				DestructiveUpdates: []tofu.Change{{Address: "ovh_dedicated_server.demo_web_001", DestructiveAttrs: []string{"os"}}}},
			want: "plasma-node join refused to apply destructive updates under --auto-approve (they reinstall or wipe servers):\n" +
				"  ovh_dedicated_server.demo_web_001 (os)\nReview the plan interactively, or add --allow-destructive-update: destructive plan refused",
			wantIs: plasmanode.ErrDestructivePlan, wantRC: 1},
		"a plan that destroys servers names --server-id and destroy": {cmd: provision,
			err: &plasmanode.PlanRefusedError{Command: "provision", Reason: plasmanode.RefusedDestroy, Deletes: del, StatePath: "/p/terraform.tfstate",
				Replacements: []tofu.Change{{Address: "hcloud_server.demo_web_003"}}},
			want: "plasma-node provision refused to apply this plan: it would destroy servers:\n  hcloud_server.demo_web_002 (action: delete)\n" +
				"  hcloud_server.demo_web_003 (action: replace)\nLikely causes: a wrong --server-id or a lowered count, stale state at /p/terraform.tfstate, " +
				"or a configuration bug.\nTo remove servers on purpose, use plasma-node destroy: destructive plan refused",
			wantIs: plasmanode.ErrDestructivePlan, wantRC: 1},
		"no one to ask in provision names --auto-approve": {cmd: provision,
			err:    fmt.Errorf("plan needs confirmation: %w: no one to ask and no prior approval", plasmanode.ErrNoPrompter),
			want:   "plan needs confirmation: confirmation needed: no one to ask and no prior approval; pass --auto-approve or run on a terminal",
			wantIs: plasmanode.ErrNoPrompter, wantRC: 1},
		"no one to ask in destroy names --force": {cmd: command{platform: "demo", approve: "--force"},
			err:    fmt.Errorf("plan needs confirmation: %w: no one to ask and no prior approval", plasmanode.ErrNoPrompter),
			want:   "plan needs confirmation: confirmation needed: no one to ask and no prior approval; pass --force or run on a terminal",
			wantIs: plasmanode.ErrNoPrompter, wantRC: 1},
		"a manual platform points to add --hostname": {cmd: command{platform: "hand"},
			err:    fmt.Errorf("platform hand uses the manual provider: %w: nothing to provision", providers.ErrNoInfrastructure),
			want:   "platform hand uses the manual provider: no infrastructure: nothing to provision; register machines with plasma-node add hand --hostname H",
			wantIs: providers.ErrNoInfrastructure, wantRC: 1},
		"a bare-metal join points to provision --hardware": {cmd: provision,
			err: fmt.Errorf("configure pxe: provider pxe: %w: bare-metal nodes are node-provisioner registrations", providers.ErrDirect),
			want: "configure pxe: provider pxe: provider is not OpenTofu-backed: bare-metal nodes are node-provisioner registrations; " +
				"raise a pool's count with plasma-node provision and give the machines with --hardware",
			wantIs: providers.ErrDirect, wantRC: 1},
		"no pools points to -z": {cmd: provision,
			err:    fmt.Errorf("platform demo: %w: give zone:type:count specs, or pools in platform.yaml", plasmanode.ErrNoPools),
			want:   "platform demo: no pools configured: give zone:type:count specs, or pools in platform.yaml (run: plasma-node provision demo -z zone:type:count)",
			wantIs: plasmanode.ErrNoPools, wantRC: 1},
		"an unknown provider says it in domain words already": {cmd: provision,
			err:  fmt.Errorf("platform demo: %w", &providers.UnknownError{Name: "gcp", Known: []string{"hetzner", "manual"}}),
			want: `platform demo: provider "gcp": unknown provider (known: hetzner, manual)`, wantIs: providers.ErrUnknown, wantRC: 2, unchanged: true},
		"an error without words of its own is left alone": {cmd: provision, err: errors.New("tofu apply: exit 1"),
			want: "tofu apply: exit 1", wantRC: 1, unchanged: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := withHints(tc.err, tc.cmd)
			if diff := cmp.Diff(tc.want, got.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if tc.wantIs != nil && !errors.Is(got, tc.wantIs) {
				t.Errorf("errors.Is(%v) = false after the hints", tc.wantIs)
			}
			if rc := ExitCode(got); rc != tc.wantRC {
				t.Errorf("ExitCode() = %d, want %d", rc, tc.wantRC)
			}
			if tc.unchanged && got != tc.err {
				t.Errorf("withHints returned a new error %#v, want the error as it was", got)
			}
		})
	}
	if withHints(nil, provision) != nil {
		t.Error("withHints(nil) is not nil")
	}
}
