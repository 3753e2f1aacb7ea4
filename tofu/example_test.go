package tofu_test

import (
	"context"
	"fmt"
	"log"
	"os"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/plasmactl/plasma-node/tofu"
)

// A provider adopts an existing server and declares its token as a
// variable, so the configuration never holds the credential.
func Example() {
	cfg := &tofu.Config{
		RequiredProviders: []tofu.RequiredProvider{{Name: "hcloud", Source: "hetznercloud/hcloud", Version: "~> 1.60"}},
		Variables:         []tofu.Variable{{Name: "hcloud_token", Type: "string", Sensitive: true}},
		Providers:         []tofu.Provider{{Name: "hcloud", Attrs: map[string]any{"token": tofu.Expr("var.hcloud_token")}}},
		Imports:           []tofu.Import{{To: "hcloud_server.prod_control_001", ID: "4711"}},
		Resources: []tofu.Resource{{
			Type: "hcloud_server", Name: "prod_control_001",
			Attrs: map[string]any{
				"name":        "prod-control-001",
				"server_type": "cx22",
				"image":       "debian-12",
				"labels":      map[string]string{"pool": "control"},
			},
			Lifecycle: &tofu.Lifecycle{IgnoreChanges: []string{"ssh_keys", "user_data"}},
		}},
		Outputs: []tofu.Output{{Name: "ipv4", Value: tofu.Expr("hcloud_server.prod_control_001.ipv4_address")}},
	}
	b, err := cfg.Render()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output:
	// terraform {
	//   required_providers {
	//     hcloud = {
	//       source  = "hetznercloud/hcloud"
	//       version = "~> 1.60"
	//     }
	//   }
	// }
	//
	// variable "hcloud_token" {
	//   type      = string
	//   sensitive = true
	// }
	//
	// provider "hcloud" {
	//   token = var.hcloud_token
	// }
	//
	// import {
	//   to = hcloud_server.prod_control_001
	//   id = "4711"
	// }
	//
	// resource "hcloud_server" "prod_control_001" {
	//   image = "debian-12"
	//   labels = {
	//     pool = "control"
	//   }
	//   name        = "prod-control-001"
	//   server_type = "cx22"
	//
	//   lifecycle {
	//     ignore_changes = [ssh_keys, user_data]
	//   }
	// }
	//
	// output "ipv4" {
	//   value = hcloud_server.prod_control_001.ipv4_address
	// }
}

// Classify with the OVH rule: an os change reinstalls the server.
func ExampleClassify() {
	plan := &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{
		Address: "ovh_dedicated_server.prod_control_existing_0", Mode: tfjson.ManagedResourceMode, Type: "ovh_dedicated_server",
		Change: &tfjson.Change{
			Actions: tfjson.Actions{tfjson.ActionUpdate},
			Before:  map[string]any{"os": "debian12_64", "display_name": "a"},
			After:   map[string]any{"os": "ubuntu2404_64", "display_name": "a"},
		},
	}}}
	ovh := tofu.DestructiveAttrs(map[string][]string{"ovh_dedicated_server": {"os", "boot_id", "customizations"}})
	s := tofu.Classify(plan, ovh)
	fmt.Println(s)
	for _, c := range s.DestructiveUpdates {
		fmt.Println(c.Address, c.DestructiveAttrs)
	}
	// Output:
	// 0 to import, 0 to create, 1 to update (1 destructive), 0 to replace, 0 to delete
	// ovh_dedicated_server.prod_control_existing_0 [os]
}

// A whole run: find tofu, write the configuration and credentials, plan,
// show the classified plan, apply exactly that plan, and clean up.
func ExampleRunner() {
	ctx := context.Background()
	bin, err := tofu.Find(ctx, tofu.FindOptions{})
	if err != nil {
		log.Fatal(err) // matches tofu.ErrNoBinary when there is none
	}
	wd, err := tofu.OpenWorkdir(".", "prod")
	if err != nil {
		log.Fatal(err)
	}
	defer wd.Clean(tofu.CleanOptions{})
	if err := wd.WriteConfig(&tofu.Config{ /* ... */ }); err != nil {
		log.Fatal(err)
	}
	remove, err := wd.WriteVarsFile(map[string]any{"hcloud_token": os.Getenv("HCLOUD_TOKEN")})
	if err != nil {
		log.Fatal(err)
	}
	defer remove()
	r, err := tofu.NewRunner(bin, wd, tofu.RunnerOptions{Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Init(ctx, tofu.InitOptions{}); err != nil {
		log.Fatal(err)
	}
	plan, err := r.Plan(ctx, tofu.PlanOptions{})
	if err != nil {
		log.Fatal(err)
	}
	js, err := r.Show(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tofu.Classify(js, nil))
	if err := r.Apply(ctx, plan); err != nil {
		log.Fatal(err)
	}
}
