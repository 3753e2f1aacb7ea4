// Package tofu drives OpenTofu (or Terraform) for plasma-node: it finds
// the binary with hc-install's finders ([Find]), keeps one working
// directory per platform ([Workdir]), writes the configuration as HCL
// with hclwrite from a small builder ([Config]), runs init, plan to a
// saved plan file, show, apply of exactly that plan, destroy and output
// through terraform-exec ([Runner]), and classifies a plan into creates,
// in-place updates, destructive updates, replacements and deletes
// ([Classify]).
//
// It knows no cloud: which resources a pool becomes, which attributes are
// destructive and which credentials a provider needs belong to the
// providers packages, and the confirmation policy to their callers. It
// never downloads a binary unless asked to ([FindOptions.Install]) and
// never writes credentials into the configuration: they go through the
// environment ([RunnerOptions.Env]) or a 0600 variables file removed
// after the run ([Workdir.WriteVarsFile]).
//
// State is transient by default, as in plasmactl-node: node files are the
// source of truth, [Workdir.Clean] removes state, plan and variables
// files, and every run re-adopts existing servers with import blocks.
// With a pg or s3 [Backend] the state persists and is locked by tofu.
package tofu
