// Command kadens runs the Kadens subscription billing service and its
// operator tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/kadens/kadens/internal/config"
)

// version and revision are set by the release build (scripts/release.sh):
// -ldflags "-X main.version=... -X main.revision=...". A build without
// them falls back to the module version and the VCS revision the go
// command records (go install module@version, or a build in a git work
// tree), and then to "devel".
var (
	version  = ""
	revision = ""
)

const usage = `kadens — subscription management and billing

Usage:
  kadens serve [--demo] [flags]          run the service (main API, /idp, /analytics)
  kadens migrate [flags]                 apply database migrations and exit
  kadens tenant create --name NAME [--test] [--json]
  kadens client create --tenant NAME_OR_ID [--name NAME] [--json]
  kadens login-client create --tenant NAME_OR_ID --name NAME --redirect-uri URI [--logout-uri URI] [--scope S] [--json]
  kadens login-client list --tenant NAME_OR_ID [--json]
  kadens login-client delete --tenant NAME_OR_ID --id ID
  kadens user create --tenant NAME_OR_ID --email E --role admin|support|finance [--name N] [--password-stdin] [--json]
                                         a staff user of the console; without --password-stdin it prints a
                                         set-password link ({console-url}/console/setpassword?token=...) and its expiry
  kadens user list --tenant NAME_OR_ID [--json]  the tenant's staff users (docs/CONSOLE.md)
  kadens key rotate                      make a new token-signing key the active one
  kadens ledger check [--tenant NAME_OR_ID] [--json]  verify every account's ledger; non-zero exit on problems
  kadens books chart --tenant T --org ID (--example NO|SE | --file CHART.json)  set an organization's chart of accounts
  kadens books recognize --tenant T --org ID --through YYYY-MM-DD  move earned deferred revenue to revenue
  kadens books reconcile --tenant T --org ID  the ledger against the documents (JSON); non-zero exit unless zero
  kadens books csv --tenant T --org ID [--from D] [--to D]  the journal as CSV, one line per posting
  kadens books sie --tenant T --org ID --from D --to D [--import] [--out FILE]  the SIE 4E (4I) file (Sweden) of a year
  kadens saft export --tenant T --org ID --from D --to D [--dir DIR]  the SAF-T Financial file (Norway) of the period
  kadens distribution export --tenant T --date D [--carrier C] [--view list|delta|counts] [--format csv|jsonl] [--out FILE]
                                         the day's print distribution list (docs/PRINT.md)
  kadens distribution publish --tenant T --date D [--json]  publish it to the carriers (DistributionListAvailable)
  kadens autogiro export --tenant NAME_OR_ID --organization ID [-o FILE]  write the Bankgirot submission file
  kadens autogiro fetch --tenant NAME_OR_ID (--file ID | --organization ID --latest) [-o FILE]
                                         write a stored submission file again
  kadens autogiro import --tenant NAME_OR_ID [--json] FILE  apply a Bankgirot report file
  kadens avtalegiro import FILE --tenant NAME_OR_ID   import a mandate or OCR giro file from the bank
  kadens avtalegiro export --tenant NAME_OR_ID --account ID -o FILE  write the account's next claim file
  kadens avtalegiro fetch --tenant NAME_OR_ID (--file ID | --account ID --latest) -o FILE
                                         write a stored claim file again
  kadens import --tenant NAME_OR_ID [--dry-run] [--json] FILE  move subscribers, payment agreements and running
                                         subscriptions from another system (CSV or JSON Lines; docs/MIGRATION.md)
  kadens version

Every command takes the settings (--data-dir, --database-url, ...), before
or after the command words; run "kadens serve -h" for all of them and their
KADENS_* environment variables. Exit status: 0 done, 1 failed, 2 usage error
(a bad command, flag or KADENS_* value).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal the process shuts down gracefully; a
		// second one ends it at once.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a mistake in the command line or the KADENS_* environment:
// exit status 2, as for a bad flag. Every other failure is 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode reports err on stderr and returns the process's exit status.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsagePrinted):
		return 2
	case errors.Is(err, flag.ErrHelp):
		return 0 // -h: the usage went to stdout or stderr already
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "kadens:", err)
		return 2
	}
	fmt.Fprintln(stderr, "kadens:", err)
	return 1
}

// errUsagePrinted: run was called without a command and printed the usage.
var errUsagePrinted = errors.New("no command")

// commands are the command words, and how many words each command has.
var commands = map[string]int{"serve": 1, "migrate": 1, "version": 1, "help": 1, "import": 1,
	"tenant": 2, "client": 2, "login-client": 2, "user": 2, "key": 2, "ledger": 2, "books": 2, "saft": 2, "avtalegiro": 2, "autogiro": 2, "distribution": 2}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsagePrinted
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	words, args, err := splitCommand(args)
	if err != nil {
		return err
	}
	switch strings.Join(words, " ") {
	case "serve":
		return serve(ctx, args, stdout, stderr, getenv)
	case "migrate":
		return migrate(ctx, args, stdout, stderr, getenv)
	case "tenant create":
		return tenantCreate(ctx, args, stdout, stderr, getenv)
	case "client create":
		return clientCreate(ctx, args, stdout, stderr, getenv)
	case "login-client create":
		return loginClientCreate(ctx, args, stdout, stderr, getenv)
	case "login-client list":
		return loginClientList(ctx, args, stdout, stderr, getenv)
	case "login-client delete":
		return loginClientDelete(ctx, args, stdout, stderr, getenv)
	case "user create":
		return userCreate(ctx, args, stdout, stderr, getenv)
	case "user list":
		return userList(ctx, args, stdout, stderr, getenv)
	case "key rotate":
		return keyRotate(ctx, args, stdout, stderr, getenv)
	case "ledger check":
		return ledgerCheck(ctx, args, stdout, stderr, getenv)
	case "distribution export":
		return distributionExport(ctx, args, stdout, stderr, getenv)
	case "distribution publish":
		return distributionPublish(ctx, args, stdout, stderr, getenv)
	case "books sie":
		return booksSIE(ctx, args, stdout, stderr, getenv)
	case "saft export":
		return saftExport(ctx, args, stdout, stderr, getenv)
	case "books chart", "books recognize", "books reconcile", "books csv":
		return booksCommand(ctx, words[1], args, stdout, stderr, getenv)
	case "autogiro export":
		return autogiroExport(ctx, args, stdout, stderr, getenv)
	case "autogiro fetch":
		return autogiroFetch(ctx, args, stdout, stderr, getenv)
	case "autogiro import":
		return autogiroImport(ctx, args, stdout, stderr, getenv)
	case "avtalegiro import":
		return avtalegiroImport(ctx, args, stdout, stderr, getenv)
	case "avtalegiro export":
		return avtalegiroExport(ctx, args, stdout, stderr, getenv)
	case "avtalegiro fetch":
		return avtalegiroFetch(ctx, args, stdout, stderr, getenv)
	case "import":
		return tenantImport(ctx, args, stdout, stderr, getenv)
	case "version":
		fs, cfg := flags("version", stderr, getenv)
		if err := parseFlags(fs, cfg, args); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "kadens", versionString())
		return nil
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usagef("unknown command %q; see `kadens help`", strings.Join(words, " "))
}

// splitCommand separates the command words from the flags, which may come
// before, between or after them ("kadens --data-dir d tenant create --name
// x" is "kadens tenant create --data-dir d --name x"). It returns the words
// and the flags in their order; the command parses the flags.
func splitCommand(args []string) (words, flagArgs []string, err error) {
	// The settings every command takes say which flags take a value.
	probe, _ := flags("", io.Discard, func(string) string { return "" })
	want := 1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(words) == want {
			return words, append(flagArgs, args[i:]...), nil
		}
		if a == "--" {
			return nil, nil, usagef("missing command; see `kadens help`")
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if len(words) == 0 {
				n, ok := commands[a]
				if !ok {
					return nil, nil, usagef("unknown command %q; see `kadens help`", a)
				}
				want = n
			}
			words = append(words, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := probe.Lookup(name)
		if f == nil {
			if len(words) == 0 {
				return nil, nil, usagef("flag %s before the command is not a setting every command takes; put it after the command", a)
			}
			continue // the command's own flag; it is parsed there
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() || hasValue {
			continue
		}
		if i+1 < len(args) {
			i++
			flagArgs = append(flagArgs, args[i])
		}
	}
	if len(words) < want {
		if len(words) == 0 {
			return nil, nil, usagef("missing command; see `kadens help`")
		}
		return nil, nil, usagef("%s needs a subcommand; see `kadens help`", words[0])
	}
	return words, flagArgs, nil
}

// versionString is the version and VCS revision the binary was built
// from: -ldflags "-X main.version=..." (the release build), else the
// module version from the build info, else "devel".
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return formatVersion(version, revision, bi)
}

// formatVersion is versionString for a given -X version and revision and
// build info (nil when the binary has none).
func formatVersion(v, rev string, bi *debug.BuildInfo) string {
	if v == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	var at string
	modified := false
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value // what the go command saw wins over a stamp
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case rev == "":
		v += " revision unknown (built without VCS information)"
	default:
		v += " revision " + rev
		if modified {
			v += "+modified"
		}
		if at != "" {
			v += " (" + at + ")"
		}
	}
	if bi == nil {
		return v
	}
	return v + ", " + bi.GoVersion
}

// flags returns a flag set with every setting registered; parse it with
// parseFlags.
func flags(name string, stderr io.Writer, getenv func(string) string) (*flag.FlagSet, *config.Config) {
	fs := flag.NewFlagSet("kadens "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, config.Register(fs, getenv)
}

// parseFlags parses args and the environment; every problem is a usage
// error.
func parseFlags(fs *flag.FlagSet, cfg *config.Config, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := cfg.Finish(); err != nil {
		return usageError{err}
	}
	return nil
}

func newLogger(cfg *config.Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, usagef("%s %q: want debug, info, warn or error", cfg.Name("log-level"), cfg.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
