package answer

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"
)

// schemaRow is a row of the schema as these tests check it: its compiled
// rule and the model field it is bound to.
type schemaRow struct {
	rule  keyRule
	model reflect.Type // the struct holding the field
	field string       // the field's name, "" when no field matched
	sub   bool         // a table of keys of the schema
}

// binding is a row of a table as the schema tests check it against the
// model: the compiled rule, the model struct, the field's name and the
// row's sub-table.
type binding struct {
	rule  keyRule
	model reflect.Type
	field string
	sub   schemaTable
}

// bindings finds the model field of each row: the one whose address the
// row's accessor returns.
func (t *table[S]) bindings() []binding {
	var s S
	sv := reflect.ValueOf(&s).Elem()
	out := make([]binding, len(t.rows))
	for i, r := range t.rows {
		b := binding{rule: t.rules[i], model: sv.Type(), sub: r.val.sub()}
		p := reflect.ValueOf(r.val.field(&s)).Pointer()
		for j := range sv.NumField() {
			if sv.Field(j).Addr().Pointer() == p && sv.Field(j).Addr().Type() == reflect.TypeOf(r.val.field(&s)) {
				b.field = sv.Type().Field(j).Name
			}
		}
		out[i] = b
	}
	return out
}

// schemaRows walks the schema from the root.
func schemaRows() []schemaRow {
	var out []schemaRow
	var walk func(t schemaTable)
	walk = func(t schemaTable) {
		for _, b := range t.(interface{ bindings() []binding }).bindings() {
			out = append(out, schemaRow{rule: b.rule, model: b.model, field: b.field, sub: b.sub != nil})
			if b.sub != nil {
				walk(b.sub)
			}
		}
	}
	walk(answerTable)
	return out
}

// fieldNames are the keys whose model field is not named after them.
var fieldNames = map[string]string{
	"global.fqdn.source": "FromDHCP", // fqdn.source = "from-dhcp" is the flag FQDN.FromDHCP
}

// unboundFields are model fields no row fills, and why.
var unboundFields = map[string]string{
	"FQDN.Name": "the string form of global.fqdn, filled by the global.fqdn row itself",
}

var kebabRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// schemaFile is an answer file of testdata, read by installer version
// (zero: by some version, the spelling of each key being its own).
type schemaFile struct {
	name string
	v    Version
	keys []string // every key path as spelled, free-form tables left out
}

// schemaFiles reads the golden files (version from their names) and the
// installer's own examples.
func schemaFiles(t *testing.T) []schemaFile {
	t.Helper()
	var out []schemaFile
	for _, dir := range []string{"golden", "installer"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.toml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no answer files in testdata/%s: %v", dir, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := toml.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			sf := schemaFile{name: f}
			if dir == "golden" {
				base := strings.TrimSuffix(filepath.Base(f), ".toml")
				if sf.v, err = ParseVersion(base[strings.LastIndexByte(base, '-')+1:]); err != nil {
					t.Fatalf("golden file %s: name it NAME-VERSION.toml: %v", f, err)
				}
			}
			sf.keys = fileKeys("", m)
			out = append(out, sf)
		}
	}
	return out
}

// fileKeys lists the key paths of a TOML table as spelled, leaving out the
// free-form udev filter and MAC mapping tables.
func fileKeys(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		path := joinPath(prefix, k)
		out = append(out, path)
		if sub, ok := v.(map[string]any); ok && k != "filter" && k != "mapping" {
			out = append(out, fileKeys(path, sub)...)
		}
	}
	slices.Sort(out)
	return out
}

// modelDocs returns the doc comment of every field of the model's structs
// in model.go, by "Type.Field".
func modelDocs(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "model.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		if st, ok := ts.Type.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				for _, name := range fl.Names {
					docs[ts.Name.Name+"."+name.Name] = strings.Join(strings.Fields(fl.Doc.Text()), " ")
				}
			}
		}
		return false
	})
	return docs
}

