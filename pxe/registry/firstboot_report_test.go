package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFirstBootReport(t *testing.T) {
	tests := map[string]struct {
		body    string
		want    FirstBootReport
		summary string
		bad     bool
	}{
		"an empty report is a node without pools": {body: "", summary: "no data pools"},
		"a reinstall keeping data imports the pool": {
			body:    "pool tank imported\npool fast created\n",
			want:    FirstBootReport{{Pool: "tank", Outcome: PoolImported}, {Pool: "fast", Outcome: PoolCreated}},
			summary: "pool tank found and imported, its data kept; pool fast created",
		},
		"a reinstall wiping data says the disks were wiped": {
			body:    "pool tank wiped\n",
			want:    FirstBootReport{{Pool: "tank", Outcome: PoolWiped}},
			summary: "pool tank created anew, its disks wiped",
		},
		"a refused pool says why": {
			body:    "pool tank refused disk WD-1 (/dev/sdb) holds another ZFS pool\npool fast exists",
			want:    FirstBootReport{{Pool: "tank", Outcome: PoolRefused, Why: "disk WD-1 (/dev/sdb) holds another ZFS pool"}, {Pool: "fast", Outcome: PoolExists}},
			summary: "pool tank refused: disk WD-1 (/dev/sdb) holds another ZFS pool; pool fast already imported, left alone",
		},
		"a refused pool without a reason is refused": {body: "pool tank refused\n", bad: true},
		"a reason after another outcome is refused":  {body: "pool tank created on sdb\n", bad: true},
		"an unknown outcome is refused":              {body: "pool tank destroyed\n", bad: true},
		"a line that is not a pool's is refused":     {body: "rm -rf / now\n", bad: true},
		"an invalid pool name is refused":            {body: "pool mirror0 created\n", bad: true},
		"a control character is refused":             {body: "pool tank refused disk \x1b[2J\n", bad: true},
		"a blank line inside is refused":             {body: "pool tank created\n\npool fast created\n", bad: true},
		"a body over the bound is refused":           {body: strings.Repeat("pool tank created\n", 1000), bad: true},
		"a reason over its bound is refused":         {body: "pool tank refused " + strings.Repeat("x", 301), bad: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseFirstBootReport([]byte(tc.body))
			if tc.bad {
				if !errors.Is(err, ErrInvalidFirstBootReport) {
					t.Fatalf("err = %v, want ErrInvalidFirstBootReport", err)
				}
				if strings.Contains(err.Error(), "rm -rf") || strings.Contains(err.Error(), "\x1b") {
					t.Errorf("the error quotes the body: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if s := got.String(); s != tc.summary {
				t.Errorf("String() = %q, want %q", s, tc.summary)
			}
		})
	}
}

// TestFirstBootScriptReportsToTheWindow: with a report URL the script
// posts what it did with each pool, in the form ParseFirstBootReport
// reads, to the window only (curl -k --pinnedpubkey with the window's
// key pin: its token goes to no other server), and a post that fails
// changes nothing of its exit code.
func TestFirstBootScriptReportsToTheWindow(t *testing.T) {
	sh := needTool(t, "sh")
	const (
		mirror = "tankb1=mirror:S4EWNX0N123456,WD-WCC4E1234567"
		single = "tanka1=single:sdd"
		url    = "https://10.77.0.2:8443/first-boot-report/TOKEN"
		pin    = "sha256//Ym9ndXMga2V5IHBpbiBmb3IgdGhlIHRlc3QgICAgICA="
	)
	curl := stubRecord + `cat >"$REPORT_BODY"
exit "${CURL_RC:-0}"
`
	tests := map[string]struct {
		pools    []string
		wipe     bool
		env      []string
		wantCode int
		want     string
	}{
		"a reinstall keeping data reports the pool imported": {
			pools: []string{mirror, single}, env: []string{"ZPOOL_IMPORTABLE=tankb1", "LSBLK_ZFS=$ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567"},
			want: "pool tankb1 found and imported, its data kept; pool tanka1 created",
		},
		"a reinstall wiping data reports the disks wiped": {
			pools: []string{mirror}, wipe: true, env: []string{"ZPOOL_IMPORTABLE=tankb1"},
			want: "pool tankb1 created anew, its disks wiped",
		},
		"a pool left alone is reported so": {
			pools: []string{single}, env: []string{"ZPOOL_EXISTING=tanka1"},
			want: "pool tanka1 already imported, left alone",
		},
		"a foreign pool on a disk is reported refused": {
			pools: []string{mirror}, env: []string{"LSBLK_ZFS=$ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567"}, wantCode: 1,
			want: "pool tankb1 refused: disk WD-WCC4E1234567 ($ROOT/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC4E1234567) holds a ZFS pool that is not an importable tankb1",
		},
		"a missing disk is reported refused": {
			pools: []string{"tanka1=single:S9MISSING0001"}, wantCode: 1,
			want: "pool tanka1 refused: disk S9MISSING0001 not found, or its serial matches two disks",
		},
		"a disk in use is reported refused": {
			pools: []string{single}, env: []string{"LSBLK_IN_USE=$ROOT/dev/sdd"}, wantCode: 1,
			want: "pool tanka1 refused: disk sdd ($ROOT/dev/sdd) holds a mounted filesystem, swap or LVM",
		},
		"a failing zpool create is reported refused": {
			pools: []string{single}, env: []string{"ZPOOL_CREATE_RC=1"}, wantCode: 1,
			want: "pool tanka1 refused: zpool create failed",
		},
		"a node without pools reports none":        {want: "no data pools"},
		"a report the window refuses is a warning": {pools: []string{single}, env: []string{"CURL_RC=22"}, want: "pool tanka1 created"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := testNode(t, tc.pools...)
			r.WipeData = tc.wipe
			script, err := FirstBootScript(r, url, pin)
			if err != nil {
				t.Fatal(err)
			}
			m := newFakeMachine(t, false, "", nil)
			if err := os.WriteFile(filepath.Join(m.root, "bin", "curl"), []byte(curl), 0o755); err != nil {
				t.Fatal(err)
			}
			body := filepath.Join(m.root, "report.body")
			env := []string{"REPORT_BODY=" + body}
			for _, e := range tc.env {
				env = append(env, strings.ReplaceAll(e, "$ROOT", m.root))
			}
			calls, out, code := m.run(t, sh, script, env...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\n%s", code, tc.wantCode, out)
			}
			if want := "curl [-fsS] [-k] [--pinnedpubkey] [" + pin + "] [--max-time] [20] [-H] [Content-Type: text/plain] [--data-binary] [@-] [" + url + "]"; !strings.Contains(calls, want) {
				t.Errorf("calls lack %s:\n%s", want, calls)
			}
			raw, err := os.ReadFile(body)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ParseFirstBootReport(raw)
			if err != nil {
				t.Fatalf("the posted report %q: %v", raw, err)
			}
			if got := strings.ReplaceAll(rep.String(), m.root, "$ROOT"); got != tc.want {
				t.Errorf("report = %q, want %q", got, tc.want)
			}
			if strings.Contains(name, "refuses") && !strings.Contains(out, "could not report to the window") {
				t.Errorf("a refused post is not warned of:\n%s", out)
			}
		})
	}
}

// TestFirstBootScriptSendsNoUnpinnedReport: an https report URL without
// the window's key pin is not posted (its token would go to whoever
// answers); the script warns and its exit code is unchanged.
func TestFirstBootScriptSendsNoUnpinnedReport(t *testing.T) {
	sh := needTool(t, "sh")
	script, err := FirstBootScript(testNode(t, "tanka1=single:sdd"), "https://10.77.0.2:8443/first-boot-report/TOKEN", "")
	if err != nil {
		t.Fatal(err)
	}
	m := newFakeMachine(t, false, "", nil)
	if err := os.WriteFile(filepath.Join(m.root, "bin", "curl"), []byte(stubRecord+"exit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	calls, out, code := m.run(t, sh, script)
	if code != 0 || strings.Contains(calls, "curl") || !strings.Contains(out, "no pin of the window's key") {
		t.Errorf("exit %d, calls:\n%s\noutput:\n%s\nwant exit 0, no curl call and a warning", code, calls, out)
	}
}
