package bootassets

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareFindsTheRelease(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	initrdWithout := compress(t, "gzip", newcArchive(t, map[string][]byte{"init": testInit(t)}))
	tests := map[string]struct {
		files    func() map[string][]byte
		o        isoOpts
		release  string
		want     string
		wantWarn string
	}{
		"from the ISO's .cd-info": {
			files: func() map[string][]byte { return proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))) },
			want:  "9.2-1",
		},
		"from the initrd's .cd-info when the ISO has none": {
			files: func() map[string][]byte {
				f := proxmoxLayout(t, testInitrd(t, "gzip", testInit(t)))
				delete(f, ".cd-info")
				return f
			},
			want: "9.2-1",
		},
		"from Joliet names, without Rock Ridge": {
			files: func() map[string][]byte { return proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))) },
			o:     isoOpts{noRockRidge: true},
			want:  "9.2-1",
		},
		"from the file name when nothing else says": {
			files: func() map[string][]byte {
				f := proxmoxLayout(t, initrdWithout)
				delete(f, ".cd-info")
				return f
			},
			o:    isoOpts{name: "proxmox-ve_8.4-1-auto-from-http.iso"},
			want: "8.4-1", wantWarn: "taken from the file name",
		},
		"from the option when nothing else says": {
			files: func() map[string][]byte {
				f := proxmoxLayout(t, initrdWithout)
				delete(f, ".cd-info")
				return f
			},
			release: "lab", want: "lab",
		},
		"from the option over everything": {
			files:   func() map[string][]byte { return proxmoxLayout(t, testInitrd(t, "gzip", testInit(t))) },
			release: "lab-9.2", want: "lab-9.2",
		},
		"a Backup Server release is prefixed with its product": {
			files: func() map[string][]byte {
				f := proxmoxLayout(t, initrdWithout)
				f[".cd-info"] = []byte("PRODUCT='pbs'\nPRODUCTLONG='Proxmox Backup Server'\nRELEASE='4.1'\nISORELEASE='2'\n")
				return f
			},
			want: "pbs-4.1-2",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			iso := buildISO(t, tc.files(), tc.o)
			rel, err := Prepare(context.Background(), PrepareOptions{ISO: iso, StateDir: t.TempDir(), Release: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			if rel.Name != tc.want || filepath.Base(rel.Dir) != tc.want {
				t.Errorf("release %q in %s, want %q", rel.Name, rel.Dir, tc.want)
			}
			if tc.wantWarn != "" && !strings.Contains(strings.Join(rel.Warnings, "\n"), tc.wantWarn) {
				t.Errorf("warnings %q, want one saying %q", rel.Warnings, tc.wantWarn)
			}
			if !bytes.Equal(readFile(t, rel.Path(AssetKernel)), prepTestKernel) {
				t.Error("kernel not extracted byte for byte")
			}
		})
	}
}

func TestPrepareAsksForTheReleaseWhenNothingSays(t *testing.T) {
	needTool(t, "xorriso", "xorriso")
	f := proxmoxLayout(t, compress(t, "gzip", newcArchive(t, map[string][]byte{"init": testInit(t)})))
	delete(f, ".cd-info")
	_, err := Prepare(context.Background(), PrepareOptions{ISO: buildISO(t, f, isoOpts{name: "pve.iso"}), StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot tell the release") || !strings.Contains(err.Error(), "release option") {
		t.Errorf("err = %v, want a request to name the release", err)
	}
}
