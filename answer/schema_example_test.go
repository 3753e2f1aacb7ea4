package answer_test

import (
	"fmt"

	"github.com/plasmactl/plasma-node/answer"
)

// The keys an installer release added, from the schema.
func ExampleSchema() {
	for _, k := range answer.Schema() {
		if k.First == answer.Version92 {
			fmt.Printf("%s (%s) alias %q\n", k.Path, k.Type, k.Alias)
		}
	}
	// Output:
	// global.subscription-key (string) alias "subscription_key"
	// post-installation-webhook.auth-token (string) alias "auth_token"
}
