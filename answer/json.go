package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format is the file format of an answer: TOML, which every installer
// reads, or JSON, which installers from 9.2 ask for first.
type Format uint8

// Answer formats.
const (
	// FormatTOML is answer.toml, the only format before 9.2 and the one
	// a request that does not ask for JSON gets.
	FormatTOML Format = iota
	// FormatJSON is the installer's AutoInstallerConfig as one JSON
	// object: the same tables and keys as the TOML (kebab-case, the
	// snake_case aliases read too), tables as objects, a global.fqdn table
	// as an object. proxmox-fetch-answer from 9.2 asks for it ("Accept:
	// application/json, application/toml;q=0.5") and reads a reply whose
	// Content-Type starts with application/json as JSON, anything else as
	// TOML.
	FormatJSON
)

// jsonSince is the first installer release reading JSON answers.
const jsonSince = Version92

// TakesJSON reports whether installer v reads a JSON answer (9.2 and
// later).
func (v Version) TakesJSON() bool { return v >= jsonSince }

// String is "toml" or "json".
func (f Format) String() string {
	if f == FormatJSON {
		return "json"
	}
	return "toml"
}

// ContentType is the media type of an answer in the format:
// "application/toml" or "application/json".
func (f Format) ContentType() string {
	if f == FormatJSON {
		return "application/json"
	}
	return "application/toml"
}

// SniffFormat tells the format of an answer file by its content: JSON when
// its first character after white space (and a byte order mark) is "{",
// which no TOML document starts with; TOML otherwise.
func SniffFormat(data []byte) Format {
	data = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	if len(data) > 0 && data[0] == '{' {
		return FormatJSON
	}
	return FormatTOML
}

// errJSONTooOld is the problem of a JSON answer for an installer before
// 9.2.
func errJSONTooOld(v Version) error {
	return fmt.Errorf("%w: JSON answers need installer %s or later, not %s; render TOML", ErrUnsupported, jsonSince, v)
}

// renderJSON is Render for [FormatJSON]: the keys Render writes as TOML,
// in the same order, as one compact JSON object.
func renderJSON(a *Answer, v Version, opts RenderOptions) ([]byte, error) {
	if err := checkVersion(v); err != nil {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
	}
	if !v.TakesJSON() {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, errJSONTooOld(v))
	}
	b, err := prepare(a, v, opts)
	if err != nil {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
	}
	out, err := appendJSON(make([]byte, 0, 1024), answerTable.render(b, v))
	if err != nil {
		return nil, fmt.Errorf("render answer for installer %s: %w", v, err)
	}
	return append(out, '\n'), nil
}

// appendJSON appends t as a JSON object, its keys in order.
func appendJSON(b []byte, t tomlTable) ([]byte, error) {
	b = append(b, '{')
	for i, e := range t {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, e.key) // keys are ASCII names of the schema
		b = append(b, ':')
		var err error
		if sub, ok := e.value.(tomlTable); ok {
			b, err = appendJSON(b, sub)
		} else {
			var x []byte
			x, err = json.Marshal(e.value)
			b = append(b, x...)
		}
		if err != nil {
			return nil, fmt.Errorf("encode json: %w", err)
		}
	}
	return append(b, '}'), nil
}

// DecodeJSON parses a JSON answer the way installer v does (9.2 and
// later; see [FormatJSON]) and validates it, like [Decode] does a TOML
// one: the same keys, spellings and rules. JSON's types map onto TOML's:
// a number without fraction or exponent is an integer, any other a float
// (read where a size is wanted, refused where an integer is), and null is
// an absent key, as serde reads it for an optional one.
//
// Errors wrap [ErrInvalid] (not one JSON object, or what Decode refuses)
// or [ErrUnsupported] (an installer before 9.2, or a key newer than v).
func DecodeJSON(data []byte, v Version) (*Answer, error) {
	if err := checkVersion(v); err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w", v, err)
	}
	if !v.TakesJSON() {
		return nil, fmt.Errorf("decode answer for installer %s: %w", v, errJSONTooOld(v))
	}
	m, err := parseJSONObject(data)
	if err != nil {
		return nil, fmt.Errorf("decode answer for installer %s: %w: %w", v, ErrInvalid, err)
	}
	return decodeMap(m, v)
}

// parseJSONObject reads data as one JSON object, with TOML's types.
func parseJSONObject(data []byte) (map[string]any, error) {
	data = bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("\ufeff"))
	if SniffFormat(data) != FormatJSON {
		return nil, errors.New("want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return jsonValue(m).(map[string]any), nil
}

// jsonValue turns decoded JSON into TOML's types: numbers into int64 or
// float64, null members of objects dropped.
func jsonValue(x any) any {
	switch v := x.(type) {
	case json.Number:
		s := v.String()
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			v[k] = jsonValue(e)
		}
	case []any:
		for i, e := range v {
			v[i] = jsonValue(e)
		}
	}
	return x
}
