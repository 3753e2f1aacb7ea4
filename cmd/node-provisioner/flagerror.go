package main

import (
	"errors"
	"fmt"

	"github.com/plasmactl/plasma-node/pxe"
)

// flagNames are the flags of the window's configuration fields.
var flagNames = map[string]string{
	"HTTPAddr": "--http", "ServerIP": "--server-ip", "ServerIP6": "--server-ip6", "DHCPInterface": "--dhcp-interface", "TFTPAddr": "--tftp",
	"StateDir": "--state-dir", "BootFile": "--bootfile", "KernelArgs": "--kernel-arg", "BaseURL": "--base-url", "TLS": "--tls", "Release": "--release", "SecureBoot": "--secure-boot", "Discover": "--discover", "Inbox": "--state-dir",
}

// flagError turns a window configuration error into the flag's words:
// a usage error (exit 2), but for a port that cannot be listened on
// (exit 1).
func flagError(err error) error {
	var ce *pxe.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	name, ok := flagNames[ce.Field]
	if !ok {
		name = ce.Field
		switch ce.Field {
		case "Site":
			name = "site settings"
		case "Registrations":
			name = "pending registrations"
		}
	}
	msg := name
	if ce.Value != "" {
		msg += fmt.Sprintf(" %q", ce.Value)
	}
	msg += ": " + ce.Reason
	if ce.Err != nil {
		msg += ": " + ce.Err.Error()
	}
	if ce.Field == "HTTPAddr" && ce.Reason == "cannot listen" {
		// The address is good; the port is taken or not ours: a failure.
		return errors.New(msg)
	}
	return usageError(errors.New(msg))
}
