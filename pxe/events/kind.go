package events

// Kind says what an [Event] reports. The kinds below are the whole
// vocabulary of the boot timeline: the window's servers, its timeline,
// its backend, power control, the management API and plasma-node's
// progress all name events by them, and nothing else spells them.
type Kind string

// Boot steps below the answer, in the order a machine goes through them.
// The window records them off its reply path (see [Writer]); under
// overload the DHCP and TFTP ones may be dropped, and counted.
const (
	// DHCPOffer: the proxy-DHCP server offered a boot file (an OFFER).
	DHCPOffer Kind = "dhcp-offer"
	// DHCPAck: the proxy-DHCP server acknowledged a boot file (an ACK).
	DHCPAck Kind = "dhcp-ack"
	// DHCPIgnored: a network-booting client got no proxy-DHCP reply.
	DHCPIgnored Kind = "dhcp-ignored"
	// TFTP: a boot file was sent by TFTP.
	TFTP Kind = "tftp"
	// TFTPFailed: a TFTP request was refused or its transfer failed.
	TFTPFailed Kind = "tftp-failed"
	// Shim: the Secure Boot chain's shim was sent (TFTP or HTTP boot).
	Shim Kind = "shim"
	// Grub: the Secure Boot chain's signed grub was sent (TFTP or HTTP
	// boot).
	Grub Kind = "grub"
	// Script: an iPXE script or a grub entry was served (install or
	// exit).
	Script Kind = "script"
	// Kernel: the installer kernel was downloaded.
	Kernel Kind = "kernel"
	// Initrd: the installer initrd was downloaded.
	Initrd Kind = "initrd"
	// Asset: another file of the boot assets was downloaded.
	Asset Kind = "asset"
)

// Answer-side events and actions, which are never dropped.
const (
	// Answer: an answer was served to an installer.
	Answer Kind = "answer"
	// Refused: a request got no answer (no match, bad input).
	Refused Kind = "refused"
	// FirstBoot: a first-boot script was served or refused.
	FirstBoot Kind = "first-boot"
	// Webhook: the installer's webhook call, as the timeline shows it
	// (an [Installed] event, or a refused webhook).
	Webhook Kind = "webhook"
	// Installed: the installer reported success by its webhook.
	Installed Kind = "installed"
	// FirstBootReport: a node's first-boot hook reported what it did
	// with its data pools (imported, created, wiped, refused and why);
	// Detail says it, such as "pool tank found and imported, its data
	// kept".
	FirstBootReport Kind = "first-boot-report"
	// Discovered: a discovery window kept a machine's report in its
	// inbox (a refused report is [Refused]).
	Discovered Kind = "discovered"
	// Enrolled: an enrolment rule registered a discovered machine;
	// Detail says "enrolled by rule R (mode)".
	Enrolled Kind = "enrolled"
	// Unenrolled: no enrolment rule took a discovered machine, or its
	// enrolment was refused; Detail says why.
	Unenrolled Kind = "unenrolled"
	// BMC: node-provisioner acted through the machine's BMC; Detail says
	// what ("power on via ipmi", "next boot PXE via redfish") and, on
	// failure, the BMC's words. Never a password.
	BMC Kind = "bmc"
)

// Steps of a start that no store keeps: plasma-node's progress reports
// them beside the kinds above.
const (
	// Started: the machine was told to boot (PXE once, power on).
	Started Kind = "started"
	// Failed: the machine could not be started.
	Failed Kind = "failed"
)

// Droppable reports whether an event of kind k may be dropped under
// overload: the proxy-DHCP and TFTP steps, which come by the thousand
// in a boot storm, are; the HTTP steps, answers, refusals, installs,
// first-boot and BMC actions are not.
func (k Kind) Droppable() bool {
	switch k {
	case DHCPOffer, DHCPAck, DHCPIgnored, TFTP, TFTPFailed:
		return true
	}
	return false
}
