package registry

import (
	"errors"
	"testing"
)

func TestMatch(t *testing.T) {
	pinned3 := Registration{Name: "tappaas3", MACs: []string{"aa:bb:cc:dd:ee:03"}}
	pinned4 := Registration{Name: "tappaas4", MACs: []string{"aa:bb:cc:dd:ee:04"}}
	unpinned := Registration{Name: "tappaas5"}
	bySerial := Registration{Name: "tappaas6", Serial: "SN-1234"}
	byUUID := Registration{Name: "tappaas7", UUID: "bcf43ddf-6d92-4ace-b93f-76f71ffe4495"}
	placeholderSerial := Registration{Name: "tappaas8", Serial: "To Be Filled By O.E.M."} // never written by Put

	tests := map[string]struct {
		pending    []Registration
		macs       []string
		serial     string
		uuid       string
		want       string // "" for no match
		wantReason MatchReason
	}{
		// TAPPaaS TestMatching.test_mac_hit_wins_over_fallback
		"a posted MAC picks its registration among two pinned ones": {
			pending: []Registration{pinned3, pinned4}, macs: []string{"AA-BB-CC-DD-EE-04"}, want: "tappaas4", wantReason: MatchMAC,
		},
		// TAPPaaS TestMatching.test_single_pending_fallback
		"the only pending registration, unpinned, answers any machine": {
			pending: []Registration{unpinned}, macs: []string{"11:22:33:44:55:66"}, want: "tappaas5", wantReason: MatchOnlyPending,
		},
		// TAPPaaS TestMatching.test_no_match_with_multiple_pending_and_no_mac_hit
		"no MAC hit among several pending registrations answers nothing": {
			pending: []Registration{pinned3, pinned4}, macs: []string{"11:22:33:44:55:66"},
		},
		// TAPPaaS TestMatching.test_no_match_when_nothing_pending
		"nothing pending answers nothing": {
			macs: []string{"aa:bb:cc:dd:ee:03"},
		},
		// TAPPaaS TestMatching.test_unparsable_posted_macs_are_ignored
		"unparsable posted MACs are ignored and two pending answer nothing": {
			pending: []Registration{pinned3, unpinned}, macs: []string{"garbage", "", "aa:bb"},
		},
		"an unpinned registration beside a pinned one does not answer a stranger": {
			pending: []Registration{unpinned, pinned3}, macs: []string{"11:22:33:44:55:66"},
		},
		"a 9.2 installer's upper-case MAC matches": {
			pending: []Registration{pinned3, pinned4}, macs: []string{"AA:BB:CC:DD:EE:03"}, want: "tappaas3", wantReason: MatchMAC,
		},
		"a MAC hit wins even when an unpinned registration is pending": {
			pending: []Registration{unpinned, pinned4}, macs: []string{"eth0", "aa:bb:cc:dd:ee:04"}, want: "tappaas4", wantReason: MatchMAC,
		},
		"the first in name order wins when two registrations pin one MAC": {
			pending: []Registration{{Name: "zeta", MACs: []string{"aa:bb:cc:dd:ee:03"}}, {Name: "alpha", MACs: []string{"aa:bb:cc:dd:ee:03"}}},
			macs:    []string{"aa:bb:cc:dd:ee:03"}, want: "alpha", wantReason: MatchMAC,
		},
		"a pinned serial matches without case": {
			pending: []Registration{pinned3, bySerial}, serial: " sn-1234 ", want: "tappaas6", wantReason: MatchSerial,
		},
		"a pinned UUID matches without case": {
			pending: []Registration{pinned3, byUUID}, uuid: "BCF43DDF-6D92-4ACE-B93F-76F71FFE4495", want: "tappaas7", wantReason: MatchUUID,
		},
		"a serial and a MAC of different registrations pick the first by name": {
			pending: []Registration{pinned4, bySerial}, macs: []string{"aa:bb:cc:dd:ee:04"}, serial: "SN-1234", want: "tappaas4", wantReason: MatchMAC,
		},
		// Stricter than TAPPaaS B.5 rule 2, which would answer here with a warning.
		"the only pending registration does not answer when it pins other MACs": {
			pending: []Registration{pinned3}, macs: []string{"11:22:33:44:55:66"},
		},
		"the only pending registration does not answer when it pins another serial": {
			pending: []Registration{bySerial}, serial: "SN-9999",
		},
		"the only pending registration does not answer when it pins another UUID": {
			pending: []Registration{byUUID}, uuid: "11111111-2222-3333-4444-555555555555",
		},
		"a posted placeholder serial never matches": {
			pending: []Registration{placeholderSerial, pinned3}, serial: "to be filled by o.e.m.",
		},
		"an empty posted serial does not match an empty pin": {
			pending: []Registration{pinned3, unpinned}, serial: "", uuid: "",
		},
		"a posted all-zero UUID never matches": {
			pending: []Registration{{Name: "z", UUID: "00000000-0000-0000-0000-000000000000"}, pinned3},
			uuid:    "00000000-0000-0000-0000-000000000000",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, reason, err := Match(tc.pending, tc.macs, tc.serial, tc.uuid)
			if tc.want == "" {
				if !errors.Is(err, ErrNoMatch) {
					t.Fatalf("Match = %q (%s), %v; want ErrNoMatch", got.Name, reason, err)
				}
				if got.Name != "" || reason != "" {
					t.Errorf("Match returned %q, %q with its error", got.Name, reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("Match: %v", err)
			}
			if got.Name != tc.want || reason != tc.wantReason {
				t.Errorf("Match = %q (%s), want %q (%s)", got.Name, reason, tc.want, tc.wantReason)
			}
		})
	}
}

func TestMatchDoesNotReorderItsInput(t *testing.T) {
	pending := []Registration{{Name: "b", MACs: []string{"aa:bb:cc:dd:ee:01"}}, {Name: "a"}}
	if _, _, err := Match(pending, nil, "", ""); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("Match = %v, want ErrNoMatch", err)
	}
	if pending[0].Name != "b" {
		t.Errorf("Match sorted the caller's slice")
	}
}
