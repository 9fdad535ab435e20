package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestTokensPage: an admin makes a token on the tokens page, reads it
// once in the dialog, and the API takes it; revoked from the page, the
// API refuses it. A viewer has no tokens page.
func TestTokensPage(t *testing.T) {
	d := startDemo(t)
	ctx := browser(t)
	d.signIn(t, ctx, d.admin)
	whoami := func(token string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, d.url+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var token, text string
	run(t, ctx,
		chromedp.Navigate(d.url+"/tokens"),
		chromedp.WaitVisible(`form[data-token-form]`, chromedp.ByQuery),
		chromedp.SetValue(`form[data-token-form] input[name=name]`, "robot", chromedp.ByQuery),
		chromedp.SetValue(`form[data-token-form] select[name=role]`, "operator", chromedp.ByQuery),
		chromedp.SetValue(`form[data-token-form] input[name=scope]`, "demo_*, group:nightly", chromedp.ByQuery),
		chromedp.SetValue(`form[data-token-form] input[name=expires]`, "720h", chromedp.ByQuery),
		chromedp.Click(`form[data-token-form] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#confirm[open] input[data-new-token]`, chromedp.ByQuery),
		chromedp.Value(`input[data-new-token]`, &token, chromedp.ByQuery),
		chromedp.Text("#confirm-body", &text, chromedp.ByQuery),
	)
	if token == "" || !strings.Contains(text, "Copy it now: it is not shown again.") {
		t.Fatalf("the new token's dialog shows %q and the token %q", text, token)
	}
	if code := whoami(token); code != http.StatusOK {
		t.Fatalf("the new token is answered %d", code)
	}
	checkAccessibility(t, ctx, "/tokens with a new token's dialog open")
	clickNow(t, ctx, "#confirm-ok")
	var row string
	run(t, ctx,
		chromedp.WaitVisible(`//tr[td[1][.="robot"]]//button[@data-revoke]`, chromedp.BySearch),
		chromedp.Text(`//tr[td[1][.="robot"]]`, &row, chromedp.BySearch),
	)
	for _, want := range []string{"operator", "demo_*, group:nightly", "active", "ada"} {
		if !strings.Contains(row, want) {
			t.Errorf("the new token's row %q does not say %q", row, want)
		}
	}
	clickNow(t, ctx, `button[data-revoke][data-name="robot"]`)
	run(t, ctx, chromedp.WaitVisible("#confirm[open]", chromedp.ByQuery))
	clickNow(t, ctx, "#confirm-ok")
	run(t, ctx, chromedp.WaitVisible(`//tr[td[1][.="robot"]][td[5][.="revoked"]]`, chromedp.BySearch))
	var mine string
	run(t, ctx, chromedp.Text(`//tr[td[1][starts-with(., "ada")]]/td[1]`, &mine, chromedp.BySearch))
	if mine != "ada (yours: revoking it signs you out)" {
		t.Errorf("the row of the token signed in says %q", mine)
	}
	if code := whoami(token); code != http.StatusUnauthorized {
		t.Errorf("the revoked token is answered %d", code)
	}

	// A viewer is refused the page and not shown it.
	viewer := browser(t)
	d.signIn(t, viewer, d.viewer)
	var nav string
	run(t, viewer,
		chromedp.Text(`nav[aria-label="Sections"]`, &nav, chromedp.ByQuery),
		chromedp.Navigate(d.url+"/tokens"),
		chromedp.Text("main", &text, chromedp.ByQuery),
	)
	if strings.Contains(nav, "Tokens") || !strings.Contains(text, "tokens:manage") {
		t.Errorf("a viewer's navigation: %q; its /tokens: %q", nav, text)
	}
}
