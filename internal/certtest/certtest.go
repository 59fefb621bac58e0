// Package certtest makes a throwaway certificate authority, a server
// certificate for loopback and a client certificate signed by it, as PEM
// files in a test's temporary directory, for tests of TLS connections.
package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ClientCommonName is the subject common name of the client certificate.
// etcd takes it as the user name when client certificate auth is on and no
// password is given.
const ClientCommonName = "certtest-client"

// Files are the PEM files New wrote.
type Files struct {
	// CAFile is the authority's certificate: the trust root of both sides.
	CAFile string
	// ServerCertFile and ServerKeyFile are for 127.0.0.1, ::1 and
	// localhost, for server authentication only.
	ServerCertFile string
	ServerKeyFile  string
	// ClientCertFile and ClientKeyFile are for client authentication only,
	// with the common name ClientCommonName.
	ClientCertFile string
	ClientKeyFile  string
}

// New makes a new authority and its two certificates, valid for an hour,
// in t.TempDir(). Every call makes a different authority, so the files of
// one call do not verify against another's CAFile.
func New(tb testing.TB) Files {
	tb.Helper()
	dir := tb.TempDir()
	now := time.Now()

	caKey := newKey(tb)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "certtest CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("certtest: create CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatalf("certtest: parse CA certificate: %v", err)
	}

	leaf := func(name string, usage x509.ExtKeyUsage, ips []net.IP, dnsNames []string) (certFile, keyFile string) {
		key := newKey(tb)
		tmpl := &x509.Certificate{
			SerialNumber: serial(tb),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Minute),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  ips,
			DNSNames:     dnsNames,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			tb.Fatalf("certtest: create %s certificate: %v", name, err)
		}
		return writeCert(tb, dir, name, der), writeKey(tb, dir, name, key)
	}

	var f Files
	f.CAFile = writeCert(tb, dir, "ca", caDER)
	f.ServerCertFile, f.ServerKeyFile = leaf("server", x509.ExtKeyUsageServerAuth,
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
	f.ClientCertFile, f.ClientKeyFile = leaf(ClientCommonName, x509.ExtKeyUsageClientAuth, nil, nil)
	return f
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("certtest: generate key: %v", err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		tb.Fatalf("certtest: serial number: %v", err)
	}
	return n
}

func writeCert(tb testing.TB, dir, name string, der []byte) string {
	tb.Helper()
	return writePEM(tb, filepath.Join(dir, name+".pem"), &pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func writeKey(tb testing.TB, dir, name string, key *ecdsa.PrivateKey) string {
	tb.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("certtest: encode %s key: %v", name, err)
	}
	return writePEM(tb, filepath.Join(dir, name+"-key.pem"), &pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func writePEM(tb testing.TB, path string, block *pem.Block) string {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatalf("certtest: %v", err)
	}
	return path
}