// schemaProblems checks the rows of a schema against the model (one row
// per field, the key named after its field, as the field's doc says) and
// against the answer files (every key of every file in the schema, every
// key and legacy spelling of the schema in some file). A misspelt key in a
// row breaks at least one of these.
func schemaProblems(rows []schemaRow, files []schemaFile, docs map[string]string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s)) }

	bound := map[string]int{}
	models := map[reflect.Type]bool{}
	for _, r := range rows {
		path, key := r.rule.path, lastElem(r.rule.path)
		models[r.model] = true
		fieldID := r.model.Name() + "." + r.field
		if r.field == "" {
			bad("%s: bound to no field of %s", path, r.model.Name())
			continue
		}
		bound[fieldID]++
		if want, ok := fieldNames[path]; ok {
			if r.field != want {
				bad("%s: bound to %s, want %s", path, fieldID, want)
			}
		} else if norm(key) != norm(r.field) {
			bad("%s: key %q is not named after its field %s", path, key, fieldID)
		}
		if !kebabRe.MatchString(key) {
			bad("%s: key %q is not kebab-case", path, key)
		}
		if a := r.rule.aliasName(); a != "" && a != strings.ReplaceAll(key, "-", "_") {
			bad("%s: alias %q is not the snake_case spelling of %q", path, a, key)
		}
		// The field's doc names the key: "[global]" for a section, else
		// the key with the table it is in, "zfs.arc-max".
		mention := parentPath(path)
		mention = joinPath(mention[strings.LastIndexByte(mention, '.')+1:], key)
		if !strings.Contains(path, ".") {
			mention = "[" + path + "]"
		}
		if doc := docs[fieldID]; !strings.Contains(doc, mention) {
			bad("%s: the doc of %s does not name %s: %q", path, fieldID, mention, doc)
		}
	}
	for m := range models {
		for i := range m.NumField() {
			id := m.Name() + "." + m.Field(i).Name
			switch n := bound[id]; {
			case n == 0 && unboundFields[id] == "":
				bad("field %s is filled by no row of the schema", id)
			case n > 1:
				bad("field %s is filled by %d rows", id, n)
			}
		}
	}

	seen := map[string]bool{}
	for _, f := range files {
		for _, k := range f.keys {
			seen[k] = true
			known := slices.ContainsFunc(rows, func(r schemaRow) bool {
				if parentPath(r.rule.path) != parentPath(k) {
					return false
				}
				if f.v != 0 {
					return slices.Contains(r.rule.accepts(f.v), lastElem(k))
				}
				return slices.ContainsFunc(r.rule.names, func(s spelling) bool { return s.name == lastElem(k) })
			})
			switch {
			case known:
			case f.v != 0:
				bad("%s: key %s is not in the schema for installer %s", f.name, k, f.v)
			default:
				bad("%s: key %s is not in the schema", f.name, k)
			}
		}
	}
	for _, r := range rows {
		if !seen[r.rule.path] {
			bad("key %s is in no answer file of testdata: add it to a golden file", r.rule.path)
		}
		if l := r.rule.legacy; l != "" && !seen[joinPath(parentPath(r.rule.path), l)] {
			bad("the spelling %s of key %s is in no answer file of testdata: add it to a golden file", l, r.rule.path)
		}
	}
	return out
}

func TestSchemaMatchesTheModelAndTheAnswerFiles(t *testing.T) {
	for _, p := range schemaProblems(schemaRows(), schemaFiles(t), modelDocs(t)) {
		t.Error(p)
	}
}

