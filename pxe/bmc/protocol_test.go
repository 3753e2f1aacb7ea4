package bmc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/bmc"
)

// TestProtocolChosenOnce: the protocol table answers Parse, CheckSettings
// and Open alike; an IPMI endpoint opens only with an IPMI driver given.
func TestProtocolChosenOnce(t *testing.T) {
	for _, tc := range []struct {
		url     string
		o       bmc.Options
		wantErr string
	}{
		{"ipmi://bmc", bmc.Options{CipherSuite: 17}, ""},
		{"ipmi://bmc", bmc.Options{Fingerprint: "ab"}, "Redfish settings"},
		{"redfish://bmc/1", bmc.Options{Session: true}, ""},
		{"redfish://bmc", bmc.Options{Privilege: "operator"}, "IPMI settings"},
	} {
		e, err := bmc.Parse(tc.url)
		if err != nil {
			t.Fatalf("bmc.Parse(%s): %v", tc.url, err)
		}
		err = bmc.CheckSettings(e, tc.o)
		if (tc.wantErr == "") != (err == nil) || (err != nil && (!errors.Is(err, bmc.ErrInvalidEndpoint) || !strings.Contains(err.Error(), tc.wantErr))) {
			t.Errorf("bmc.CheckSettings(%s, %+v) = %v, want %q", tc.url, tc.o, err, tc.wantErr)
		}
	}
	if _, err := bmc.Parse("telnet://bmc"); !errors.Is(err, bmc.ErrInvalidEndpoint) {
		t.Errorf("bmc.Parse of an unknown scheme = %v", err)
	}
	e, _ := bmc.Parse("ipmi://bmc")
	if _, err := bmc.Open(e, bmc.Credentials{}, bmc.Options{}, bmc.Drivers{}); !errors.Is(err, bmc.ErrInvalidEndpoint) || !strings.Contains(err.Error(), "no IPMI driver") {
		t.Errorf("bmc.Open of IPMI without its driver = %v", err)
	}
	opened := false
	if _, err := bmc.Open(e, bmc.Credentials{}, bmc.Options{}, bmc.Drivers{IPMI: func(bmc.Endpoint, bmc.Credentials, bmc.Options) (bmc.Controller, error) {
		opened = true
		return nil, nil
	}}); err != nil || !opened {
		t.Errorf("bmc.Open of IPMI did not use the driver given: %v", err)
	}
}
