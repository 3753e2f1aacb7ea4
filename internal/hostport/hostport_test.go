package hostport

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/internal/badinput"
)

func TestCheckListen(t *testing.T) {
	for _, good := range []string{":8090", "0.0.0.0:8090", "10.0.0.2:69", "[::1]:8090", "localhost:0", "prov.example.:8091", "[fe80::1%eth0]:8090"} {
		if err := CheckListen(good); err != nil {
			t.Errorf("CheckListen(%q) = %v", good, err)
		}
	}
	for _, bad := range badinput.ListenAddrs() {
		err := CheckListen(bad.Value)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), bad.Want) || !strings.HasSuffix(err.Error(), "("+ListenRule+")") {
			t.Errorf("CheckListen(%q) = %v; want ErrInvalid saying %q and the rule", bad.Value, err, bad.Want)
		}
	}
}

func TestCheckURLHost(t *testing.T) {
	for _, good := range []string{"prov.example", "prov.example:8091", "10.0.0.2", "[::1]:8091", "[::1]"} {
		if err := CheckURLHost(good); err != nil {
			t.Errorf("CheckURLHost(%q) = %v", good, err)
		}
	}
	for bad, want := range map[string]string{"999.0.0.1:8091": "not an IP address", "x:99999": `port "99999"`, "x:0": `port "0"`, "a b": "neither", "": "no host"} {
		if err := CheckURLHost(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURLHost(%q) = %v; want %q", bad, err, want)
		}
	}
}

func TestCheckAdvertised(t *testing.T) {
	for _, good := range []string{"10.0.0.2", "169.254.0.2", "2001:db8::2", "fd00::2", "prov.example", "::ffff:10.0.0.2"} {
		if err := CheckAdvertised(good); err != nil {
			t.Errorf("CheckAdvertised(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"fe80::1", "fe80::1%eth0", "FE80::AB:1%25eth0", "febf:ffff::1"} {
		err := CheckAdvertised(bad)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "link-local") || !strings.HasSuffix(err.Error(), "("+AdvertiseRule+")") {
			t.Errorf("CheckAdvertised(%q) = %v; want ErrInvalid saying link-local and the rule", bad, err)
		}
	}
}
