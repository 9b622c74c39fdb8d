package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
)

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// binary builds kadens once per test run, with VCS information so that
// `kadens version` has a revision to print.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kadens-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "kadens")
		if out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("build: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runBinary runs the built kadens with env (on top of a clean
// environment) and returns its exit status, stderr and how long it ran.
func runBinary(t *testing.T, env []string, args ...string) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run kadens: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), took
}

// Start-up on a taken address fails at once with the reason and a hint,
// before the store is opened: on a fresh data directory nothing is created
// (no database, no master key), so the seconds of migrating a new database
// are not spent first. Each surface's own address is checked the same way.
func TestServeFailsFastOnTakenAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct{ name, flag string }{{"main", "--listen"}, {"idp", "--idp-listen"}, {"analytics", "--analytics-listen"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := []string{"serve", "--listen", "127.0.0.1:0"}
			if c.flag == "--listen" {
				args = args[:1]
			}
			code, stderr, _ := runBinary(t, []string{"KADENS_DATA_DIR=" + dir, "KADENS_LOG_LEVEL=warn"},
				append(args, c.flag, ln.Addr().String())...)
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			if !strings.Contains(stderr, "address already in use") || !strings.Contains(stderr, "is another kadens running") ||
				!strings.Contains(stderr, "the "+c.name+" surface") || !strings.Contains(stderr, "with "+c.flag) {
				t.Errorf("stderr does not say what failed and what to do:\n%s", stderr)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the data directory was created (%v): the store was opened before the listeners were bound", err)
			}
		})
	}
}

