package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// checkKeys walks the JSON value data as it would decode into a value of
// type t and refuses what encoding/json lets through: a key given twice
// in one object (the last would win) and a key that is not spelt exactly
// as a field's name ({"Scope": …} for "scope"; encoding/json matches
// them case-insensitively), at every level. An unknown key in a nested
// object is refused too, naming its path and the keys it may be; one at
// the top is left to the caller (decodeStrict, or a list of its own). It
// returns the error and the key at fault.
func checkKeys(data []byte, t reflect.Type) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkKeys(dec, t, "")
}

var rawMessage = reflect.TypeOf(json.RawMessage(nil))

func walkKeys(dec *json.Decoder, t reflect.Type, path string) (string, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", err
			}
			key, _ := kt.(string)
			at := join(path, key)
			if seen[key] {
				return at, fmt.Errorf("key %q is given twice", at)
			}
			seen[key] = true
			var child reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return at, fmt.Errorf("unknown field %q (keys are case-sensitive: %q)", at, join(path, name))
						}
					}
					if path != "" {
						return at, fmt.Errorf("unknown field %q (want %s)", at, strings.Join(sortedKeys(fields), ", "))
					}
				}
				child = ft
			case t != nil && t.Kind() == reflect.Map:
				child = t.Elem()
			}
			if f, err := walkKeys(dec, child, at); err != nil {
				return f, err
			}
		}
		_, err = dec.Token()
		return "", err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if f, err := walkKeys(dec, elem, path); err != nil {
				return f, err
			}
		}
		_, err = dec.Token()
		return "", err
	}
	return "", nil
}

// sortedKeys returns the names of fields, sorted.
func sortedKeys(fields map[string]reflect.Type) []string {
	out := make([]string, 0, len(fields))
	for name := range fields {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields returns the JSON names of t's fields (embedded structs'
// flattened) with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && !strings.Contains(tag, ",") {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range jsonFields(ft) {
					if _, ok := out[n]; !ok {
						out[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// errKeys marks a body refused by checkKeys.
var errKeys = errors.New("malformed request")
