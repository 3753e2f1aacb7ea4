package bmc

import (
	"context"
	"errors"
	"net/url"
	"slices"
)

// VirtualMedia is a [Controller] that can lend the machine an image as a
// virtual CD or DVD the BMC fetches from a URL, and boot it once. The
// Redfish driver has it; IPMI has no virtual media, so test for it:
//
//	vm, ok := c.(bmc.VirtualMedia)
//
// Errors wrap [ErrUnreachable], [ErrAuthRefused] or [ErrBMC], and name
// the BMC and the step; those a caller acts on are [ErrNoVirtualMedia],
// [ErrMediumInUse] and [ErrImageRefused]. No error or log line carries
// the image URL's path or query (it may hold a token): only its scheme
// and host.
type VirtualMedia interface {
	Controller
	// Media lists the BMC's virtual media, CD and DVD ones or not.
	// [ErrNoVirtualMedia]: the BMC has none.
	Media(ctx context.Context) ([]Medium, error)
	// InsertMedia inserts image (an http:// or https:// URL),
	// write-protected, into a CD or DVD medium (a removable one with
	// o.Removable): one already holding it (nothing is done), else a
	// free one. It returns the medium as the BMC then reports it.
	// [ErrNoVirtualMedia]: no medium of the kind;
	// [ErrMediumInUse]: every one holds another image and o.Replace is
	// not set; [ErrImageRefused]: the BMC would not take the image (it
	// could not fetch it, or reports it not inserted).
	InsertMedia(ctx context.Context, image string, o InsertOptions) (Medium, error)
	// EjectMedia ejects every medium (CD, DVD or removable) holding
	// image, or, when image is "", every inserted one. Nothing inserted
	// is not an error.
	EjectMedia(ctx context.Context, image string) error
	// SetNextBootCD makes the next boot, and only that one, a boot from
	// the virtual CD, in the given firmware mode where the BMC exposes
	// the mode.
	SetNextBootCD(ctx context.Context, mode BootMode) error
}

// InsertOptions tune [VirtualMedia.InsertMedia]. The zero value refuses
// to take a medium another image occupies.
type InsertOptions struct {
	// Replace ejects another image from the first CD or DVD medium when
	// none is free, rather than failing with [ErrMediumInUse].
	Replace bool
	// Removable inserts image into a removable medium, one whose
	// MediaTypes has USBStick or Floppy, instead of a CD or DVD: a disk
	// image the machine sees as a USB stick or floppy beside its virtual
	// CD, such as an answer image.
	Removable bool
}

// Medium is one virtual medium as the BMC reports it.
type Medium struct {
	// ID is the medium's id (the last element of its URI), such as
	// "CD" or "RemovableDisk".
	ID string
	// Types are its MediaTypes, such as CD, DVD, USBStick.
	Types []string
	// Image is the URL it holds; "" when empty.
	Image string
	// Inserted says the image is inserted.
	Inserted bool
	// ConnectedVia is how: URI, Applet, NotConnected or Oem; "" when the
	// BMC does not say.
	ConnectedVia string
}

// CD says m takes a CD or DVD image: its MediaTypes has CD or DVD.
func (m Medium) CD() bool {
	return slices.Contains(m.Types, "CD") || slices.Contains(m.Types, "DVD")
}

// Removable says m takes a disk image: its MediaTypes has USBStick or
// Floppy (the schema's names; RemovableDisk too, as some BMCs name it).
func (m Medium) Removable() bool {
	return slices.ContainsFunc(m.Types, func(t string) bool { return t == "USBStick" || t == "Floppy" || t == "RemovableDisk" })
}

// Errors a [VirtualMedia] returns, as the Kind of an [*Error]. Each
// wraps [ErrBMC]: errors.Is(err, ErrBMC) holds for them too.
var (
	// ErrNoVirtualMedia: the BMC has no VirtualMedia collection, or no
	// medium of the kind asked (CD or DVD; removable) in it.
	ErrNoVirtualMedia error = &kindError{"no virtual CD or DVD"}
	// ErrMediumInUse: every CD or DVD medium holds another image; it is
	// not taken unless the caller asks to replace it.
	ErrMediumInUse error = &kindError{"virtual medium in use"}
	// ErrImageRefused: the BMC refused the image (it could not fetch
	// it, or the insertion failed).
	ErrImageRefused error = &kindError{"image refused by the BMC"}
)

// kindError is a sentinel that is also [ErrBMC].
type kindError struct{ s string }

func (e *kindError) Error() string { return e.s }
func (e *kindError) Unwrap() error { return ErrBMC }

// redactImage returns an image URL's scheme and host only: its path or
// query may carry a token.
func redactImage(image string) string {
	u, err := url.Parse(image)
	if err != nil || u.Host == "" {
		return "(an image URL)"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// validImage checks image is an absolute http or https URL.
func validImage(image string) error {
	u, err := url.Parse(image)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("the image must be an http:// or https:// URL")
	}
	return nil
}
