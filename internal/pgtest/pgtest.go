package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plasmactl/plasma-node/internal/tofutest"
)

// Password is the password in [Server.ConnString]. The cluster trusts
// loopback connections, so it is not checked; tests look for it to prove
// the connection string is never written to a file.
const Password = "pgtest-s3cret-7d1f"

// Server is a running throwaway cluster.
type Server struct {
	// Port is the TCP port it listens on.
	Port int
	// Host is the address its connection strings name: 127.0.0.1, or
	// [Options.Host].
	Host            string
	bin             string
	cred            *syscall.Credential
	data, log, opts string       // for Stop and Restart
	next            atomic.Int64 // numbers the databases of NewDatabase
}

// ConnString is a connection string for the postgres database, as the
// pg backend takes it from PG_CONN_STR.
func (s *Server) ConnString() string {
	return fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", Password, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
}

// Options configure [StartWith].
type Options struct {
	// Host is an address of this host, besides loopback, for the cluster
	// to listen on and its connection strings to name, such as a lab
	// segment's address other network namespaces reach it at. It trusts
	// connections from the subnets it is directly connected to
	// (pg_hba's samenet). Empty: loopback only.
	Host string
}

// binDir finds the folder of initdb, pg_ctl and psql: PATH, then
// Debian's /usr/lib/postgresql/<version>/bin, newest first.
func binDir() string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(r)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		x, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		y, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return y - x
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// Start starts a cluster on loopback and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith starts a cluster as o says and stops it when the test ends.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	bin := binDir()
	if bin == "" {
		tofutest.Missing(t, "PostgreSQL server binaries (initdb, pg_ctl; Debian package postgresql)")
	}
	s := &Server{bin: bin, Host: "127.0.0.1"}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tofutest.Missing(t, "a postgres user to run PostgreSQL as (running as root): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	data := filepath.Join(dir, "data")
	s.run(t, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	listen := "127.0.0.1"
	if o.Host != "" {
		s.Host, listen = o.Host, listen+","+o.Host
		hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = hba.WriteString("host all all samenet trust\n")
		if cerr := hba.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	opts := fmt.Sprintf("-c listen_addresses=%s -p %d -k %s -c fsync=off", listen, s.Port, dir)
	s.data, s.log, s.opts = data, filepath.Join(dir, "log"), opts
	s.Restart(t)
	t.Cleanup(func() {
		cmd := s.cmd("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	return s
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(s.bin, name), args...)
	c.Dir = os.TempDir()
	if s.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return c
}

func (s *Server) run(t testing.TB, name string, args ...string) {
	t.Helper()
	start := time.Now()
	out, err := s.cmd(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	t.Logf("pgtest: %s took %v", name, time.Since(start).Round(time.Millisecond))
}

// Stop stops the cluster at once (an outage: open connections are cut),
// keeping its data for [Server.Restart].
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.run(t, "pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
}

// Restart starts the stopped cluster again on its port, with its data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.run(t, "pg_ctl", "-D", s.data, "-l", s.log, "-o", s.opts, "-w", "-t", "30", "start")
}

// Exec runs sql with psql against the postgres database and returns its
// unaligned, tuples-only output.
func (s *Server) Exec(t testing.TB, sql string) string {
	t.Helper()
	out, err := s.cmd("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-U", "postgres", "-d", "postgres", "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
	return string(out)
}

// NewDatabase creates an empty database of its own for one test and
// returns its connection string (with [Password] in it, as
// [Server.ConnString]).
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", time.Now().UnixNano(), s.next.Add(1))
	s.Exec(t, "CREATE DATABASE "+name)
	return fmt.Sprintf("postgres://postgres:%s@%s/%s?sslmode=disable", Password, net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), name)
}
