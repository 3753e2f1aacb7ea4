// Command custom-provider adds a provider for a new cloud to plasma-node
// and uses it: the whole provider is provider.go (under 150 lines); the
// program makes a provider set of the built-in providers and its own,
// opens the project with it (plasmanode.Options.Providers), and then
// plasma-node's own Provision plans and applies a pool with it through
// real OpenTofu. The "cloud" is a folder whose servers are files (the
// hashicorp/local plugin's local_file), so it runs offline; a real cloud
// differs only in its plugin, resource type and attributes.
//
// It needs tofu (-tofu, $PLASMA_TOFU, or on PATH) and the
// hashicorp/local plugin (from the registry, or a mirror named by
// $TF_CLI_CONFIG_FILE as .ci/tools.sh builds one).
package main