func TestMisspeltKeyFails(t *testing.T) {
	rows, files, docs := schemaRows(), schemaFiles(t), modelDocs(t)
	misspell := func(s string) string { return s[:len(s)-1] + "x" + s[len(s)-1:] }
	t.Run("every key misspelt in turn", func(t *testing.T) {
		for i, r := range rows {
			mutated := slices.Clone(rows)
			k := r.rule
			wrong := misspell(lastElem(k.path))
			k.path = joinPath(parentPath(k.path), wrong)
			k.names = slices.Clone(k.names)
			k.names[0].name = wrong
			mutated[i].rule = k
			if len(schemaProblems(mutated, files, docs)) == 0 {
				t.Errorf("%s misspelt as %s passes the schema checks", r.rule.path, k.path)
			}
		}
	})
	t.Run("every alias misspelt in turn", func(t *testing.T) {
		for i, r := range rows {
			if !r.rule.alias {
				continue
			}
			mutated := slices.Clone(rows)
			k := r.rule
			k.names = slices.Clone(k.names)
			k.names[1].name = misspell(k.names[1].name)
			if k.legacy != "" {
				k.legacy = k.names[1].name
			}
			mutated[i].rule = k
			if len(schemaProblems(mutated, files, docs)) == 0 {
				t.Errorf("the alias of %s misspelt as %s passes the schema checks", r.rule.path, k.names[1].name)
			}
		}
	})
	t.Run("a misspelt key in the table changes what is rendered and read", func(t *testing.T) {
		i := slices.IndexFunc(zfsTable.rows, func(r row[ZFSOptions]) bool { return r.key == "arc-max" })
		zfsTable.rows[i].key = "arc-mx"
		compileSchema()
		t.Cleanup(func() {
			zfsTable.rows[i].key = "arc-max"
			compileSchema()
		})
		if len(schemaProblems(schemaRows(), files, docs)) == 0 {
			t.Errorf("the schema checks pass with arc-mx")
		}
		for _, f := range []string{"installer/zfs.toml", "golden/full-8.4.toml", "golden/full-9.2.toml"} {
			data, err := os.ReadFile(filepath.Join("testdata", f))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Decode(data, Version92); err == nil || !strings.Contains(err.Error(), "disk-setup.zfs.arc-max: unknown key") {
				t.Errorf("Decode of %s = %v, want arc-max refused as an unknown key", f, err)
			}
		}
		a := &Answer{
			Global:    Global{Keyboard: "de", Country: "at", FQDN: FQDN{Name: "pve.example.com"}, Mailto: "a@b.c", Timezone: "UTC", RootPassword: "12345678"},
			Network:   Network{Source: NetworkFromDHCP},
			DiskSetup: DiskSetup{Filesystem: FilesystemZFS, DiskList: []string{"sda"}, ZFS: &ZFSOptions{Raid: Raid0, ArcMax: Ptr(2048)}},
		}
		out, err := Render(a, Version92, RenderOptions{})
		if err != nil || !strings.Contains(string(out), "arc-mx = 2048") {
			t.Errorf("Render = %v, want arc-mx written as the table says:\n%s", err, out)
		}
	})
}

func TestSchemaLists(t *testing.T) {
	keys := Schema()
	if len(keys) != len(keyRules) || len(keys) < 50 {
		t.Fatalf("Schema lists %d keys, the tables %d", len(keys), len(keyRules))
	}
	want := []Key{
		{Path: "global", Type: TypeTable, First: Version82},
		{Path: "global.fqdn", Type: TypeStringOrTable, First: Version82},
		{Path: "global.fqdn.source", Type: TypeString, First: Version84},
		{Path: "global.root-password", Type: TypeString, First: Version82, Alias: "root_password"},
		{Path: "global.reboot-on-error", Type: TypeBool, First: Version82, Alias: "reboot_on_error"},
		{Path: "global.root-ssh-keys", Type: TypeStringArray, First: Version82, Alias: "root_ssh_keys"},
		{Path: "network.filter", Type: TypeStringTable, First: Version82},
		{Path: "disk-setup.zfs.arc-max", Type: TypeInteger, First: Version82, Alias: "arc_max"},
		{Path: "disk-setup.lvm.maxvz", Type: TypeFloat, First: Version82},
		{Path: "post-installation-webhook.auth-token", Type: TypeString, First: Version92, Alias: "auth_token"},
		{Path: "first-boot.cert-fingerprint", Type: TypeString, First: Version83, Alias: "cert_fingerprint"},
	}
	for _, w := range want {
		i := slices.IndexFunc(keys, func(k Key) bool { return k.Path == w.Path })
		if i < 0 {
			t.Errorf("Schema lacks %s", w.Path)
			continue
		}
		if diff := cmp.Diff(w, keys[i]); diff != "" {
			t.Errorf("Schema entry %s (-want +got):\n%s", w.Path, diff)
		}
	}
	for _, k := range keys {
		if k.Type.String() == "" || strings.HasPrefix(k.Type.String(), "ValueType(") {
			t.Errorf("%s: type %v has no name", k.Path, k.Type)
		}
	}
}

