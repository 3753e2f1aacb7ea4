package plasmanode

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/plasmactl/plasma-node/internal/usage"
	"github.com/plasmactl/plasma-node/nodes"
	"github.com/plasmactl/plasma-node/providers"
	"github.com/plasmactl/plasma-node/tofu"
)

// ErrInvalidState: infrastructure.state in platform.yaml names an
// unknown backend, lacks a required field, or holds a credential.
var ErrInvalidState = usage.New("invalid infrastructure.state")

// awsEnv are the variables the s3 backend reads its credentials and
// settings from, passed on to tofu when set.
var awsEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
	"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"}

// stateBackend turns infrastructure.state into a tofu backend and the
// environment it needs. Credentials come only from getenv (PG_CONN_STR
// for pg, AWS_* for s3): they go into tofu's environment, never into a
// file of the working directory.
//
// Errors: [ErrInvalidState]; [providers.ErrNoCredentials] for pg
// without PG_CONN_STR.
func stateBackend(plat *nodes.Platform, getenv func(string) string) (tofu.Backend, map[string]string, error) {
	st := plat.Infrastructure.State
	where := plat.File()
	if where == "" {
		where = "platform.yaml"
	}
	where += ": infrastructure.state"
	for _, f := range []struct{ name, v, env string }{
		{"conn_str", st.ConnStr, tofu.PGConnEnv}, {"access_key", st.AccessKey, "AWS_ACCESS_KEY_ID"}, {"secret_key", st.SecretKey, "AWS_SECRET_ACCESS_KEY"},
	} {
		if f.v != "" {
			return tofu.Backend{}, nil, fmt.Errorf("%s.%s: %w: a credential does not belong in platform.yaml; set %s in the environment", where, f.name, ErrInvalidState, f.env)
		}
	}
	if len(st.Unknown) > 0 {
		return tofu.Backend{}, nil, fmt.Errorf("%s: %w: unknown setting %s; want backend, schema_name (pg), bucket, key, region, endpoint (s3)",
			where, ErrInvalidState, strings.Join(st.Unknown, ", "))
	}
	env := map[string]string{}
	switch st.Backend {
	case "", tofu.BackendLocal:
		if st.SchemaName != "" || st.Bucket != "" || st.Key != "" || st.Region != "" || st.Endpoint != "" {
			return tofu.Backend{}, nil, fmt.Errorf("%s: %w: backend local takes no settings; set backend: pg or s3", where, ErrInvalidState)
		}
		return tofu.Backend{}, env, nil
	case tofu.BackendPG:
		if st.Bucket != "" || st.Key != "" || st.Region != "" || st.Endpoint != "" {
			return tofu.Backend{}, nil, fmt.Errorf("%s: %w: bucket, key, region and endpoint are s3 settings; pg takes schema_name", where, ErrInvalidState)
		}
		conn := getenv(tofu.PGConnEnv)
		if conn == "" {
			return tofu.Backend{}, nil, fmt.Errorf("platform %s: state backend pg: %w: set %s to the PostgreSQL connection string (it is never written to a file)",
				plat.Name, providers.ErrNoCredentials, tofu.PGConnEnv)
		}
		env[tofu.PGConnEnv] = conn
		schema := st.SchemaName
		if schema == "" {
			schema = "plasma_node_" + strings.ReplaceAll(plat.Name, "-", "_")
		}
		return tofu.Backend{Type: tofu.BackendPG, SchemaName: schema}, env, nil
	case tofu.BackendS3:
		if st.SchemaName != "" {
			return tofu.Backend{}, nil, fmt.Errorf("%s.schema_name: %w: a pg setting; s3 takes bucket, key, region and endpoint", where, ErrInvalidState)
		}
		if st.Bucket == "" || st.Region == "" {
			return tofu.Backend{}, nil, fmt.Errorf("%s: %w: backend s3 needs bucket and region (bucket %q, region %q)", where, ErrInvalidState, st.Bucket, st.Region)
		}
		key := st.Key
		if key == "" {
			key = "plasma-node/" + plat.Name + "/terraform.tfstate"
		}
		b := tofu.Backend{Type: tofu.BackendS3, Bucket: st.Bucket, Key: key, Region: st.Region}
		if st.Endpoint != "" {
			if u, err := url.Parse(st.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				return tofu.Backend{}, nil, fmt.Errorf("%s.endpoint %q: %w: want an http:// or https:// URL with a host and no user info", where, redactURL(st.Endpoint), ErrInvalidState)
			}
			b.Attrs = offlineS3(st.Endpoint)
		}
		for _, k := range awsEnv {
			if v := getenv(k); v != "" {
				env[k] = v
			}
		}
		return b, env, nil
	}
	return tofu.Backend{}, nil, fmt.Errorf("%s.backend %q: %w: want %s (the default), %s or %s", where, st.Backend, ErrInvalidState, tofu.BackendLocal, tofu.BackendPG, tofu.BackendS3)
}

// offlineS3 are the s3 backend arguments for an S3-compatible server at
// endpoint (MinIO, Ceph, SeaweedFS, Garage) that is not AWS and may have
// no way out to it: path-style addressing (no bucket subdomain to
// resolve), and none of the calls tofu's s3 backend otherwise makes to
// AWS before it touches the bucket: STS GetCallerIdentity to validate the
// credentials, STS/IAM to look up the account id, the EC2 instance
// metadata service for credentials, and the check of the region against
// AWS's list (a self-hosted server's region is any name). Credentials
// still come only from the environment.
func offlineS3(endpoint string) map[string]any {
	return map[string]any{
		"endpoints":                   map[string]any{"s3": endpoint},
		"use_path_style":              true,
		"skip_credentials_validation": true,
		"skip_requesting_account_id":  true,
		"skip_metadata_api_check":     true,
		"skip_region_validation":      true,
	}
}

// redactURL drops what could be a password from a URL shown in an error.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		return "…" + s[i:]
	}
	return s
}
