package pxe

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/plasmactl/plasma-node/pxe/events"
)

// chromiumTimeout bounds one headless Chromium run.
const chromiumTimeout = 90 * time.Second

// artifactsDir is where tests keep what a person may want to look at
// after a run (screenshots): $PLASMA_ARTIFACTS, else a temporary folder.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PLASMA_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("PLASMA_ARTIFACTS=%s: %v", dir, err)
	}
	return dir
}

// runChromium loads url in headless Chromium and returns the DOM once its
// scripts ran for budget of virtual time (timers fire at once, fetches
// are waited for), writing a screenshot to png. scratch holds Chromium's
// profile and home. It runs off the test's goroutine, so it returns
// errors rather than failing the test.
func runChromium(bin, url, png, scratch string, budget time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
		"--disable-background-networking", "--hide-scrollbars", "--user-data-dir="+filepath.Join(scratch, "profile"),
		"--window-size=1280,1800", "--virtual-time-budget="+strconv.FormatInt(budget.Milliseconds(), 10),
		"--screenshot="+png, "--dump-dom", url)
	// Chromium writes its config and cache under HOME: keep them in the
	// test's folder.
	cmd.Env = append(os.Environ(), "HOME="+scratch)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", bin, err, tail(stderr.String(), 40))
	}
	if !strings.Contains(stdout.String(), "<html") {
		return "", fmt.Errorf("%s printed no DOM:\n%s", bin, tail(stderr.String(), 40))
	}
	return stdout.String(), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestStatusPageInChromium drives a window through a boot and loads its
