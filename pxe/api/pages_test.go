package api_test

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestTheFullPageWithoutAWindow: an API with no window in its process
// (no Pages) answers the full page and status with 501 to a read token;
// without a token the page is 401 asking a browser for Basic
// credentials, which count for the page only.
func TestTheFullPageWithoutAWindow(t *testing.T) {
	e := newEnv(t, nil)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("operator:"+e.tokens["read"]))
	for name, c := range map[string]struct {
		path, token string
		header      []string
		status      int
		want        string
	}{
		"the page to a read token":        {"/api/v1/page", e.tokens["read"], nil, 501, "runs no window"},
		"the status to a read token":      {"/api/v1/status", e.tokens["read"], nil, 501, "runs no window"},
		"the page without a token":        {"/api/v1/page", "", nil, 401, "missing bearer token"},
		"the page to Basic credentials":   {"/api/v1/page", "", []string{"Authorization", basic}, 501, "runs no window"},
		"the status to Basic credentials": {"/api/v1/status", "", []string{"Authorization", basic}, 401, "not a bearer token"},
	} {
		r := e.do(t, "GET", c.path, c.token, "", c.header...)
		if r.status != c.status || !strings.Contains(r.err.Error, c.want) {
			t.Errorf("%s: %d %s, want %d with %q", name, r.status, r.body, c.status, c.want)
		}
		if challenge := strings.Join(r.header.Values("WWW-Authenticate"), "; "); c.status == 401 && strings.Contains(c.path, "page") != strings.Contains(challenge, "Basic realm=") {
			t.Errorf("%s: WWW-Authenticate %q", name, challenge)
		}
	}
}
