package registry

import (
	"github.com/plasmactl/plasma-node/answer"

	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBuildPinsHTTPSURLs: with a certificate fingerprint, https first-boot
// and webhook URLs pin it (the installer would otherwise verify them
// against its CA store); http ones do not.
func TestBuildPinsHTTPSURLs(t *testing.T) {
	const fp = "E7:DC:8C:44:95:94:BD:13:5A:0B:C6:5A:12:D9:BB:43:3F:32:C4:E5:4E:35:F7:32:03:FB:89:9F:20:84:42:85"
	reg := Registration{Name: "pve1", BootDisk: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}}
	tests := map[string]struct {
		base, fp string
		want     [2]string // first-boot, webhook
	}{
		"https with a fingerprint pins both": {"https://10.0.0.2:8090", fp, [2]string{fp, fp}},
		"http never pins":                    {"http://10.0.0.2:8090", fp, [2]string{"", ""}},
		"https without a fingerprint":        {"https://pve.example:8090", "", [2]string{"", ""}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, err := Build(reg, BuildOptions{RootPassword: "probe-password", FirstBootURL: tc.base + "/first-boot/t", WebhookURL: tc.base + "/webhook/t", CertFingerprint: tc.fp})
			if err != nil {
				t.Fatal(err)
			}
			got := [2]string{a.FirstBoot.CertFingerprint, a.PostInstallationWebhook.CertFingerprint}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pins (-want +got):\n%s", diff)
			}
			if err := answer.Validate(a, answer.LatestVersion); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