// page in Debian's headless Chromium: the page is loaded after the
// network boot, and the installer runs while the page's script fetches
// its first refresh, so the DOM Chromium prints shows the installer's
// steps only if the fetch-refresh works.
func TestStatusPageInChromium(t *testing.T) {
	bin := needTool(t, "chromium", "chromium")
	began := time.Now()
	lab := newWindowLab(t)
	lab.netboot(t)

	// The page's first load is GET / number 1; its script's first
	// refresh is number 2, held until the installer is done.
	refreshing, installed := make(chan struct{}), make(chan struct{})
	lab.onPage(func(n int) int {
		if n == 2 {
			close(refreshing)
			select {
			case <-installed:
			case <-time.After(chromiumTimeout):
			}
		}
		return 0
	})
	dir := artifactsDir(t)
	png := filepath.Join(dir, "statuspage.png")
	type result struct {
		dom  string
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	scratch := t.TempDir()
	go func() {
		at := time.Now()
		dom, err := runChromium(bin, lab.base+"/", png, scratch, 12*time.Second)
		done <- result{dom, err, time.Since(at)}
	}()
	var pw string
	var strays []string
	select {
	case <-refreshing:
		pw = lab.install(t)
		strays = lab.strays(t)
		close(installed)
	case r := <-done:
		t.Fatalf("Chromium ended before the page refreshed itself (%v); its DOM:\n%s", r.err, r.dom)
	}
	r := <-done // bounded by chromiumTimeout
	if r.err != nil {
		t.Fatal(r.err)
	}
	dom := r.dom
	took := time.Since(began)
	if err := os.WriteFile(filepath.Join(dir, "statuspage.dom.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Errorf("no screenshot at %s: %v", png, err)
	}
	t.Logf("screenshot: %s (DOM beside it); Chromium ran %s, the test %s", png, r.took.Round(time.Millisecond), took.Round(time.Millisecond))

	if strings.Contains(dom, pw) {
		t.Error("the page holds the generated root password")
	}
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	body := find(doc, func(n *html.Node) bool { return n.Data == "body" })
	if n, _ := strconv.Atoi(attr(body, "data-refreshes")); n < 1 {
		t.Errorf("body data-refreshes = %q, want the script to have refreshed the page", attr(body, "data-refreshes"))
	}
	if r := byID(t, doc, "refresh"); attr(r, "data-state") != "ok" {
		t.Errorf("refresh state %q: %s", attr(r, "data-state"), text(r))
	}

	// Each node in its state; lab1 with every step, in order.
	for node, state := range map[string]string{"lab1": "installed", "lab2": "pending", "lab3": "consumed"} {
		if got := attr(byID(t, doc, "node-"+node), "data-state"); got != state {
			t.Errorf("%s is %q on the page, want %q", node, got, state)
		}
	}
	sec := byID(t, doc, "node-lab1")
	var rows, seen []string
	walk(sec, func(n *html.Node) {
		if s := attr(n, "data-stage"); s != "" && n.Data == "tr" {
			rows = append(rows, s)
		}
		if s := attr(n, "data-step"); s != "" && slices.Contains(strings.Fields(attr(n, "class")), "seen") {
			seen = append(seen, s)
		}
	})
	want := make([]string, len(labSteps))
	for i, s := range labSteps {
		want[i] = string(s)
	}
	// The replayed first-boot URL (404) is one more row of lab1, after
	// the webhook; the 400 and 405, which named no MAC, are not.
	if diff := cmp.Diff(append(want, string(events.FirstBoot)), rows); diff != "" {
		t.Errorf("lab1's timeline rows in the browser (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("lab1's steps marked seen in the browser (-want +got):\n%s", diff)
	}
	walk(sec, func(n *html.Node) {
		if attr(n, "data-step") != "" && slices.Contains(strings.Fields(attr(n, "class")), "failed") {
			t.Errorf("lab1's %s step is painted failed after its installation: %s", attr(n, "data-step"), attr(n, "title"))
		}
	})
	// The strays are listed under the unattributed events, and no node
	// has them.
	other := find(doc, func(n *html.Node) bool { return n.Data == "h2" && text(n) == "Unattributed events" })
	if other == nil {
		t.Fatal("no unattributed events on the page")
	}
	var otherText string
	for n := other.NextSibling; n != nil; n = n.NextSibling {
		otherText += text(n)
	}
	for _, s := range strays {
		if !strings.Contains(otherText, s) {
			t.Errorf("unattributed events lack %q:\n%s", s, otherText)
		}
		if strings.Contains(text(sec), s) {
			t.Errorf("lab1 has the stray %q", s)
		}
	}

	// The time left, as the countdown shows it.
	w := byID(t, doc, "window")
	if attr(w, "data-open") != "true" {
		t.Errorf("window data-open = %q, want true", attr(w, "data-open"))
	}
	leftText := text(byID(t, doc, "window-left"))
	if !regexp.MustCompile(`^(\d+h)?(\d+m)?\d+s$`).MatchString(leftText) {
		t.Fatalf("time left %q, want a duration such as 29m48s", leftText)
	}
	left, _ := time.ParseDuration(leftText)
	if left <= lab.ttl-5*time.Minute || left > lab.ttl {
		t.Errorf("time left %s, want a little under the %s window", left, lab.ttl)
	}
}

func find(n *html.Node, ok func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, ok); f != nil {
			return f
		}
	}
	return nil
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	n := find(doc, func(n *html.Node) bool { return attr(n, "id") == id })
	if n == nil {
		t.Fatalf("the page has no element with id %q", id)
	}
	return n
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return strings.TrimSpace(b.String())
}

// TestStatusPageInChromiumSaysWhenTheServerIsGone: once the window has
// closed, the server refuses every request; the page keeps what it last
// showed and says it cannot reach the server.
func TestStatusPageInChromiumSaysWhenTheServerIsGone(t *testing.T) {
	bin := needTool(t, "chromium", "chromium")
	lab := newWindowLab(t)
	lab.netboot(t)
	lab.onPage(func(n int) int {
		if n > 1 {
			return http.StatusServiceUnavailable
		}
		return 0
	})
	dir := artifactsDir(t)
	png := filepath.Join(dir, "statuspage-closed.png")
	dom, err := runChromium(bin, lab.base+"/", png, t.TempDir(), 7*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", png)
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	r := byID(t, doc, "refresh")
	if attr(r, "data-state") != "error" || !strings.Contains(text(r), "Cannot reach the server (HTTP 503)") {
		t.Errorf("refresh note %q (state %q), want the server's 503 said", text(r), attr(r, "data-state"))
	}
	if got := attr(byID(t, doc, "node-lab1"), "data-state"); got != "pending" {
		t.Errorf("lab1 is %q, want the page to keep what it showed (pending)", got)
	}
}
