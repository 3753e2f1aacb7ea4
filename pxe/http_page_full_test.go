package pxe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/plasmactl/plasma-node/pxe/api"
	"github.com/plasmactl/plasma-node/pxe/apitoken"
	"github.com/plasmactl/plasma-node/pxe/store/folder"
)

// TestFullStatusPageInChromiumNeedsAReadToken: after a boot, the
// window's own page in Chromium shows the booted machine's MAC masked;
// the management API's full page (the daemon's, here the API over the
// lab's window), loaded by a browser that sends a read token, shows it
// whole and refreshes itself through the API; without the token the API
// refuses the page.
func TestFullStatusPageInChromiumNeedsAReadToken(t *testing.T) {
	bin := needTool(t, "chromium", "chromium")
	lab := newWindowLab(t)
	lab.netboot(t)
	ctx := context.Background()
	toks, err := folder.OpenTokens(lab.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	read, err := toks.Create(ctx, "reader", apitoken.ScopeRead, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	replies, err := folder.OpenReplies(lab.state, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := folder.OpenEvents(folder.EventsPath(lab.state), folder.EventsOptions{})
	t.Cleanup(func() { evs.Close() })
	h, err := api.New(api.Config{Registry: lab.reg, Tokens: toks, Replies: replies, Window: folder.Window(lab.state), Events: evs, Pages: lab.srv.Netboot()})
	if err != nil {
		t.Fatal(err)
	}
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	if resp, err := http.Get(plain.URL + "/api/v1/page"); err != nil || resp.StatusCode != 401 {
		t.Fatalf("the full page without a token: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	// The browser sends the read token with every request, its page's
	// refreshes included.
	withToken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+read)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(withToken.Close)

	dir := artifactsDir(t)
	load := func(url, png string) *html.Node {
		t.Helper()
		dom, err := runChromium(bin, url, filepath.Join(dir, png), t.TempDir(), 7*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, strings.TrimSuffix(png, ".png")+".dom.html"), []byte(dom), 0o644)
		doc, err := html.Parse(strings.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	for name, c := range map[string]struct {
		url, png      string
		want, wantNot string
	}{
		"the window's page":  {lab.base + "/", "statuspage-masked.png", "…:5e:11", labMAC},
		"the API's full one": {withToken.URL + "/api/v1/page", "statuspage-full.png", labMAC, "…:5e:11"},
	} {
		doc := load(c.url, c.png)
		sec := text(byID(t, doc, "node-lab1"))
		if !strings.Contains(sec, c.want) || strings.Contains(sec, c.wantNot) {
			t.Errorf("%s: lab1 shows %q, want %q and not %q", name, sec, c.want, c.wantNot)
		}
		body := find(doc, func(n *html.Node) bool { return n.Data == "body" })
		if n, _ := strconv.Atoi(attr(body, "data-refreshes")); n < 1 {
			t.Errorf("%s: body data-refreshes = %q, want the page to have refreshed itself", name, attr(body, "data-refreshes"))
		}
		if r := byID(t, doc, "refresh"); attr(r, "data-state") != "ok" {
			t.Errorf("%s: refresh state %q: %s", name, attr(r, "data-state"), text(r))
		}
	}
}
