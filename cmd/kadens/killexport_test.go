package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/apitest"
	"github.com/kadens/kadens/internal/store/storetest"
)

// exportKind is one of the export commands under the kill test.
type exportKind struct {
	name    string                    // "autogiro" or "avtalegiro"
	export  func(out string) []string // the export's arguments
	fetch   []string                  // the fetch's arguments before --file / --latest
	latest  []string                  // what --latest needs beside it
	pending func(n int)               // makes n items pending for the next export
	items   func(content string) int
	nothing string // what a second export says when nothing is pending
}

var storedAs = regexp.MustCompile(`stored as file ([0-9a-f-]{36});`)

// TestKillExport kills `kadens autogiro export` and `kadens avtalegiro
// export` (SIGKILL) at each stage after the items were marked sent: the
// output file is never empty or partial (it keeps its old content until
// the new one is complete and in place), and the items are recoverable:
// the killed run named its stored file on stderr, `fetch` writes exactly
// that file again (by id and by --latest), and it holds every item. A
// write that fails after the marking says which file holds the items and
// the command that writes it; a target that cannot be written at all is
// refused before anything is marked.
func TestKillExport(t *testing.T) {
	bin := binary(t)
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			t.Parallel()
			e := apitest.Start(t, eng, nil)
			tn := e.Tenant
			if r := tn.Do("POST", "/testclock/advance", map[string]any{"to": "2027-01-04T09:00:00Z"}); r.Status != 200 {
				t.Fatalf("advance: %d %s", r.Status, r.Body)
			}
			post := func(path string, body any) string {
				t.Helper()
				r := tn.Do("POST", path, body)
				if r.Status != 201 {
					t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
				}
				return r.ID(t)
			}
			org := post("/organization", map[string]any{"name": "Nordavis AB", "country": "SE", "currency": "SEK", "timeZone": "Europe/Stockholm"})
			agAccount := post("/autogiro/account", map[string]any{"organizationId": org, "bankgiroCustomerNumber": "543210", "bankgiroNumber": "5432-1096"})
			payer := post("/subscriber", map[string]any{"name": "Tolvan"})
			payers := 0
			avgAccount := post("/avtalegiro/account", map[string]any{"bankAccountNumber": "12345678903", "customerUnitId": "12345678",
				"kidAlgorithm": "MOD10", "kidLength": 15, "baseComboApiEndpointUrl": "https://bank.example"})
			avgMandate := post("/avtalegiro/mandate", map[string]any{"accountId": avgAccount, "kid": "000123400001012"})

			kinds := []exportKind{{
				name: "autogiro",
				export: func(out string) []string {
					return []string{"autogiro", "export", "--tenant", tn.ID, "--organization", org, "-o", out}
				},
				fetch:  []string{"autogiro", "fetch", "--tenant", tn.ID},
				latest: []string{"--organization", org},
				pending: func(n int) {
					for range n {
						payers++
						post("/autogiro/mandate", map[string]any{"accountId": agAccount, "subscriberId": payer, "payerNumber": fmt.Sprint(1000 + payers),
							"clearingNumber": "3300", "bankAccountNumber": "121212-1212", "payerId": "19121212-1212"})
					}
				},
				// One TK04 record per new mandate.
				items: func(content string) int {
					n := 0
					for _, line := range strings.Split(content, "\r\n") {
						if strings.HasPrefix(line, "04") {
							n++
						}
					}
					return n
				},
				nothing: "nothing is pending",
			}, {
				name: "avtalegiro",
				export: func(out string) []string {
					return []string{"avtalegiro", "export", "--tenant", tn.ID, "--account", avgAccount, "-o", out}
				},
				fetch:  []string{"avtalegiro", "fetch", "--tenant", tn.ID},
				latest: []string{"--account", avgAccount},
				pending: func(n int) {
					for range n {
						post("/avtalegiro/claim", map[string]any{"mandateId": avgMandate, "amount": 299, "dueDate": "2027-01-15"})
					}
				},
				// Each claim is two records: amount item 1 (NY210230…) and 2 (NY210231…).
				items:   func(content string) int { return strings.Count(content, "NY210230") },
				nothing: "nothing to send",
			}}

			env := map[string]string{"KADENS_DATA_DIR": e.Config.DataDir, "KADENS_DATABASE_URL": e.Config.DatabaseURL, "KADENS_LOG_LEVEL": "warn"}
			procEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range env {
				procEnv = append(procEnv, k+"="+v)
			}
			dir := t.TempDir()
			const n = 20
			for _, k := range kinds {
				for _, stage := range []string{"stored", "writing", "written", "committed"} {
					t.Run(k.name+"/"+stage, func(t *testing.T) {
						k.pending(n)
						out := filepath.Join(dir, k.name+"-"+stage+".txt")
						const old = "the previous file\n"
						if err := os.WriteFile(out, []byte(old), 0o600); err != nil {
							t.Fatal(err)
						}
						stderr := killAt(t, bin, procEnv, stage, k.export(out)...)
						m := storedAs.FindStringSubmatch(stderr)
						if m == nil {
							t.Fatalf("the killed export did not name its stored file:\n%s", stderr)
						}
						got, err := os.ReadFile(out)
						if err != nil {
							t.Fatal(err)
						}
						byID := filepath.Join(dir, k.name+"-"+stage+".fetched")
						if _, err := kadens(t, env, append(k.fetch, "--file", m[1], "-o", byID)...); err != nil {
							t.Fatalf("fetch --file %s: %v", m[1], err)
						}
						stored, _ := os.ReadFile(byID)
						if items := k.items(string(stored)); items != n {
							t.Fatalf("the stored file holds %d items, want %d:\n%s", items, n, stored)
						}
						byLatest := filepath.Join(dir, k.name+"-"+stage+".latest")
						if _, err := kadens(t, env, append(append(k.fetch, "--latest", "-o", byLatest), k.latest...)...); err != nil {
							t.Fatalf("fetch --latest: %v", err)
						}
						if latest, _ := os.ReadFile(byLatest); string(latest) != string(stored) {
							t.Fatal("fetch --latest wrote another file than the one the export stored")
						}
						want := old
						if stage == "committed" {
							want = string(stored)
						}
						if string(got) != want {
							t.Fatalf("killed at %s: the output file has %d bytes (want %d: the %s one)", stage, len(got), len(want),
								map[bool]string{true: "new", false: "previous"}[stage == "committed"])
						}
						// The items went into the stored file, not back to pending.
						if o, err := kadens(t, env, k.export(out)...); !strings.Contains(o, k.nothing) && (err == nil || !strings.Contains(err.Error(), k.nothing)) {
							t.Fatalf("a second export did not find nothing pending: %q %v", o, err)
						}
					})
				}
				t.Run(k.name+"/failed write", func(t *testing.T) {
					k.pending(n)
					// A directory where the file should go: the temporary file
					// is written, the rename over it fails, after the marking.
					out := filepath.Join(dir, k.name+"-blocked")
					if err := os.Mkdir(out, 0o700); err != nil {
						t.Fatal(err)
					}
					_, err := kadens(t, env, k.export(out)...)
					if err == nil {
						t.Fatal("export over a directory passed")
					}
					fetch := regexp.MustCompile(`stored as file (\S+) .*\n +kadens (\S+ fetch --tenant \S+ --file (\S+) -o \S+)`).FindStringSubmatch(err.Error())
					if fetch == nil || fetch[1] != fetch[3] {
						t.Fatalf("the error does not say which file holds the items and how to fetch it:\n%v", err)
					}
					args := strings.Fields(fetch[2])
					args[len(args)-1] = filepath.Join(dir, k.name+"-recovered")
					if _, err := kadens(t, env, args...); err != nil {
						t.Fatalf("the suggested fetch failed: %v", err)
					}
					if b, _ := os.ReadFile(args[len(args)-1]); k.items(string(b)) != n {
						t.Fatalf("the recovered file holds %d items, want %d", k.items(string(b)), n)
					}
				})
				t.Run(k.name+"/unwritable", func(t *testing.T) {
					k.pending(1)
					_, err := kadens(t, env, k.export(filepath.Join(dir, "no", "such", "dir", "out.txt"))...)
					if err == nil || strings.Contains(err.Error(), "marked sent") {
						t.Fatalf("export into a missing directory: %v, want a refusal before marking", err)
					}
					// Nothing was marked: the item goes into the next export.
					rec := filepath.Join(dir, k.name+"-after-refusal")
					if _, err := kadens(t, env, k.export(rec)...); err != nil {
						t.Fatal(err)
					}
					if b, _ := os.ReadFile(rec); k.items(string(b)) != 1 {
						t.Fatalf("the next export holds %d items, want the 1 refused before", k.items(string(b)))
					}
				})
			}
			// Only the files the test named, and hidden temporary files of
			// the killed runs, are in the directory.
			es, _ := os.ReadDir(dir)
			for _, en := range es {
				if name := en.Name(); strings.HasPrefix(name, ".") && !strings.HasSuffix(name, ".tmp") {
					t.Errorf("unexpected hidden file %s", name)
				}
			}
		})
	}
}

// killAt runs the kadens binary with KADENS_TEST_PAUSE=stage, waits for it
// to say it paused there, kills it with SIGKILL and returns its stderr.
func killAt(t *testing.T, bin string, env []string, stage string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append([]string{}, env...), testPauseVar+"="+stage)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := make(chan struct{})
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.HasPrefix(sc.Text(), "paused at "+stage) {
				close(paused)
			}
		}
	}()
	select {
	case <-paused:
	case <-done:
		_ = cmd.Wait()
		t.Fatalf("kadens %s ended without pausing at %s:\n%s", strings.Join(args, " "), stage, strings.Join(lines, "\n"))
	case <-time.After(2 * time.Minute): // a safety net only: the pause is the event waited for
		_ = cmd.Process.Kill()
		t.Fatalf("kadens %s did not pause at %s", strings.Join(args, " "), stage)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	_ = cmd.Wait()
	return strings.Join(lines, "\n")
}
