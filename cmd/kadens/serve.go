package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/kadens/kadens/internal/demo"
	"github.com/kadens/kadens/internal/gctune"
	"github.com/kadens/kadens/internal/server"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, cfg := flags("serve", stderr, getenv)
	cfg.RegisterDemo()
	if err := parseFlags(fs, cfg, args); err != nil {
		return err
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kadens %s — effective configuration:\n", versionString())
	for _, line := range cfg.Describe() {
		fmt.Fprintln(stdout, "  "+line)
	}
	if gctune.Apply(getenv) {
		log.Debug("garbage collector", "gogc", gctune.Percent, "memoryLimitMiB", gctune.Limit>>20)
	}
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	// Start-up (migrations above all) leaves garbage behind; hand it back
	// to the OS now rather than keep it resident while idle.
	debug.FreeOSMemory()
	if cfg.Demo {
		creds, _, err := demo.Ensure(ctx, srv.Store, srv.Engine, cfg.DataDir, time.Now())
		if err != nil {
			srv.Shutdown()
			return err
		}
		defer fmt.Fprint(stdout, "")
		if err := srv.Start(ctx); err != nil {
			srv.Shutdown()
			return err
		}
		fmt.Fprint(stdout, demo.Instructions(creds, cfg.BaseURL, cfg.IdPURL, cfg.ConsoleURL))
	} else if err := srv.Start(ctx); err != nil {
		srv.Shutdown()
		return err
	}
	for name, addr := range srv.Addrs {
		log.Info("listening", "surface", name, "addr", addr, "database", srv.Store.Source())
	}
	<-ctx.Done()
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout)
	return srv.Shutdown()
}
