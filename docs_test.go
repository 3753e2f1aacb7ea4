package plasmanode_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	answerfmt "github.com/plasmactl/plasma-node/answer"
)

// readmeMaxLines is the README's bound: what it is, the two commands, a
// walk-through of each binary and links; the reference is under docs/.
const readmeMaxLines = 250

// docPages returns README.md and docs/*.md, relative to the module root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ holds no page")
	}
	return append([]string{"README.md"}, pages...)
}

// proseLine is a line of a page outside fenced blocks.
type proseLine struct {
	n    int    // its line number
	text string // the line, inline code blanked
}

// prose returns a page's lines outside fenced blocks, with inline code
// blanked.
func prose(text string) []proseLine {
	var out []proseLine
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, proseLine{n, inlineCode.ReplaceAllString(line, "``")})
		}
	}
	return out
}

var (
	inlineCode = regexp.MustCompile("`[^`]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// anchors returns the heading anchors GitHub gives a page: lower case,
// letters, digits, '-' and '_' kept, blanks turned to '-', and a repeated
// anchor numbered (-1, -2, …).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// TestDocsLinks checks that every relative link of README.md and
// docs/*.md names a file or folder of the repository, and every anchor a
// heading of the page it points at.
func TestDocsLinks(t *testing.T) {
	texts := map[string]string{}
	read := func(path string) (string, bool) {
		if s, ok := texts[path]; ok {
			return s, true
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		texts[path] = string(b)
		return string(b), true
	}
	links := 0
	for _, page := range docPages(t) {
		text, ok := read(page)
		if !ok {
			t.Fatalf("cannot read %s", page)
		}
		for _, line := range prose(text) {
			n := line.n
			for _, m := range mdLink.FindAllStringSubmatch(line.text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, anchor, _ := strings.Cut(target, "#")
				file := page
				if path != "" {
					file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: link %s: no such file or folder %s", page, n, target, file)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				body, ok := read(file)
				if !ok || !strings.HasSuffix(file, ".md") {
					t.Errorf("%s:%d: link %s: an anchor into %s, which is not a Markdown page", page, n, target, file)
					continue
				}
				if !anchors(body)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", page, n, target, file, anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no relative link found: the link reader is broken")
	}
}

// TestDocsAnchors checks the anchor rule on headings of the kinds the
// pages use.
func TestDocsAnchors(t *testing.T) {
	got := anchors("# Title\n## A PostgreSQL store: `--store`\n```sh\n# not a heading\n```\n## Two hosts, one site\n## Examples\n## Examples\n")
	want := map[string]bool{"title": true, "a-postgresql-store---store": true, "two-hosts-one-site": true, "examples": true, "examples-1": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("anchors (-want +got):\n%s", diff)
	}
}

// TestDocsREADMEIsShort keeps README.md within readmeMaxLines: the
// reference belongs under docs/.
func TestDocsREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, over %d: move reference text to a page under docs/", n, readmeMaxLines)
	}
}

// TestDocsPagesSayWhatTheyTeach checks that each page under docs/ opens,
// right under its title, with what a reader can do after it, and that the
// contents (docs/README.md) link every page.
func TestDocsPagesSayWhatTheyTeach(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range docPages(t)[1:] {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 4)
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") || lines[1] != "" || !strings.HasPrefix(lines[2], "After this page you can ") {
			t.Errorf("%s: want a title, a blank line, then \"After this page you can …\"", page)
		}
		if name := filepath.Base(page); name != "README.md" && !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md's contents do not link %s", name)
		}
	}
}

// TestDocsSecurityStatesTheRounds keeps the security model's sentence on
// password hashing true to the code: the rounds of a generated root
// password's hash (answer.HashPassword, what every answer
// carries) are the ones docs/security.md names.
func TestDocsSecurityStatesTheRounds(t *testing.T) {
	hash, err := answerfmt.HashPassword("a generated password")
	if err != nil {
		t.Fatal(err)
	}
	rounds := answerfmt.DefaultCryptRounds
	if rest, ok := strings.CutPrefix(hash, "$6$rounds="); ok {
		n, _, _ := strings.Cut(rest, "$")
		if rounds, err = strconv.Atoi(n); err != nil {
			t.Fatalf("hash %q: %v", hash, err)
		}
	}
	page, err := os.ReadFile(filepath.Join("docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("The hash of a generated root password uses %d rounds", rounds)
	if !strings.Contains(strings.Join(strings.Fields(string(page)), " "), want) {
		t.Errorf("docs/security.md does not say %q (the hash is %.20s…)", want, hash)
	}
}
