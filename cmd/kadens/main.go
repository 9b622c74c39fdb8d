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

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

const usage = `kadens — subscription management and billing

Usage:
  kadens serve [--demo] [flags]          run the service (main API, /idp, /analytics)
  kadens migrate [flags]                 apply database migrations and exit
  kadens tenant create --name NAME [--test] [--json]
  kadens client create --tenant NAME_OR_ID [--name NAME] [--json]
  kadens key rotate                      make a new token-signing key the active one
  kadens ledger check [--tenant NAME_OR_ID] [--json]  verify every account's ledger; non-zero exit on problems
  kadens version

Every command takes the storage flags (--data-dir, --database-url); run
"kadens serve -h" for all settings and their KADENS_* environment variables.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "kadens:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, stdout, stderr, getenv)
	case "migrate":
		return migrate(ctx, rest, stdout, stderr, getenv)
	case "tenant", "client", "key", "ledger":
		if len(rest) == 0 {
			return fmt.Errorf("%s needs a subcommand; see `kadens help`", cmd)
		}
		sub := cmd + " " + rest[0]
		switch sub {
		case "tenant create":
			return tenantCreate(ctx, rest[1:], stdout, stderr, getenv)
		case "client create":
			return clientCreate(ctx, rest[1:], stdout, stderr, getenv)
		case "key rotate":
			return keyRotate(ctx, rest[1:], stdout, stderr, getenv)
		case "ledger check":
			return ledgerCheck(ctx, rest[1:], stdout, stderr, getenv)
		}
		return fmt.Errorf("unknown command %q; see `kadens help`", sub)
	case "version", "--version":
		fmt.Fprintln(stdout, "kadens", versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q; see `kadens help`", cmd)
}

func versionString() string {
	v := version
	bi, ok := debug.ReadBuildInfo()
	if v == "" && ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
	}
	if ok {
		v += " (" + bi.GoVersion + ")"
	}
	return v
}

// flags returns a flag set with every setting registered; parse it with
// parseFlags.
func flags(name string, stderr io.Writer, getenv func(string) string) (*flag.FlagSet, *config.Config) {
	fs := flag.NewFlagSet("kadens "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, config.Register(fs, getenv)
}

func parseFlags(fs *flag.FlagSet, cfg *config.Config, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return cfg.Finish()
}

func newLogger(cfg *config.Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", cfg.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
