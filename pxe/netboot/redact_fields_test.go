package netboot

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/answer"
	"github.com/plasmactl/plasma-node/pxe/backend"
)

// What the window's port does with each field of a node: shows it as it
// is, masks it, passes it through the free-text redactor, drops it, or
// (nested) decides field by field for the struct it holds.
const (
	shown  = "shown"
	masked = "masked"
	text   = "text"
	drop   = "dropped"
	nested = "nested"
)

// portFields is every field of the node the window's port reports, and
// what it does with it. A field added to one of these types fails
// TestRedactorShowsOnlyTheFieldsItNames until it is listed here, and the
// redactor drops it until it is written into redactor.node.
var portFields = map[reflect.Type]map[string]string{
	reflect.TypeFor[backend.Node](): {
		"Name": shown, "State": shown, "BootMethod": shown, "MediaAnswer": shown,
		"Created": shown, "ConsumedAt": shown, "InstalledAt": shown,
		"BootMode": shown, "SecureBoot": shown, "HostKeyFingerprints": shown,
		"MACs": masked, "BootDisk": masked, "Pools": masked, "Serial": masked, "UUID": masked,
		"StaticAddress": masked, "InstallIP": masked, "Address": masked,
		"Problem": text, "Install": nested,
	},
	reflect.TypeFor[answer.InstallReport](): {
		"Schema": shown, "FQDN": shown, "ProductVersion": shown, "Kernel": shown,
		"BootMode": shown, "SecureBoot": shown, "HostKeys": shown,
		"MachineID": masked, "MACs": masked, "NICNames": masked,
		"Management": nested, "BootDisks": nested, "Token": drop,
	},
	reflect.TypeFor[answer.ReportInterface](): {"Name": shown, "MAC": masked, "Address": drop},
	reflect.TypeFor[answer.ReportDisk]():      {"Name": shown, "Serial": masked, "Size": shown},
	reflect.TypeFor[BootEvent]():              {"Time": shown, "Stage": shown, "Node": shown, "MAC": masked, "IP": masked, "Detail": text},
	reflect.TypeFor[InboxMachine](): {"Rule": shown, "MAC": masked, "Serial": masked,
		"Product": text, "Name": text, "Reason": text},
}

// TestRedactorShowsOnlyTheFieldsItNames fills every field of a node
// (and of its install report), a timeline event and an inbox row with an identifier-like value and checks
// what the window's port makes of each: the redactor is an allowlist.
func TestRedactorShowsOnlyTheFieldsItNames(t *testing.T) {
	var n backend.Node
	fillFields(reflect.ValueOf(&n).Elem(), "n")
	got := redactor{}.node(n)
	checkFields(t, "Node", reflect.ValueOf(n), reflect.ValueOf(got))

	var ev BootEvent
	fillFields(reflect.ValueOf(&ev).Elem(), "ev")
	checkFields(t, "BootEvent", reflect.ValueOf(ev), reflect.ValueOf(redactor{}.event(ev)))

	var m InboxMachine
	fillFields(reflect.ValueOf(&m).Elem(), "m")
	checkFields(t, "InboxMachine", reflect.ValueOf(m), reflect.ValueOf(redactor{}.inbox([]InboxMachine{m})[0]))
}

// fillFields sets every field under v to a non-zero value that names its
// path.
func fillFields(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(strings.NewReplacer(".", "x", "[", "", "]", "").Replace(path) + "0123456789")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Int, reflect.Int64:
		v.Set(reflect.ValueOf(42).Convert(v.Type()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillFields(v.Index(0), path+"[0]")
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillFields(k, path+"Key")
		fillFields(e, path+"Value")
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillFields(v.Elem(), path)
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[time.Time]():
			v.Set(reflect.ValueOf(time.Unix(1_700_000_000, 0).UTC()))
		case reflect.TypeFor[netip.Prefix]():
			v.Set(reflect.ValueOf(netip.MustParsePrefix("192.0.2.77/24")))
		default:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					fillFields(v.Field(i), path+"."+v.Type().Field(i).Name)
				}
			}
		}
	default:
		panic(fmt.Sprintf("fillFields: %s is a %s: teach the test to fill it", path, v.Kind()))
	}
}

// checkFields checks each field of in (a struct) against got by the
// field's class in portFields.
func checkFields(t *testing.T, path string, in, got reflect.Value) {
	t.Helper()
	classes, ok := portFields[in.Type()]
	if !ok {
		t.Fatalf("%s: %s has no entry in portFields", path, in.Type())
	}
	for i := range in.NumField() {
		f := in.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		p := path + "." + f.Name
		class, ok := classes[f.Name]
		if !ok {
			t.Errorf("%s is new: list it in portFields (shown, masked, text, dropped or nested) and, unless dropped, in redactor.node", p)
			continue
		}
		a, b := in.Field(i), got.Field(i)
		switch class {
		case shown:
			if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				t.Errorf("%s is shown as it is: got %v, want %v", p, b, a)
			}
		case text:
			if want := (redactor{}).text(a.String()); b.String() != want {
				t.Errorf("%s goes through the text redactor: got %q, want %q", p, b, want)
			}
		case drop:
			if !b.IsZero() {
				t.Errorf("%s is not shown: got %v", p, b)
			}
		case masked:
			full := fmt.Sprint(a.Interface())
			if b.IsZero() || strings.Contains(fmt.Sprint(b.Interface()), strings.Trim(full, "[]map")) {
				t.Errorf("%s is masked: got %v from %v", p, b, a)
			}
		case nested:
			for a.Kind() == reflect.Pointer || a.Kind() == reflect.Slice {
				if b.IsNil() {
					t.Errorf("%s: got nil, want its fields decided one by one", p)
					break
				}
				if a.Kind() == reflect.Pointer {
					a, b = a.Elem(), b.Elem()
				} else {
					a, b = a.Index(0), b.Index(0)
				}
			}
			if a.Kind() == reflect.Struct {
				checkFields(t, p, a, b)
			}
		}
	}
	for name := range classes {
		if _, ok := in.Type().FieldByName(name); !ok {
			t.Errorf("%s.%s is listed in portFields but is no field of %s", path, name, in.Type())
		}
	}
}
