package idp

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kadens/kadens/internal/store"
	"github.com/kadens/kadens/internal/store/storetest"
)

// scripts/loginshot.sh takes a headless Chromium screenshot of the login
// page with orgname and language=nb; the PNG must be the phone-sized image
// the script asks for and not blank. The test runs wherever Chromium is
// installed (KADENS_TEST_REQUIRE_CHROMIUM makes its absence a failure);
// CI does not install it (docs/LOGIN.md says why).
func TestLoginPageScreenshot(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("KADENS_TEST_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("chromium is required: %v", err)
		}
		t.Skip("chromium is not installed (apt-get install -y chromium)")
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if s.Engine() != store.SQLite {
			t.Skip("the page does not depend on the engine; one screenshot is enough")
		}
		f := newLoginFixture(t, s)
		p := fetch(t, browser(t), "GET", f.authorizeURL(nil), nil)
		if p.location == "" {
			t.Fatalf("authorize: %d %s", p.status, p.body)
		}
		out := filepath.Join(t.TempDir(), "login.png")
		if dir := os.Getenv("KADENS_LOGINSHOT_DIR"); dir != "" {
			out = filepath.Join(dir, "login-nb.png") // keep it to look at
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		script, _ := filepath.Abs(filepath.Join("..", "..", "scripts", "loginshot.sh"))
		if b, err := exec.CommandContext(ctx, script, p.location, out, "390x844").CombinedOutput(); err != nil {
			t.Fatalf("loginshot: %v\n%s", err, b)
		}
		fh, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		img, err := png.Decode(fh)
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 390 || b.Dy() != 844 {
			t.Fatalf("screenshot is %v, want 390x844", b)
		}
		colours := map[[3]uint32]bool{}
		for y := 0; y < 844; y += 7 {
			for x := 0; x < 390; x += 7 {
				r, g, b, _ := img.At(x, y).RGBA()
				colours[[3]uint32{r >> 12, g >> 12, b >> 12}] = true
			}
		}
		if len(colours) < 4 {
			t.Fatalf("the screenshot looks blank (%d colours)", len(colours))
		}
	})
}
