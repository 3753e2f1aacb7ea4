package plasmanode_test

import (
	"testing"
)

func TestMatches(t *testing.T) {
	tests := map[string]struct {
		key, path string
		want      bool
	}{
		"a key matches its own path":              {"github.com/jackc/pgx", "github.com/jackc/pgx", true},
		"a plain key does not match below it":     {mod + "/pxe", mod + "/pxe/client", false},
		"a tree key matches its root":             {"github.com/pin/tftp/...", "github.com/pin/tftp", true},
		"a tree key matches the paths under it":   {"github.com/pin/tftp/...", "github.com/pin/tftp/v3", true},
		"a tree key does not match a longer name": {"github.com/pin/tftp/...", "github.com/pin/tftpx", false},
		"a key ending in a slash needs a subpath": {mod + "/", mod, false},
		"a key ending in a slash matches below":   {mod + "/", mod + "/answer", true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := matches(tt.key, tt.path); got != tt.want {
				t.Errorf("matches(%q, %q) = %v, want %v", tt.key, tt.path, got, tt.want)
			}
		})
	}
}

// TestCheckerFindsAKnownBadDep shows the checker fails on a dependency that
// is there: the DHCP server links insomniacslk/dhcp.
func TestCheckerFindsAKnownBadDep(t *testing.T) {
	RequireGo(t)
	c := DepChecker{
		Pkgs:    []string{"./pxe/dhcpserver"},
		GOOS:    "linux",
		GOARCH:  "amd64",
		BadDeps: map[string]string{"github.com/insomniacslk/dhcp/...": "the DHCP stack"},
	}
	vs, err := c.Violations()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no violation for insomniacslk/dhcp in pxe/dhcpserver")
	}
	v := vs[0]
	if v.Reason != "the DHCP stack" {
		t.Errorf("reason %q", v.Reason)
	}
	if len(v.Chain) < 2 || v.Chain[0] != mod+"/pxe/dhcpserver" || v.Chain[len(v.Chain)-1] != v.Dep {
		t.Errorf("chain %v does not lead from pxe/dhcpserver to %s", v.Chain, v.Dep)
	}
	t.Logf("found %s", v)

	// The same rule, known to be broken, logs instead of failing.
	c.Known = "a test"
	ft := &fakeT{TB: t}
	c.Check(ft)
	if ft.failed {
		t.Error("a known rule failed the test")
	}
	if !ft.logged {
		t.Error("a known rule logged nothing")
	}
}

func TestCheckerRules(t *testing.T) {
	RequireGo(t)
	tests := map[string]struct {
		c    DepChecker
		want bool // whether a violation is found
	}{
		"the answer format links only itself of the module": {
			c:    DepChecker{Pkgs: []string{"./answer"}, BadDeps: map[string]string{mod + "/": "module"}, Allow: []string{mod + "/answer/..."}},
			want: false,
		},
		"without the allowance the answer format links a module package": {
			c:    DepChecker{Pkgs: []string{"./pxe/dhcpserver"}, BadDeps: map[string]string{mod + "/": "module"}},
			want: true,
		},
		"OnlyAllowed refuses an unnamed third-party package": {
			c:    DepChecker{Pkgs: []string{"./pxe/dhcpserver"}, OnlyAllowed: []string{mod}},
			want: true,
		},
		"OnlyAllowed ignores the standard library": {
			c:    DepChecker{Pkgs: []string{"./internal/atomicfile"}, OnlyAllowed: []string{}},
			want: false,
		},
		"Direct sees only what a package imports itself": {
			c:    DepChecker{Pkgs: []string{"./pxe/dhcpserver"}, Direct: true, BadDeps: map[string]string{"github.com/insomniacslk/dhcp/internal/xsocket": "linked, not imported"}},
			want: false,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			vs, err := tt.c.Violations()
			if err != nil {
				t.Fatal(err)
			}
			if got := len(vs) > 0; got != tt.want {
				t.Errorf("violations %v, want some: %v", vs, tt.want)
			}
		})
	}
}

type fakeT struct {
	testing.TB
	failed, logged bool
}

func (f *fakeT) Helper()                          {}
func (f *fakeT) Errorf(string, ...any)            { f.failed = true }
func (f *fakeT) Fatal(...any)                     { f.failed = true }
func (f *fakeT) Logf(string, ...any)              { f.logged = true }
func (f *fakeT) Skipf(format string, args ...any) { f.TB.Skipf(format, args...) }
