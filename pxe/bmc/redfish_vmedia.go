package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
)

var _ VirtualMedia = (*redfishController)(nil)

// redfishMedium is what the driver reads of a VirtualMedia resource.
type redfishMedium struct {
	Medium
	uri    string
	etag   string
	insert string // #VirtualMedia.InsertMedia target, if offered
	eject  string // #VirtualMedia.EjectMedia target, if offered
}

// fits says m takes an image of the kind o asks: a removable one, or a
// CD or DVD.
func (m redfishMedium) fits(o InsertOptions) bool {
	if o.Removable {
		return m.Removable()
	}
	return m.CD()
}

// media finds the VirtualMedia collection (the system's own, as newer
// BMCs have it, else its manager's: Links.ManagedBy, or the only member
// of Managers) and reads every medium in it.
func (d *redfishController) media(ctx context.Context, op string) ([]redfishMedium, error) {
	s, err := d.system(ctx, op)
	if err != nil {
		return nil, err
	}
	coll := s.media
	if coll == "" {
		mgr := s.managedBy
		if mgr == "" {
			var root struct {
				Managers odataID `json:"Managers"`
			}
			if _, err := d.getJSON(ctx, op, "/redfish/v1/", &root); err != nil {
				return nil, err
			}
			if root.Managers.ID != "" {
				var mc struct {
					Members []odataID `json:"Members"`
				}
				if _, err := d.getJSON(ctx, op, root.Managers.ID, &mc); err != nil {
					return nil, err
				}
				if len(mc.Members) == 1 {
					mgr = mc.Members[0].ID
				}
			}
		}
		if mgr != "" {
			var m struct {
				VirtualMedia odataID `json:"VirtualMedia"`
			}
			if _, err := d.getJSON(ctx, op, mgr, &m); err != nil {
				return nil, err
			}
			coll = m.VirtualMedia.ID
		}
	}
	if coll == "" {
		return nil, &Error{Op: op, Kind: ErrNoVirtualMedia, Said: "neither the system nor its manager has a VirtualMedia collection"}
	}
	var c struct {
		Members []odataID `json:"Members"`
	}
	if _, err := d.getJSON(ctx, op, coll, &c); err != nil {
		return nil, err
	}
	var out []redfishMedium
	for _, mem := range c.Members {
		m, err := d.medium(ctx, op, mem.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// medium reads one VirtualMedia resource.
func (d *redfishController) medium(ctx context.Context, op, uri string) (redfishMedium, error) {
	var v struct {
		ID           string   `json:"Id"`
		Image        *string  `json:"Image"`
		Inserted     bool     `json:"Inserted"`
		ConnectedVia string   `json:"ConnectedVia"`
		MediaTypes   []string `json:"MediaTypes"`
		Actions      struct {
			Insert struct {
				Target string `json:"target"`
			} `json:"#VirtualMedia.InsertMedia"`
			Eject struct {
				Target string `json:"target"`
			} `json:"#VirtualMedia.EjectMedia"`
		} `json:"Actions"`
	}
	r, err := d.getJSON(ctx, op, uri, &v)
	if err != nil {
		return redfishMedium{}, err
	}
	m := redfishMedium{uri: uri, etag: r.header.Get("ETag"), insert: v.Actions.Insert.Target, eject: v.Actions.Eject.Target,
		Medium: Medium{ID: v.ID, Types: v.MediaTypes, Inserted: v.Inserted, ConnectedVia: v.ConnectedVia}}
	if m.ID == "" {
		m.ID = path.Base(uri)
	}
	if v.Image != nil {
		m.Image = *v.Image
	}
	return m, nil
}

// inBMC names the BMC in a virtual-media error.
func (d *redfishController) inBMC(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("BMC %s: %w", d.e, err)
}

// Media lists the virtual media.
func (d *redfishController) Media(ctx context.Context) ([]Medium, error) {
	const op = "list virtual media"
	var out []Medium
	err := d.call(ctx, op, func(ctx context.Context) error {
		ms, err := d.media(ctx, op)
		out = out[:0]
		for _, m := range ms {
			out = append(out, m.Medium)
		}
		return err
	})
	return out, d.inBMC(err)
}

// InsertMedia picks a CD or DVD medium (a removable one with
// o.Removable, those that take no CD first) and inserts image into it
// with #VirtualMedia.InsertMedia, or, on BMCs without the action, with a
// PATCH of Image, Inserted and WriteProtected (If-Match its ETag).
func (d *redfishController) InsertMedia(ctx context.Context, image string, o InsertOptions) (Medium, error) {
	const op = "insert virtual media"
	if err := validImage(image); err != nil {
		return Medium{}, d.inBMC(fmt.Errorf("%s: %w: %v", op, ErrInvalidEndpoint, err))
	}
	var got Medium
	err := d.call(ctx, op, func(ctx context.Context) error {
		ms, err := d.media(ctx, op)
		if err != nil {
			return err
		}
		var cds []redfishMedium
		var seen []string
		for _, m := range ms {
			seen = append(seen, m.ID+" ("+strings.Join(m.Types, ", ")+")")
			if m.fits(o) {
				cds = append(cds, m)
			}
		}
		if o.Removable {
			// A medium that takes no CD first: the CD goes in the other.
			slices.SortStableFunc(cds, func(a, b redfishMedium) int { return cmpBool(a.CD(), b.CD()) })
		}
		if len(cds) == 0 {
			want := "CD or DVD"
			if o.Removable {
				want = "USBStick or Floppy (a removable disk)"
			}
			return &Error{Op: op, Kind: ErrNoVirtualMedia, Said: "no medium has MediaTypes " + want + " (there are: " + strings.Join(seen, "; ") + ")"}
		}
		var pick *redfishMedium
		for i, m := range cds {
			if m.Inserted && m.Image == image {
				got = m.Medium
				return nil
			}
			if !m.Inserted && pick == nil {
				pick = &cds[i]
			}
		}
		if pick == nil {
			if !o.Replace {
				return &Error{Op: op, Kind: ErrMediumInUse, Said: fmt.Sprintf("%s holds %s; eject it first or ask to replace it", cds[0].ID, redactImage(cds[0].Image))}
			}
			pick = &cds[0]
			d.o.Logger.Info("replacing the image in a virtual medium", "bmc", d.e.String(), "medium", pick.ID, "was", redactImage(pick.Image))
			if err := d.ejectOne(ctx, op, *pick); err != nil {
				return err
			}
			if *pick, err = d.medium(ctx, op, pick.uri); err != nil {
				return err
			}
		}
		if err := d.insertOne(ctx, op, *pick, image); err != nil {
			return err
		}
		m, err := d.medium(ctx, op, pick.uri)
		if err != nil {
			return err
		}
		if !m.Inserted {
			return &Error{Op: op, Kind: ErrImageRefused, Said: fmt.Sprintf("the BMC took %s into %s but reports it not inserted", redactImage(image), m.ID)}
		}
		got = m.Medium
		return nil
	})
	return got, d.inBMC(err)
}

// insertOne inserts image into m: the action with Image, Inserted and
// WriteProtected, again with Image alone where the BMC refuses the
// other two by name; or a PATCH of the three.
func (d *redfishController) insertOne(ctx context.Context, op string, m redfishMedium, image string) error {
	body := map[string]any{"Image": image, "Inserted": true, "WriteProtected": true}
	var r *redfishReply
	var err error
	if m.insert != "" {
		r, err = d.do(ctx, op, http.MethodPost, m.insert, body, nil)
		if r != nil && r.status == http.StatusBadRequest && (strings.Contains(err.Error(), "Inserted") || strings.Contains(err.Error(), "WriteProtected")) {
			// Some BMCs (Supermicro X11, X12) take Image alone; the
			// others default to Inserted and write-protected.
			d.o.Logger.Debug("the BMC refused Inserted or WriteProtected; inserting with Image alone", "bmc", d.e.String())
			r, err = d.do(ctx, op, http.MethodPost, m.insert, map[string]any{"Image": image}, nil)
		}
	} else {
		r, err = d.patchMedium(ctx, op, m, body)
	}
	if err == nil && r.status == http.StatusAccepted {
		err = d.followTask(ctx, op, r)
	}
	return redacted(err, image, true)
}

// patchMedium PATCHes m with its ETag as If-Match; on 412 it reads m
// again and retries once.
func (d *redfishController) patchMedium(ctx context.Context, op string, m redfishMedium, body map[string]any) (*redfishReply, error) {
	for try := 0; ; try++ {
		var hdr map[string]string
		if m.etag != "" {
			hdr = map[string]string{"If-Match": m.etag}
		}
		r, err := d.do(ctx, op, http.MethodPatch, m.uri, body, hdr)
		if r == nil || r.status != http.StatusPreconditionFailed || try > 0 {
			return r, err
		}
		if m, err = d.medium(ctx, op, m.uri); err != nil {
			return nil, err
		}
	}
}

// redacted keeps image's path and query out of a BMC error's words and,
// when refusal is set, turns the BMC's lasting refusal into
// [ErrImageRefused]. Transient and authentication failures keep their
// kind.
func redacted(err error, image string, refusal bool) error {
	var be *Error
	if !errors.As(err, &be) {
		return err
	}
	c := *be
	if image != "" {
		c.Said = strings.ReplaceAll(c.Said, image, redactImage(image))
	}
	if refusal && c.Kind == ErrBMC && !c.Transient {
		c.Kind = ErrImageRefused
	}
	return &c
}

// EjectMedia ejects the media holding image (any inserted CD, DVD or
// removable one, for "").
func (d *redfishController) EjectMedia(ctx context.Context, image string) error {
	const op = "eject virtual media"
	return d.inBMC(d.call(ctx, op, func(ctx context.Context) error {
		ms, err := d.media(ctx, op)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if (m.CD() || m.Removable()) && (m.Inserted || m.Image != "") && (image == "" || m.Image == image) {
				if err := d.ejectOne(ctx, op, m); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// ejectOne ejects m with #VirtualMedia.EjectMedia (an empty JSON
// object as its body, which every BMC takes), or a PATCH of Image null
// and Inserted false where the action is not offered.
func (d *redfishController) ejectOne(ctx context.Context, op string, m redfishMedium) error {
	var r *redfishReply
	var err error
	if m.eject != "" {
		r, err = d.do(ctx, op, http.MethodPost, m.eject, map[string]any{}, nil)
	} else {
		r, err = d.patchMedium(ctx, op, m, map[string]any{"Image": nil, "Inserted": false})
	}
	if err == nil && r.status == http.StatusAccepted {
		err = d.followTask(ctx, op, r)
	}
	return redacted(err, m.Image, false)
}

// SetNextBootCD PATCHes Boot with a one-time Cd override.
func (d *redfishController) SetNextBootCD(ctx context.Context, mode BootMode) error {
	return d.inBMC(d.setNextBoot(ctx, "set next boot CD", "Cd", mode))
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
