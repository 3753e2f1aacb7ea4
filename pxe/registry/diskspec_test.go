package registry

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/plasmactl/plasma-node/answer"
)

func TestParseBootDisk(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    answer.BootDisk
		wantErr string
	}{
		"an empty boot disk asks on the console (TAPPaaS's default)": {in: "", want: answer.BootDisk{Kind: answer.BootDiskAsk}},
		"ask asks on the console":                                    {in: "ask", want: answer.BootDisk{Kind: answer.BootDiskAsk}},
		"ASK is read without case":                                   {in: "ASK", want: answer.BootDisk{Kind: answer.BootDiskAsk}},
		"any takes the installer's first disk":                       {in: "any", want: answer.BootDisk{Kind: answer.BootDiskAny}},
		"sda is a kernel name":                                       {in: "sda", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "sda"}},
		"vda is a kernel name":                                       {in: "vda", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "vda"}},
		"hda is a kernel name":                                       {in: "hda", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "hda"}},
		"xvda is a kernel name":                                      {in: "xvda", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "xvda"}},
		"sdaa is a kernel name":                                      {in: "sdaa", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "sdaa"}},
		"nvme0n1 is a kernel name":                                   {in: "nvme0n1", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "nvme0n1"}},
		"mmcblk0 is a kernel name":                                   {in: "mmcblk0", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "mmcblk0"}},
		"the seed's serial is a serial":                              {in: "25414A800205", want: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"}},
		"a serial with dashes, dots and underscores is a serial":     {in: "WD-WCC4E1234567_1.0", want: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "WD-WCC4E1234567_1.0"}},
		"surrounding space is trimmed":                               {in: " sdb ", want: answer.BootDisk{Kind: answer.BootDiskName, Value: "sdb"}},
		"a path is refused (as TAPPaaS refuses '/')":                 {in: "/dev/sda", wantErr: `invalid boot disk "/dev/sda": a path; give a bare kernel name (sda, nvme0n1) or a serial`},
		"a partition is refused":                                     {in: "sda1", wantErr: `invalid boot disk "sda1": a partition or controller; give the whole disk (sda, nvme0n1) or its serial`},
		"an NVMe partition is refused":                               {in: "nvme0n1p2", wantErr: `invalid boot disk "nvme0n1p2": a partition or controller; give the whole disk (sda, nvme0n1) or its serial`},
		"an NVMe controller is refused":                              {in: "nvme0", wantErr: `invalid boot disk "nvme0": a partition or controller; give the whole disk (sda, nvme0n1) or its serial`},
		"a space inside is refused":                                  {in: "S4EW NX0N", wantErr: `invalid boot disk "S4EW NX0N": a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit`},
		"a glob is refused":                                          {in: "S4EW*", wantErr: `invalid boot disk "S4EW*": glob characters are not allowed; give a serial or a kernel name`},
		"a quote is refused":                                         {in: `S4"EW`, wantErr: `invalid boot disk "S4\"EW": a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit`},
		"a leading dash is refused":                                  {in: "-rf", wantErr: `invalid boot disk "-rf": a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseBootDisk(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseBootDisk(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidBootDisk) || !errors.Is(err, ErrInvalidRegistration) {
					t.Errorf("error %v does not wrap ErrInvalidBootDisk and ErrInvalidRegistration", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseBootDisk(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseBootDisk(%q) (-want +got):\n%s", tc.in, diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestBootDiskSelection(t *testing.T) {
	tests := map[string]struct {
		disk       answer.BootDisk
		wantString string
		wantList   []string
		wantFilter map[string]string
	}{
		"a kernel name goes into disk-list": {
			disk: answer.BootDisk{Kind: answer.BootDiskName, Value: "nvme0n1"}, wantString: "nvme0n1", wantList: []string{"nvme0n1"},
		},
		"a serial becomes an ID_SERIAL glob": {
			disk: answer.BootDisk{Kind: answer.BootDiskSerial, Value: "25414A800205"}, wantString: "25414A800205",
			wantFilter: map[string]string{"ID_SERIAL": "*25414A800205*"},
		},
		"any matches every disk's DEVNAME": {
			disk: answer.BootDisk{Kind: answer.BootDiskAny}, wantString: "any", wantFilter: map[string]string{"DEVNAME": "/dev/*"},
		},
		"ask has neither until the console answers": {
			disk: answer.BootDisk{}, wantString: "ask",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.disk.String(); got != tc.wantString {
				t.Errorf("String() = %q, want %q", got, tc.wantString)
			}
			if diff := cmp.Diff(tc.wantList, tc.disk.DiskList()); diff != "" {
				t.Errorf("DiskList() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFilter, tc.disk.UdevFilter()); diff != "" {
				t.Errorf("UdevFilter() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBootDiskValidateRefusesWhatParseCannotReturn(t *testing.T) {
	tests := map[string]answer.BootDisk{
		"a serial that reads as a kernel name": {Kind: answer.BootDiskSerial, Value: "sda"},
		"a kernel name that reads as a serial": {Kind: answer.BootDiskName, Value: "S4EW"},
		"ask with a value":                     {Kind: answer.BootDiskAsk, Value: "sda"},
		"an unknown kind":                      {Kind: answer.BootDiskKind(9), Value: "sda"},
		"an empty serial":                      {Kind: answer.BootDiskSerial},
	}
	for name, d := range tests {
		t.Run(name, func(t *testing.T) {
			if err := d.Validate(); !errors.Is(err, ErrInvalidBootDisk) {
				t.Errorf("Validate(%+v) = %v, want ErrInvalidBootDisk", d, err)
			}
			if _, err := d.MarshalText(); err == nil {
				t.Errorf("MarshalText(%+v) succeeded", d)
			}
		})
	}
}

func TestParsePoolSpec(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    DataPool
		wantErr string
	}{
		// TAPPaaS TestParsePoolSpec.test_single
		"a single pool on one disk": {
			in: "tanka1=single:nvme0n1", want: DataPool{Name: "tanka1", Layout: LayoutSingle, Disks: []string{"nvme0n1"}},
		},
		// TAPPaaS TestParsePoolSpec.test_mirror_multi_disk
		"a mirror on two disks": {
			in: "tankb1=mirror:sdb,sdc", want: DataPool{Name: "tankb1", Layout: LayoutMirror, Disks: []string{"sdb", "sdc"}},
		},
		"disks are trimmed and empty ones dropped": {
			in: "tankb1=stripe: sdb, ,sdc,", want: DataPool{Name: "tankb1", Layout: LayoutStripe, Disks: []string{"sdb", "sdc"}},
		},
		"the seed's pool is on a serial": {
			in: "tanka1=single:50026B73842AD86F", want: DataPool{Name: "tanka1", Layout: LayoutSingle, Disks: []string{"50026B73842AD86F"}},
		},
		"raidz takes two disks": {
			in: "tankc1=raidz:sdb,sdc", want: DataPool{Name: "tankc1", Layout: LayoutRaidz, Disks: []string{"sdb", "sdc"}},
		},
		"raidz2 takes three disks": {
			in: "tankc1=raidz2:sdb,sdc,sdd", want: DataPool{Name: "tankc1", Layout: LayoutRaidz2, Disks: []string{"sdb", "sdc", "sdd"}},
		},
		"only the first '=' and ':' split": {
			in: "tank=single:a=b", wantErr: `invalid disk "a=b" in pool tank: a serial takes letters, digits, '.', '_' and '-', starting with a letter or digit`,
		},
		// TAPPaaS TestParsePoolSpec.test_rejects_bad_specs, one case each
		"a spec without '=' is refused": {
			in: "tanka1", wantErr: `pool spec must be name=layout:disks, got "tanka1"`,
		},
		"a spec without ':' is refused": {
			in: "tanka1=single", wantErr: `pool spec must be name=layout:disks, got "tanka1=single"`,
		},
		"an unknown layout is refused": {
			in: "tanka1=raid5:sda,sdb", wantErr: `invalid pool layout "raid5" (one of single, stripe, mirror, raidz, raidz2)`,
		},
		"a spec without disks is refused": {
			in: "tanka1=single:", wantErr: "pool spec has no disks",
		},
		"a spec with only commas has no disks": {
			in: "tanka1=single: , ,", wantErr: "pool spec has no disks",
		},
		"single with two disks is refused": {
			in: "tanka1=single:sda,sdb", wantErr: "layout 'single' takes exactly one disk",
		},
		"mirror with one disk is refused": {
			in: "tanka1=mirror:sda", wantErr: "layout 'mirror' needs at least two disks",
		},
		"a bad name is refused": {
			in: "bad name=single:sda", wantErr: `invalid pool name "bad name" (letters, digits, '-' and '_', starting with a letter, at most 63)`,
		},
		// Stricter than TAPPaaS
		"raidz2 with two disks is refused, as zpool would": {
			in: "tankc1=raidz2:sdb,sdc", wantErr: "layout 'raidz2' needs at least three disks",
		},
		"a disk listed twice is refused": {
			in: "tankb1=mirror:sdb,sdb", wantErr: `disk "sdb" is listed twice in pool tankb1`,
		},
		"a disk path is refused": {
			in: "tanka1=single:/dev/sdb", wantErr: `invalid disk "/dev/sdb" in pool tanka1: a path; give a bare kernel name (sda, nvme0n1) or a serial`,
		},
		"a partition is refused": {
			in: "tanka1=single:sdb1", wantErr: `invalid disk "sdb1" in pool tanka1: a partition or controller; give the whole disk (sda, nvme0n1) or its serial`,
		},
		"a name zpool reserves is refused": {
			in: "mirror1=single:sdb", wantErr: `invalid pool name "mirror1": zpool reserves names starting with "mirror"`,
		},
		"a name that looks like a disk is refused": {
			in: "c0t0=single:sdb", wantErr: `invalid pool name "c0t0": zpool refuses names that look like a disk (c followed by a digit)`,
		},
		"a name starting with a digit is refused": {
			in: "1tank=single:sdb", wantErr: `invalid pool name "1tank" (letters, digits, '-' and '_', starting with a letter, at most 63)`,
		},
		"the keyword any is not a disk": {
			in: "tanka1=single:any", wantErr: `invalid disk "any" in pool tanka1: a keyword, not a disk`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePoolSpec(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParsePoolSpec(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidPool) || !errors.Is(err, ErrInvalidRegistration) {
					t.Errorf("error %v does not wrap ErrInvalidPool and ErrInvalidRegistration", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePoolSpec(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParsePoolSpec(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestLayouts(t *testing.T) {
	tests := map[string]struct {
		layout   Layout
		min      int
		vdevType string
	}{
		"single is one plain disk":      {LayoutSingle, 1, ""},
		"stripe is plain disks":         {LayoutStripe, 2, ""},
		"mirror is a mirror vdev":       {LayoutMirror, 2, "mirror"},
		"raidz is a raidz vdev":         {LayoutRaidz, 2, "raidz"},
		"raidz2 is a raidz2 vdev":       {LayoutRaidz2, 3, "raidz2"},
		"an unknown layout has nothing": {Layout("raid5"), 0, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.layout.minDisks(); got != tc.min {
				t.Errorf("MinDisks() = %d, want %d", got, tc.min)
			}
			if got := tc.layout.VdevType(); got != tc.vdevType {
				t.Errorf("VdevType() = %q, want %q", got, tc.vdevType)
			}
		})
	}
}

func FuzzParsePoolSpec(f *testing.F) {
	for _, s := range []string{
		"tanka1=single:nvme0n1", "tankb1=mirror:sdb,sdc", "tank=raidz2:a,b,c", "x=y:z", "=:", "a=b", "tanka1=single:S4EW_1-2.3",
		"tank=stripe: sdb, ,sdc,", "tank=single:/dev/sda", "mirror=single:sda",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePoolSpec(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidPool) {
				t.Fatalf("ParsePoolSpec(%q) error %v does not wrap ErrInvalidPool", s, err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePoolSpec(%q) = %+v, which does not validate: %v", s, p, err)
		}
		again, err := ParsePoolSpec(p.String())
		if err != nil {
			t.Fatalf("ParsePoolSpec(%q) of String() of %q: %v", p.String(), s, err)
		}
		if diff := cmp.Diff(p, again); diff != "" {
			t.Fatalf("round trip of %q (-first +second):\n%s", s, diff)
		}
	})
}

func FuzzParseBootDisk(f *testing.F) {
	for _, s := range []string{"", "ask", "any", "sda", "nvme0n1", "25414A800205", "/dev/sda", "sda1", "S4 EW", "*", "ANY", "serial.with_all-chars"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseBootDisk(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidBootDisk) {
				t.Fatalf("ParseBootDisk(%q) error %v does not wrap ErrInvalidBootDisk", s, err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ParseBootDisk(%q) = %+v, which does not validate: %v", s, d, err)
		}
		text, err := d.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%+v): %v", d, err)
		}
		var again answer.BootDisk
		if err := again.UnmarshalText(text); err != nil {
			t.Fatalf("UnmarshalText(%q): %v", text, err)
		}
		if again != d {
			t.Fatalf("round trip of %q: %+v then %+v", s, d, again)
		}
	})
}

func ExampleParsePoolSpec() {
	p, err := ParsePoolSpec("tankb1=mirror:S4EWNX0N123456,WD-WCC4E1234567")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.Layout, p.Disks, p.Layout.VdevType())

	_, err = ParsePoolSpec("tanka1=single:sdb,sdc")
	fmt.Println(err)
	// Output:
	// tankb1 mirror [S4EWNX0N123456 WD-WCC4E1234567] mirror
	// layout 'single' takes exactly one disk
}
