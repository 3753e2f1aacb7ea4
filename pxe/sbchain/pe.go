package sbchain

import (
	"bytes"
	"crypto/x509"
	"debug/pe"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
)

// Errors of [Signatures] and vendorCert; compare with errors.Is.
var (
	// ErrNotPE: the data is not a PE/COFF image (no MZ/PE headers).
	ErrNotPE = errors.New("not a PE image")
	// ErrUnsigned: the image has no Authenticode signature.
	ErrUnsigned = errors.New("no Authenticode signature")
	// ErrNoVendorCert: the image has no shim vendor certificate.
	ErrNoVendorCert = errors.New("no shim vendor certificate")
)

// Signature is one Authenticode signature of an image: its signer's
// certificate and the other certificates it carries.
type Signature struct {
	// Signer is the certificate that signed (the signer info's issuer
	// and serial), nil when the signature names one it does not carry.
	Signer *x509.Certificate
	// Certificates are all certificates the signature carries.
	Certificates []*x509.Certificate
}

// signerName is the signer's subject common name, or "unknown".
func (s Signature) signerName() string {
	if s.Signer == nil {
		return "unknown"
	}
	return s.Signer.Subject.CommonName
}

// winCertPKCS7 is WIN_CERTIFICATE's type of an Authenticode signature.
const winCertPKCS7 = 0x0002

var oidSignedData = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type signedData struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	ContentInfo      asn1.RawValue
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

// signedDataCRL is signedData with the optional crls field present.
type signedDataCRL struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	ContentInfo      asn1.RawValue
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type signerInfo struct {
	Version int
	Issuer  issuerAndSerial
}

type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

// Signatures returns the Authenticode signatures of a PE image (the
// certificate table, data directory 4). An image without any gives an
// error matching [ErrUnsigned]; data that is not PE, [ErrNotPE].
func Signatures(img []byte) ([]Signature, error) {
	f, err := pe.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPE, err)
	}
	defer f.Close()
	var dir pe.DataDirectory
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		if oh.NumberOfRvaAndSizes > pe.IMAGE_DIRECTORY_ENTRY_SECURITY {
			dir = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_SECURITY]
		}
	case *pe.OptionalHeader32:
		if oh.NumberOfRvaAndSizes > pe.IMAGE_DIRECTORY_ENTRY_SECURITY {
			dir = oh.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_SECURITY]
		}
	default:
		return nil, fmt.Errorf("%w: no optional header", ErrNotPE)
	}
	if dir.Size == 0 {
		return nil, ErrUnsigned
	}
	// The certificate table's "address" is a file offset.
	start, end := uint64(dir.VirtualAddress), uint64(dir.VirtualAddress)+uint64(dir.Size)
	if end > uint64(len(img)) || start < 8 {
		return nil, fmt.Errorf("%w: the certificate table (%d bytes at %d) lies outside the %d-byte file", ErrUnsigned, dir.Size, dir.VirtualAddress, len(img))
	}
	table := img[start:end]
	var sigs []Signature
	for len(table) >= 8 {
		n := binary.LittleEndian.Uint32(table)
		typ := binary.LittleEndian.Uint16(table[6:])
		if n < 8 || uint64(n) > uint64(len(table)) {
			return nil, fmt.Errorf("certificate table: an entry of %d bytes in %d", n, len(table))
		}
		if typ == winCertPKCS7 {
			s, err := parsePKCS7(table[8:n])
			if err != nil {
				return nil, fmt.Errorf("certificate table: %w", err)
			}
			sigs = append(sigs, s)
		}
		next := (n + 7) &^ 7 // entries are 8-byte aligned
		if uint64(next) >= uint64(len(table)) {
			break
		}
		table = table[next:]
	}
	if len(sigs) == 0 {
		return nil, ErrUnsigned
	}
	return sigs, nil
}

// parsePKCS7 reads a PKCS#7 SignedData's certificates and first signer.
func parsePKCS7(der []byte) (Signature, error) {
	var ci contentInfo
	if _, err := asn1.Unmarshal(der, &ci); err != nil {
		return Signature{}, fmt.Errorf("PKCS#7: %w", err)
	}
	if !ci.ContentType.Equal(oidSignedData) {
		return Signature{}, fmt.Errorf("PKCS#7: content type %v, want signedData", ci.ContentType)
	}
	var sd signedDataCRL
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		var plain signedData
		if _, err2 := asn1.Unmarshal(ci.Content.Bytes, &plain); err2 != nil {
			return Signature{}, fmt.Errorf("PKCS#7 signedData: %w", err)
		}
		sd.Certificates, sd.SignerInfos = plain.Certificates, plain.SignerInfos
	}
	certs, err := x509.ParseCertificates(sd.Certificates.Bytes)
	if err != nil {
		return Signature{}, fmt.Errorf("PKCS#7 certificates: %w", err)
	}
	s := Signature{Certificates: certs}
	if len(sd.SignerInfos) > 0 {
		si := sd.SignerInfos[0].Issuer
		for _, c := range certs {
			if c.SerialNumber.Cmp(si.Serial) == 0 && bytes.Equal(c.RawIssuer, si.Issuer.FullBytes) {
				s.Signer = c
				break
			}
		}
	}
	return s, nil
}

// vendorCert returns the vendor certificate a shim image carries (its
// .vendor_cert section: the certificate shim trusts beside the
// firmware's db and the MOK list). An image without one gives an error
// matching [ErrNoVendorCert].
func vendorCert(img []byte) (*x509.Certificate, error) {
	f, err := pe.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPE, err)
	}
	defer f.Close()
	sec := f.Section(".vendor_cert")
	if sec == nil {
		return nil, ErrNoVendorCert
	}
	data, err := sec.Data()
	if err != nil || len(data) < 16 {
		return nil, fmt.Errorf("%w: the section cannot be read", ErrNoVendorCert)
	}
	// struct cert_table: authorized size, deauthorized size, authorized
	// offset, deauthorized offset (from the section's start).
	size, off := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[8:])
	if size == 0 || uint64(off)+uint64(size) > uint64(len(data)) {
		return nil, ErrNoVendorCert
	}
	c, err := x509.ParseCertificate(data[off : off+size])
	if err != nil {
		return nil, fmt.Errorf("%w: %v (a vendor db list is not read)", ErrNoVendorCert, err)
	}
	return c, nil
}

// signedBy reports whether one of sigs was made by ca or by a
// certificate ca issued (the signer itself, or a certificate the
// signature carries on the way to it).
func signedBy(sigs []Signature, ca *x509.Certificate) bool {
	if ca == nil {
		return false
	}
	for _, s := range sigs {
		if s.Signer == nil {
			continue
		}
		if s.Signer.Equal(ca) || s.Signer.CheckSignatureFrom(ca) == nil {
			return true
		}
		for _, c := range s.Certificates {
			if (c.Equal(ca) || c.CheckSignatureFrom(ca) == nil) && s.Signer.CheckSignatureFrom(c) == nil {
				return true
			}
		}
	}
	return false
}
