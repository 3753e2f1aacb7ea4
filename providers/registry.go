package providers

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// registry is the one piece of package-level mutable state: provider
// subpackages add themselves from init.
var registry = struct {
	sync.RWMutex
	m map[string]Provider
}{m: map[string]Provider{}}

// Register adds p under p.Name(). It is meant for the init function of a
// provider subpackage, and panics on a nil provider, an empty name or a
// name registered twice (a programming error).
func Register(p Provider) {
	if p == nil {
		panic("providers.Register: nil provider")
	}
	name := p.Name()
	if name == "" {
		panic("providers.Register: provider with an empty name")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("providers.Register: provider " + name + " registered twice")
	}
	registry.m[name] = p
}

// Get returns the provider registered under name. A provider subpackage
// registers itself when imported: import it (blank) to make it known.
//
// Errors: [ErrUnknownProvider], listing the known names.
func Get(name string) (Provider, error) {
	registry.RLock()
	p, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		known := Names()
		list := "none; import a provider subpackage"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		return nil, fmt.Errorf("provider %q: %w: want one of: %s", name, ErrUnknownProvider, list)
	}
	return p, nil
}

// Names returns the registered provider names, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.m))
	for n := range registry.m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
