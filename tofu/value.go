package tofu

import (
	"math"
	"reflect"
	"slices"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// Expr is an HCL expression written as is, like `var.hcloud_token`,
// `hcloud_server.web.ipv4_address` or `{ for k, s in hcloud_server.web :
// k => s.id }`. [Config.Render] checks that it parses as exactly one
// expression. Plain strings are always quoted; use Expr for references.
type Expr string

var ctyTrue = cty.True

// valueTokens returns the HCL tokens for v; see [Config] for the types
// accepted.
func valueTokens(where string, v any) (hclwrite.Tokens, error) {
	switch x := v.(type) {
	case nil:
		return hclwrite.TokensForValue(cty.NullVal(cty.DynamicPseudoType)), nil
	case Expr:
		return exprTokens(where, string(x))
	case cty.Value:
		if !x.IsWhollyKnown() {
			return nil, invalidf("%s: unknown cty value: want a known value", where)
		}
		return hclwrite.TokensForValue(x), nil
	case string:
		if !utf8.ValidString(x) {
			return nil, invalidf("%s: string is not valid UTF-8", where)
		}
		return hclwrite.TokensForValue(cty.StringVal(x)), nil
	case bool:
		return hclwrite.TokensForValue(cty.BoolVal(x)), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return valueTokens(where, rv.String())
	case reflect.Bool:
		return valueTokens(where, rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return hclwrite.TokensForValue(cty.NumberIntVal(rv.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return hclwrite.TokensForValue(cty.NumberUIntVal(rv.Uint())), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, invalidf("%s: number %v: want a finite number", where, f)
		}
		return hclwrite.TokensForValue(cty.NumberFloatVal(f)), nil
	case reflect.Slice, reflect.Array:
		elems := make([]hclwrite.Tokens, 0, rv.Len())
		for i := range rv.Len() {
			t, err := valueTokens(where, rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			elems = append(elems, t)
		}
		return hclwrite.TokensForTuple(elems), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		keys := make([]string, 0, rv.Len())
		vals := map[string]reflect.Value{}
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			keys = append(keys, k)
			vals[k] = it.Value()
		}
		slices.Sort(keys)
		attrs := make([]hclwrite.ObjectAttrTokens, 0, len(keys))
		for _, k := range keys {
			if !utf8.ValidString(k) {
				return nil, invalidf("%s: object key is not valid UTF-8", where)
			}
			t, err := valueTokens(where+"."+k, vals[k].Interface())
			if err != nil {
				return nil, err
			}
			attrs = append(attrs, hclwrite.ObjectAttrTokens{Name: keyTokens(k), Value: t})
		}
		return hclwrite.TokensForObject(attrs), nil
	}
	return nil, invalidf("%s: value of type %T: want nil, a string, bool, number, cty.Value, Expr, or a slice or string-keyed map of those", where, v)
}

// keyTokens writes an object key bare when it is a plain identifier, and
// quoted otherwise (and for the keywords true, false and null, which a
// reader could take for values).
func keyTokens(k string) hclwrite.Tokens {
	if isIdentifier(k) && k != "true" && k != "false" && k != "null" {
		return hclwrite.TokensForIdentifier(k)
	}
	return hclwrite.TokensForValue(cty.StringVal(k))
}

// exprTokens parses src as one HCL expression and returns its tokens.
func exprTokens(where, src string) (hclwrite.Tokens, error) {
	if src == "" {
		return nil, invalidf("%s: empty expression: want an HCL expression like %q", where, "var.token")
	}
	if !utf8.ValidString(src) {
		return nil, invalidf("%s: expression is not valid UTF-8", where)
	}
	if _, diags := hclsyntax.ParseExpression([]byte(src), "expr", hcl.InitialPos); diags.HasErrors() {
		return nil, invalidf("%s: expression %q does not parse: %s", where, src, diags.Error())
	}
	f, diags := hclwrite.ParseConfig([]byte("x = "+src+"\n"), "expr", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, invalidf("%s: expression %q does not parse: %s", where, src, diags.Error())
	}
	attrs := f.Body().Attributes()
	if len(attrs) != 1 || attrs["x"] == nil || len(f.Body().Blocks()) != 0 {
		return nil, invalidf("%s: expression %q is not a single expression", where, src)
	}
	return attrs["x"].Expr().BuildTokens(nil), nil
}

// traversalTokens parses src as an absolute reference with at least min
// steps, like `hcloud_server.web["a"]`, and returns its tokens.
func traversalTokens(where, src string, minSteps int) (hclwrite.Tokens, error) {
	tr, diags := hclsyntax.ParseTraversalAbs([]byte(src), "ref", hcl.InitialPos)
	if diags.HasErrors() || len(tr) < minSteps {
		return nil, invalidf("%s: reference %q: want an address like %q", where, src, "type.name")
	}
	return hclwrite.TokensForTraversal(tr), nil
}