// TestSchemaDefaults: a default is compared with the render form of its
// value, so it must be of that form.
func TestSchemaDefaults(t *testing.T) {
	forms := map[ValueType]reflect.Type{
		TypeString: reflect.TypeFor[string](), TypeBool: reflect.TypeFor[bool](),
		TypeInteger: reflect.TypeFor[int64](), TypeFloat: reflect.TypeFor[float64](),
	}
	var walk func(path string, rows []rowInfo)
	walk = func(path string, rows []rowInfo) {
		for _, r := range rows {
			if r.dflt == nil {
				continue
			}
			if want, ok := forms[r.typ]; !ok || reflect.TypeOf(r.dflt) != want {
				t.Errorf("%s: default %#v (%T) is not the render form of a %s", joinPath(path, r.key), r.dflt, r.dflt, r.typ)
			}
		}
	}
	for _, tb := range []struct {
		path string
		rows []rowInfo
	}{
		{"global", infos(globalTable)}, {"network.interface-name-pinning", infos(pinningTable)},
		{"disk-setup.btrfs", infos(btrfsTable)}, {"disk-setup.zfs", infos(zfsTable)}, {"disk-setup.lvm", infos(lvmTable)},
		{"network", infos(networkTable)}, {"disk-setup", infos(diskSetupTable)}, {"post-installation-webhook", infos(webhookTable)},
		{"first-boot", infos(firstBootTable)}, {"global.fqdn", infos(fqdnTable)}, {"", infos(answerTable)},
	} {
		walk(tb.path, tb.rows)
	}
}

// rowInfo is what TestSchemaDefaults needs of a row.
type rowInfo struct {
	key  string
	typ  ValueType
	dflt any
}

func infos[S any](t *table[S]) []rowInfo {
	out := make([]rowInfo, len(t.rows))
	for i, r := range t.rows {
		out[i] = rowInfo{r.key, r.val.typ(), r.dflt}
	}
	return out
}

