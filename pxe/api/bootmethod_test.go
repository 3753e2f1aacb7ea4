package api_test

import (
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// A posted registration takes boot_method and media_answer; virtual
// media is refused (422 on boot_method, saying why) without a Redfish
// BMC, its own or by the site's default.
func TestRegistrationBootMethod(t *testing.T) {
	e := newEnv(t, func(c *api.Config) {
		c.Power, c.Secrets = &fakePower{}, &fakeSecrets{passwords: map[string]string{}}
		c.Site = registry.Site{BootMethod: registry.BootVirtualMedia}
	})
	postRegistrations(t, e, map[string]postCase{
		"virtual media with an IPMI BMC":      {`{"name":"pve1","macs":["52:54:00:00:00:01"],"boot_method":"virtual-media","bmc":{"url":"ipmi://10.0.0.51","user":"admin"},"bmc_password":"x"}`, 422, "boot_method", "which has no virtual media"},
		"the site's virtual media and no BMC": {`{"name":"pve2","macs":["52:54:00:00:00:02"]}`, 422, "boot_method", "the site's boot method is virtual-media"},
		"an unknown boot method":              {`{"name":"pve3","macs":["52:54:00:00:00:03"],"boot_method":"usb"}`, 422, "boot_method", "invalid boot method"},
		"network over the site's":             {`{"name":"pve4","macs":["52:54:00:00:00:04"],"boot_method":"network"}`, 201, "", `"boot_method": "network"`},
		"media_tls on an IPMI BMC":            {`{"name":"pve6","macs":["52:54:00:00:00:06"],"boot_method":"network","bmc":{"url":"ipmi://10.0.0.56","user":"admin","media_tls":true},"bmc_password":"x"}`, 422, "bmc", "media_tls is for virtual media, which ipmi has not"},
		"media_tls booting over the network":  {`{"name":"pve7","macs":["52:54:00:00:00:07"],"boot_method":"network","bmc":{"url":"redfish://10.0.0.57","user":"root","media_tls":true},"bmc_password":"x"}`, 422, "boot_method", "media_tls is for the virtual-media boot method"},
		"virtual media with a Redfish BMC":    {`{"name":"pve5","macs":["52:54:00:00:00:05"],"boot_method":"virtual-media","media_answer":"http","bmc":{"url":"redfish://10.0.0.55","user":"root"},"bmc_password":"x"}`, 201, "", `"media_answer": "http"`},
		"the partition media answer":          {`{"name":"pve6","macs":["52:54:00:00:00:06"],"boot_method":"virtual-media","media_answer":"partition","bmc":{"url":"redfish://10.0.0.56","user":"root"},"bmc_password":"x"}`, 201, "", `"media_answer": "partition"`},
		"an unknown media answer":             {`{"name":"pve7","macs":["52:54:00:00:00:07"],"boot_method":"virtual-media","media_answer":"floppy","bmc":{"url":"redfish://10.0.0.57","user":"root"},"bmc_password":"x"}`, 422, "media_answer", `or \"partition\" (the answer on a second, small medium)`},
	})
}

// postCase is a registration posted with the register token: the reply's
// status, the error's field and a text its body has.
type postCase struct {
	body   string
	status int
	field  string
	has    string
}

// postRegistrations posts each case's body and checks its reply.
func postRegistrations(t *testing.T, e *env, tests map[string]postCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.do(t, "POST", "/api/v1/registrations", e.tokens["register"], tc.body)
			if r.status != tc.status || r.err.Field != tc.field || !strings.Contains(strings.ReplaceAll(r.body, `":"`, `": "`), tc.has) {
				t.Errorf("%d %s; want %d on field %q with %q", r.status, r.body, tc.status, tc.field, tc.has)
			}
		})
	}
}
