package registrar

// The environment variables of node-provisioner's settings, read by both
// binaries and the SDK's local provisioning.
const (
	// EnvDir names the state folder (or store URL).
	EnvDir = "NODE_PROVISIONER_STATE_DIR"
	// EnvSecretsDir names the secrets folder.
	EnvSecretsDir = "NODE_PROVISIONER_SECRETS_DIR"
	// EnvServer is the management API's URL, for remote mode.
	EnvServer = "NODE_PROVISIONER_SERVER"
	// EnvToken is the management API's bearer token.
	EnvToken = "NODE_PROVISIONER_TOKEN"
	// EnvFingerprint pins the management API's certificate.
	EnvFingerprint = "NODE_PROVISIONER_FINGERPRINT"
	// EnvBMCPassword carries a BMC password to register, never an
	// argument.
	EnvBMCPassword = "NODE_PROVISIONER_BMC_PASSWORD"
	// EnvStore names the store: a postgres:// URL (with its password,
	// which is why it is read from the environment, never an argument),
	// or empty for the state folder's.
	EnvStore = "NODE_PROVISIONER_STORE"
	// EnvStoreKey names the secrets key file of a PostgreSQL store.
	EnvStoreKey = "NODE_PROVISIONER_STORE_KEY"
)

// DefaultDir is the state folder when none is set.
const DefaultDir = "/var/lib/node-provisioner"