// TestSchemaPathsInMessages: the key paths written out in this package's
// messages (rules across keys, installer messages) are keys of the schema.
func TestSchemaPathsInMessages(t *testing.T) {
	pathRe := regexp.MustCompile(`\b(global|network|disk-setup|post-installation-webhook|first-boot)(\.[a-z0-9_-]+)+`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, p := range pathRe.FindAllString(s, -1) {
				checked++
				if r := rule(p); !r.knownTo(LatestVersion) {
					t.Errorf("%s: %q names %s, which is not a key of the schema", file, s, p)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Errorf("only %d key paths found in messages; is the pattern right?", checked)
	}
}

// TestSchemaVersionRange: a key with a last release is unknown after it,
// in every direction: rendered (left out or refused), decoded (refused
// with the range), and a legacy alias of a newer key is expressible too.
func TestSchemaVersionRange(t *testing.T) {
	i := slices.IndexFunc(webhookTable.rows, func(r row[Webhook]) bool { return r.key == "auth-token" })
	j := slices.IndexFunc(webhookTable.rows, func(r row[Webhook]) bool { return r.key == "cert-fingerprint" })
	oldAlias := webhookTable.rows[i].alias
	webhookTable.rows[i].alias = "auth_token"
	webhookTable.rows[j].last = Version91
	compileSchema()
	t.Cleanup(func() {
		webhookTable.rows[i].alias = oldAlias
		webhookTable.rows[j].last = 0
		compileSchema()
	})

	if got := rule("post-installation-webhook.auth-token").accepts(Version92); !slices.Equal(got, []string{"auth-token", "auth_token"}) {
		t.Errorf("auth-token with an alias: 9.2 accepts %v", got)
	}
	fp := "ab:cd:ef:12:34:56:78:90:a1:b2:c3:d4:e5:f6:7a:8b:9c:0d:aa:bb:cc:dd:ee:ff:21:43:65:87:09:af:bd:ce"
	a := &Answer{
		Global:                  Global{Keyboard: "de", Country: "at", FQDN: FQDN{Name: "pve.example.com"}, Mailto: "a@b.c", Timezone: "UTC", RootPassword: "12345678"},
		Network:                 Network{Source: NetworkFromDHCP},
		DiskSetup:               DiskSetup{Filesystem: FilesystemExt4, DiskList: []string{"sda"}},
		PostInstallationWebhook: &Webhook{URL: "https://h/", CertFingerprint: fp},
	}
	if _, err := Render(a, Version91, RenderOptions{}); err != nil {
		t.Errorf("Render for 9.1, in range: %v", err)
	}
	_, err := Render(a, Version92, RenderOptions{})
	want := &UnsupportedError{Key: "post-installation-webhook.cert-fingerprint", Since: Version83, Until: Version91, Version: Version92}
	var u *UnsupportedError
	if !errors.As(err, &u) || *u != *want {
		t.Fatalf("Render for 9.2 after the last release: %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), "known to installers 8.3 to 9.1, not 9.2") {
		t.Errorf("error %q does not give the range", err)
	}
	out, err := Render(a, Version92, RenderOptions{DropUnsupported: true})
	if err != nil || strings.Contains(string(out), "fingerprint") {
		t.Errorf("Render for 9.2 with DropUnsupported: %v\n%s", err, out)
	}
	file := strings.Replace(string(out), "[post-installation-webhook]\n", "[post-installation-webhook]\ncert-fingerprint = '"+fp+"'\nauth_token = 't'\n", 1)
	_, err = Decode([]byte(file), Version92)
	want.Since = Version84 // the kebab-case spelling's first release
	if !errors.As(err, &u) || *u != *want {
		t.Errorf("Decode for 9.2: %v, want %v", err, want)
	}
	if strings.Contains(err.Error(), "auth_token") {
		t.Errorf("the alias auth_token is refused: %v", err)
	}
}

// optionAnswers set the keys the answers of render_test.go leave out, so
// that every key of the schema is in some golden file.
var optionAnswers = map[string]func() *Answer{
	"lvm": func() *Answer {
		return &Answer{
			Global: Global{Keyboard: "en-gb", Country: "gb", FQDN: FQDN{FromDHCP: true, Domain: "mgmt.example"},
				Mailto: "ops@example.com", Timezone: "Europe/London", RootPassword: "correct horse battery",
				RebootOnError: Ptr(true), RebootMode: RebootModeReboot},
			Network: Network{Source: NetworkFromDHCP},
			DiskSetup: DiskSetup{Filesystem: FilesystemXFS, DiskList: []string{"nvme0n1"}, LVM: &LVMOptions{
				HDSize: Ptr(100.0), SwapSize: Ptr(8.5), MaxRoot: Ptr(30.0), MaxVZ: Ptr(0.0), MinFree: Ptr(16.0)}},
		}
	},
	"btrfs": func() *Answer {
		return &Answer{
			Global: Global{Keyboard: "en-gb", Country: "gb", FQDN: FQDN{Name: "pve2.example.com"},
				Mailto: "ops@example.com", Timezone: "Europe/London", RootPassword: "correct horse battery"},
			Network: Network{Source: NetworkFromDHCP},
			DiskSetup: DiskSetup{Filesystem: FilesystemBtrfs, DiskList: []string{"sda", "sdb", "sdc", "sdd"},
				Btrfs: &BtrfsOptions{Raid: Raid10, HDSize: Ptr(200.0), Compress: "zstd"}},
		}
	},
}

// optionGoldens are the golden files of optionAnswers.
var optionGoldens = map[string][]Version{"lvm": {Version84, Version92}, "btrfs": {Version83, Version92}}

func TestRenderMatchesOptionGoldens(t *testing.T) {
	for name, versions := range optionGoldens {
		for _, v := range versions {
			t.Run(fmt.Sprintf("%s for %s", name, v), func(t *testing.T) {
				got, err := Render(optionAnswers[name](), v, RenderOptions{Header: fmt.Sprintf("answer.toml for installer %s\nevery %s option", v, name)})
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				CheckGolden(t, filepath.Join("testdata", "golden", fmt.Sprintf("%s-%s.toml", name, v)), got)
				back, err := Decode(got, v)
				if err != nil {
					t.Fatalf("Decode(Render()): %v", err)
				}
				if diff := cmp.Diff(optionAnswers[name](), back); diff != "" {
					t.Errorf("round trip (-rendered +decoded):\n%s", diff)
				}
			})
		}
	}
}
