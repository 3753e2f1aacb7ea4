package sbchain

import (
	"bytes"
	"debug/elf"
	"debug/pe"
	"encoding/binary"
	"fmt"
)

// grubModInfoMagic is grub_module_info's magic, "mimg".
const grubModInfoMagic = 0x676d696d

// grubObjELF is grub_module_header's type of a module (an ELF object).
const grubObjELF = 0

// networkModules returns the modules a grub image needs to netboot from
// the window: the UEFI network driver and TFTP. It returns a new slice
// each call (no package state a caller could change).
func networkModules() []string { return []string{"efinet", "tftp"} }

// GrubModules returns the names of the modules built into a grub EFI
// image (its "mods" section: each module's .modname). A grub loaded by
// shim under Secure Boot loads no module from elsewhere, so these are all
// it has.
func GrubModules(img []byte) ([]string, error) {
	f, err := pe.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPE, err)
	}
	defer f.Close()
	sec := f.Section("mods")
	if sec == nil {
		return nil, fmt.Errorf("not a grub image: no mods section")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("grub mods section: %w", err)
	}
	// grub_module_info64: magic, padding, offset, size.
	if len(data) < 24 || binary.LittleEndian.Uint32(data) != grubModInfoMagic {
		return nil, fmt.Errorf("not a grub image: the mods section has no module info")
	}
	off, size := binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
	if size > uint64(len(data)) || off > size {
		return nil, fmt.Errorf("grub module info: offset %d, size %d in %d bytes", off, size, len(data))
	}
	var names []string
	for p := off; p+8 <= size; {
		typ, n := binary.LittleEndian.Uint32(data[p:]), uint64(binary.LittleEndian.Uint32(data[p+4:]))
		if n < 8 || p+n > size {
			return nil, fmt.Errorf("grub module header at %d: size %d", p, n)
		}
		if typ == grubObjELF {
			if name := modName(data[p+8 : p+n]); name != "" {
				names = append(names, name)
			}
		}
		p += n
	}
	return names, nil
}

// modName reads a grub module's .modname section.
func modName(obj []byte) string {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".modname")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil {
		return ""
	}
	return string(bytes.TrimRight(b, "\x00"))
}
