package tofu

import (
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Backend types [Backend.Type] accepts.
const (
	BackendLocal = "local"
	BackendPG    = "pg"
	BackendS3    = "s3"
)

// PGConnEnv is the environment variable the pg backend reads its
// connection string from. The connection string holds a password, so it
// is never written into the configuration: put it in [RunnerOptions.Env].
const PGConnEnv = "PG_CONN_STR"

// Backend is where tofu keeps state, with tofu's own locking. The zero
// value is the local backend: state in the working directory, transient
// (see [Workdir.Clean]). Credentials never go here: pg reads its
// connection string from [PGConnEnv], s3 its keys from the usual AWS
// environment variables.
type Backend struct {
	// Type is "" or [BackendLocal], [BackendPG] or [BackendS3].
	Type string

	// SchemaName is the pg schema holding the state; empty means tofu's
	// default (terraform_remote_state). pg only.
	SchemaName string

	// Bucket, Key and Region locate the state object. s3 only, all
	// required. The s3 backend is rendered with use_lockfile = true
	// (locking through a lock object beside the state; tofu >= 1.10,
	// Terraform >= 1.11).
	Bucket, Key, Region string

	// Attrs are further backend arguments (an s3 endpoint, a pg table
	// name), never credentials: a literal value for an argument named
	// like one is refused.
	Attrs map[string]any
}

// Persistent reports whether state lives outside the working directory
// and outlives a run (pg, s3). [Workdir.Clean] never touches such state;
// only the local backend's state is transient.
func (b Backend) Persistent() bool {
	return b.Type == BackendPG || b.Type == BackendS3
}

// block reports whether b needs a backend block.
func (b Backend) block() bool {
	return b.Type != "" && (b.Type != BackendLocal || len(b.Attrs) > 0)
}

func (b Backend) render(tb *hclwrite.Body) error {
	where := "backend " + b.Type
	attrs := map[string]any{}
	switch b.Type {
	case "", BackendLocal:
		if b.Type == "" && len(b.Attrs) > 0 {
			return invalidf("backend: attributes without a type: want Type %q, %q or %q", BackendLocal, BackendPG, BackendS3)
		}
	case BackendPG:
		if b.SchemaName != "" {
			attrs["schema_name"] = b.SchemaName
		}
	case BackendS3:
		if b.Bucket == "" || b.Key == "" || b.Region == "" {
			return invalidf("backend s3: bucket %q, key %q, region %q: want all three set", b.Bucket, b.Key, b.Region)
		}
		attrs["bucket"], attrs["key"], attrs["region"] = b.Bucket, b.Key, b.Region
		attrs["use_lockfile"] = true
	default:
		return invalidf("backend type %q: want %q (the default), %q or %q", b.Type, BackendLocal, BackendPG, BackendS3)
	}
	if err := checkNoSecrets(where, b.Attrs, nil); err != nil {
		return err
	}
	for k, v := range b.Attrs {
		if _, ok := attrs[k]; ok {
			return invalidf("%s: attribute %s is set by a Backend field: set it there", where, k)
		}
		attrs[k] = v
	}
	if !b.block() {
		return nil
	}
	blankLine(tb)
	return fillBody(tb.AppendNewBlock("backend", []string{b.Type}).Body(), where, attrs, nil)
}
