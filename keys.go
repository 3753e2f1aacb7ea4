package plasmanode

import (
	"context"
	"fmt"
	"strings"

	"github.com/plasmactl/plasma-node/internal/usage"
	"github.com/plasmactl/plasma-node/nodes"
)

// ErrUnknownKey is wrapped by the error of an operation that writes node
// files or provisions when the platform's platform.yaml has a key, in a
// section plasma-node reads, that no setting has
// ([nodes.Platform.UnknownKeys]): a misspelt setting would silently be
// ignored. Read operations log a warning for them instead.
var ErrUnknownKey = usage.New("unknown key in platform.yaml")

// refuseUnknownKeys returns an error wrapping [ErrUnknownKey] naming
// each unknown key of plat with its file, line and nearest valid key.
func refuseUnknownKeys(plat *nodes.Platform) error {
	keys := plat.UnknownKeys()
	if len(keys) == 0 {
		return nil
	}
	msgs := make([]string, len(keys))
	for i, k := range keys {
		msgs[i] = k.String()
	}
	return fmt.Errorf("%w: %s", ErrUnknownKey, strings.Join(msgs, "; "))
}

// warnUnknownKeys logs a warning for each unknown key of the platforms'
// platform.yaml files; a platform that cannot be read is left to the
// operation to report.
func (p *Project) warnUnknownKeys(ctx context.Context, platforms ...string) {
	for _, name := range platforms {
		plat, err := p.Store.Platform(ctx, name)
		if err != nil {
			continue
		}
		for _, k := range plat.UnknownKeys() {
			p.log.Warn("unknown key in platform.yaml", "file", k.File, "line", k.Line, "key", k.Key, "nearest", k.Nearest)
		}
	}
}
