package answer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// DeprecatedKey is a key spelled in snake_case, which installers from 9.0
// still read but whose assistant (validate-answer) warns about: "Section
// [Table] contains deprecated key `Key`, use `Instead` instead."
type DeprecatedKey struct {
	// Table is the dotted path of the key's table as written in the file
	// ("global", "disk-setup.zfs"); empty for the top level.
	Table string
	// Key is the key as written: "root_password".
	Key string
	// Instead is its kebab-case spelling: "root-password".
	Instead string
}

// DeprecatedKeys lists the keys of an answer file spelled with an
// underscore, in file order by table then name, as the assistant of 9.0
// and later reports them; the udev property names of network.filter and
// disk-setup.filter (ID_SERIAL) are not keys of the schema and are left
// alone. Installers before 9.0 do not warn. The error wraps [ErrInvalid]
// for a file that is not TOML.
func DeprecatedKeys(data []byte) ([]DeprecatedKey, error) {
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read answer keys: %w: %w", ErrInvalid, err)
	}
	var out []DeprecatedKey
	var walk func(path string, t map[string]any)
	walk = func(path string, t map[string]any) {
		if path == "network.filter" || path == "disk-setup.filter" {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if strings.Contains(k, "_") {
				out = append(out, DeprecatedKey{Table: path, Key: k, Instead: strings.ReplaceAll(k, "_", "-")})
			}
			if sub, ok := t[k].(map[string]any); ok {
				walk(joinPath(path, k), sub)
			}
		}
	}
	walk("", m)
	return out, nil
}
