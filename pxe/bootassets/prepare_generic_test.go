package bootassets

import (
	"context"
	"strings"
	"testing"
)

// TestPrepareStagesAGenericISO: Generic bakes a mode file with mode http
// and no URL or fingerprint, as prepare-iso --fetch-from http without
// --url writes it, into a release beside the baked one.
func TestPrepareStagesAGenericISO(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	iso := buildISO(t, proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))), isoOpts{name: "proxmox-ve_9.2-1.iso"})
	state := t.TempDir()
	baked, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, AnswerURL: "http://192.0.2.10:8090/answer", AnswerAuthToken: AnswerAuthTokenNone})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, Generic: true, AnswerAuthToken: AnswerAuthTokenNone})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name != "9.2-1-generic" || baked.Name != "9.2-1" {
		t.Errorf("releases %q and %q; want 9.2-1-generic beside 9.2-1", rel.Name, baked.Name)
	}
	if !rel.Generic() || baked.Generic() {
		t.Errorf("Generic() = %v for the generic release, %v for the baked one", rel.Generic(), baked.Generic())
	}
	golden(t, "mode-9.2-generic.toml", readISOPath(t, rel.Path(AssetISO), isoModeFile))
	names, err := StagedReleases(context.Background(), state)
	if err != nil || strings.Join(names, " ") != "9.2-1 9.2-1-generic" {
		t.Errorf("staged %v, %v; want both releases", names, err)
	}
	// The generic ISO keeps a token as a baked one does (9.2 sends it).
	tok, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: state, Generic: true, Release: "tok", AnswerAuthToken: AnswerAuthTokenAuto})
	if err != nil {
		t.Fatal(err)
	}
	if !tok.AnswerAuth || tok.AnswerURL != "" {
		t.Errorf("generic with a token: answer auth %v, URL %q; want a token and no URL", tok.AnswerAuth, tok.AnswerURL)
	}
}

func TestPrepareRefusesGenericWithAURL(t *testing.T) {
	tests := map[string]struct {
		opts PrepareOptions
		want string
	}{
		"generic with an answer URL": {PrepareOptions{ISO: "x.iso", StateDir: "s", Generic: true, AnswerURL: "http://h/a"}, "a generic ISO has no answer URL"},
		"generic with a fingerprint": {PrepareOptions{ISO: "x.iso", StateDir: "s", Generic: true, CertFingerprint: testFingerprint}, "DHCP option 251"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
