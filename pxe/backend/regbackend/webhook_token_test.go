package regbackend_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/plasmactl/plasma-node/pxe/events"
	"github.com/plasmactl/plasma-node/pxe/registry"
)

// TestWebhookChecksTheToken: a 9.2 answer carries a webhook auth-token of
// its own; a webhook body whose "token" is another is refused as a wrong
// URL token is (404, a refused event, nothing kept, the URL token
// unspent), the right one is taken, and a body without a token is taken
// as before.
func TestWebhookChecksTheToken(t *testing.T) {
	e := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	hook := answeredHook(t, e)
	if len(hook.AuthToken) < 22 || strings.Contains(hook.URL, hook.AuthToken) {
		t.Fatalf("the 9.2 answer's webhook auth-token %q: want a token of its own", hook.AuthToken)
	}
	withToken := func(tok string) []byte {
		return webhookBody(t, func(m map[string]any) { m["token"] = tok })
	}
	for _, wrong := range []string{"np1:notasecret", hook.AuthToken + "x", strings.ToUpper(hook.AuthToken)} {
		status, msg := postHook(t, hook.URL, bytes.NewReader(withToken(wrong)))
		if status != http.StatusNotFound || msg != "unknown or already used webhook token" {
			t.Errorf("a wrong token: %d %q; want 404 as for a wrong URL token", status, msg)
		}
		if _, err := e.inst.Get(context.Background(), "pve1"); !errors.Is(err, registry.ErrNoInstall) {
			t.Errorf("a wrong token: a report was kept: %v", err)
		}
	}
	evs, _ := e.b.History(context.Background())
	refused := 0
	for _, ev := range evs {
		if ev.Kind == events.Refused && ev.Status == http.StatusNotFound && ev.Detail == "unknown or already used webhook token" {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d refused webhook events like a wrong URL token's; want 3", refused)
	}
	if status, msg := postHook(t, hook.URL, bytes.NewReader(withToken(hook.AuthToken))); status != http.StatusOK {
		t.Fatalf("the right token: %d %s", status, msg)
	}
	if _, err := e.inst.Get(context.Background(), "pve1"); err != nil {
		t.Errorf("the right token: no report kept: %v", err)
	}

	// Without a token in the body: as before.
	e2 := newHandlerEnv(t, mustReg(t, "pve1", []string{"52:54:00:ba:5e:11"}, "25414A800205"))
	if status, msg := postHook(t, answeredWebhook(t, e2), bytes.NewReader(webhookBody(t, nil))); status != http.StatusOK {
		t.Errorf("no token in the body: %d %s; want 200 as before", status, msg)
	}
}
