package discovery

// The discovery boot's wire: what the window puts on the discovery
// kernel's command line and where the agent posts its [Report].
const (
	// PostPath is the window's URL path the agent posts its report to.
	PostPath = "/discovery"
	// ArgURL is the kernel command-line key of the URL to post to.
	ArgURL = "plasma.discover.url"
	// ArgToken is the kernel command-line key of the window's token,
	// sent back as "Authorization: Bearer <token>".
	ArgToken = "plasma.discover.token"
	// InitrdName is the discovery initrd in a release folder of the
	// boot assets, beside the installer's kernel.
	InitrdName = "discovery.img"
	// ReplyKept is the body (with a newline) of the window's 200 reply
	// to a report it kept: the agent powers the machine off.
	ReplyKept = "ok"
	// ReplyInstall is the body (with a newline) of the window's 200
	// reply to a report whose machine an install-mode rule enrolled: the
	// agent reboots it, and its next netboot is served the install.
	ReplyInstall = "install"
)