// A SQLite database another process holds: serve says so, and SIGTERM
// during the wait ends it promptly.
func TestServeWaitsForHeldSQLiteLockAndHonoursSIGTERM(t *testing.T) {
	dir := t.TempDir()
	if code, stderr, _ := runBinary(t, []string{"KADENS_DATA_DIR=" + dir}, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %s", code, stderr)
	}
	holder, err := sql.Open("sqlite", filepath.Join(dir, "kadens.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK") //nolint:errcheck

	cmd := exec.Command(binary(t), "serve", "--listen", freeAddr(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "KADENS_DATA_DIR=" + dir}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	stderr.waitFor(t, "locked by another process", exited)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A start that ignored SIGTERM would hang here until go test's
	// -timeout reports it.
	if err := <-exited; err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("exit after SIGTERM during start-up: %v, want status 1\n%s", err, stderr.String())
	}
}

// The bounded wait itself: Open gives up after LockWait with an error that
// says who to look for.
func TestOpenGivesUpOnHeldSQLiteLock(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), store.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx, err := st.DB().BeginTx(context.Background(), nil) // the write lock (_txlock=immediate)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	start := time.Now()
	_, err = store.Open(context.Background(), store.Options{DataDir: dir, LockWait: 600 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("open beside a held lock: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("gave up after %s, want about 600ms", took)
	}
	// Once the lock is free, Open takes it at once: released as soon as
	// Open says it waits.
	waiting := &syncBuffer{}
	ended := make(chan error, 1)
	released := make(chan error, 1)
	go func() {
		if ok, err := waiting.until("locked by another process", ended); !ok {
			released <- fmt.Errorf("open returned (%v) without saying it waits for the lock", err)
			return
		}
		released <- tx.Rollback()
	}()
	second, err := store.Open(context.Background(), store.Options{DataDir: dir, LockWait: time.Minute,
		Log: slog.New(slog.NewTextHandler(waiting, nil))})
	ended <- err
	if err != nil {
		t.Fatalf("open after the lock was released: %v", err)
	}
	second.Close()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
}

// Exit statuses follow convention: 2 for usage errors (flags, environment,
// commands), 1 for failures at run time.
func TestExitStatus(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		args []string
		want int
		says string
	}{
		{"unknown command", nil, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"no command", nil, nil, 2, "Usage"},
		{"bad flag", nil, []string{"migrate", "--token-ttl", "abc"}, 2, "token-ttl"},
		{"bad duration in env", []string{"KADENS_TOKEN_TTL=abc"}, []string{"migrate"}, 2, "KADENS_TOKEN_TTL"},
		{"bad bool in env", []string{"KADENS_WEBHOOK_ALLOW_PRIVATE=yes"}, []string{"serve"}, 2, "KADENS_WEBHOOK_ALLOW_PRIVATE"},
		{"missing required flag", nil, []string{"tenant", "create"}, 2, "--name"},
		{"help", nil, []string{"serve", "-h"}, 0, "webhook-allow-private"},
		{"runtime failure", []string{"KADENS_DATABASE_URL=postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, []string{"migrate"}, 1, "connect to postgres"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append([]string{"KADENS_DATA_DIR=" + t.TempDir()}, c.env...)
			code, stderr, _ := runBinary(t, env, c.args...)
			if code != c.want || !strings.Contains(stderr, c.says) {
				t.Fatalf("exit %d (want %d), stderr:\n%s", code, c.want, stderr)
			}
		})
	}
}

// version prints the module version and the VCS revision of the build.
func TestVersionPrintsBuildInfo(t *testing.T) {
	bin := binary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// What the go command recorded in the binary (a worktree checkout, or
	// GOFLAGS=-buildvcs=false, records no revision).
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "revision unknown"
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			want = "revision " + strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if !strings.HasPrefix(string(out), "kadens ") || !strings.Contains(string(out), want) {
		t.Fatalf("version printed %q, want it to contain %q", out, want)
	}
}

func TestFormatVersion(t *testing.T) {
	bi := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/kadens/kadens", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	cases := []struct {
		name, x, rev string
		bi           *debug.BuildInfo
		want         string
	}{
		{"module version and revision", "", "", bi("v1.2.3", "vcs.revision", "abc123", "vcs.time", "2026-11-24T08:00:00Z"),
			"v1.2.3 revision abc123 (2026-11-24T08:00:00Z), go1.26.8"},
		{"modified work tree", "", "", bi("(devel)", "vcs.revision", "abc123", "vcs.modified", "true"),
			"devel revision abc123+modified, go1.26.8"},
		{"no vcs information", "", "", bi("(devel)"), "devel revision unknown (built without VCS information), go1.26.8"},
		{"module version without vcs (go install module@version)", "", "", bi("v1.4.0"),
			"v1.4.0 revision unknown (built without VCS information), go1.26.8"},
		{"-X version wins", "1.0.0", "", bi("v0.0.0-x", "vcs.revision", "abc"), "1.0.0 revision abc, go1.26.8"},
		{"release build: -X version and revision, -buildvcs=false", "1.0.0", "def456", bi("(devel)"), "1.0.0 revision def456, go1.26.8"},
		{"no build info", "", "", nil, "devel revision unknown (built without VCS information)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := formatVersion(c.x, c.rev, c.bi); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Global flags may come before the command words, between them or after.
func TestGlobalFlagsBeforeOrAfterCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, args := range [][]string{
		{"--data-dir", dir, "tenant", "create", "--name", "a"},
		{"tenant", "--data-dir=" + dir, "create", "--name", "b"},
		{"tenant", "create", "--name", "c", "--data-dir", dir},
		{"--log-level", "warn", "--data-dir", dir, "--webhook-allow-private", "tenant", "create", "--name", "d"},
	} {
		if _, err := kadens(t, nil, args...); err != nil {
			t.Fatalf("%d %v: %v", i, args, err)
		}
	}
	out, err := kadens(t, nil, "--data-dir", dir, "migrate")
	if err != nil || !strings.Contains(out, filepath.Join(dir, "kadens.db")) {
		t.Fatalf("migrate with the flag first used another database: %q %v", out, err)
	}
	if _, err := kadens(t, nil, "--name", "x", "tenant", "create"); err == nil {
		t.Fatal("a command's own flag before the command was accepted")
	}
}

// serve on a data directory whose kadens.db is empty (a truncated copy, a
// failed restore) refuses to start, naming the file, instead of starting as
// a fresh install; the file is left for the operator.
func TestServeRefusesEmptyDatabaseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "kadens.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stderr, _ := runBinary(t, []string{"KADENS_DATA_DIR=" + dir, "KADENS_LOG_LEVEL=warn"}, "serve", "--listen", "127.0.0.1:0")
	if code != 1 || !strings.Contains(stderr, db+" is empty") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Fatalf("the file was changed: %v", err)
	}
}
