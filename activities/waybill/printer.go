// Package waybill prints waybills to PDF: internal/waybill's HTML, in a tab
// of one shared headless Chromium.
package waybill

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Printer prints HTML to PDF with one headless Chromium, started on first
// use and shared by every render (a tab each).
type Printer struct {
	// ExecPath is the Chromium binary ("chromium" on the PATH when empty).
	ExecPath string

	mu      sync.Mutex
	browser context.Context
	cancel  []context.CancelFunc
}

func (p *Printer) start() (context.Context, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.browser != nil && p.browser.Err() == nil {
		return p.browser, nil
	}
	exec := p.ExecPath
	if exec == "" {
		exec = "chromium"
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exec), chromedp.Flag("headless", true), chromedp.DisableGPU)
	if !CanSandbox(os.Geteuid(), os.ReadFile) {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Run(browser); err != nil {
		cancelBrowser()
		cancelAlloc()
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	p.browser, p.cancel = browser, []context.CancelFunc{cancelBrowser, cancelAlloc}
	return browser, nil
}

// CanSandbox reports whether Chromium's sandbox can run for a process of
// euid on this kernel (read reads /proc): Chromium refuses to sandbox a
// root process, and its namespace sandbox needs unprivileged user
// namespaces, which a kernel can turn off (max_user_namespaces 0, Debian's
// unprivileged_userns_clone 0, Ubuntu's AppArmor restriction). Where it
// cannot, the printer runs Chromium with --no-sandbox.
func CanSandbox(euid int, read func(name string) ([]byte, error)) bool {
	if euid == 0 {
		return false
	}
	setting := func(name, off string) bool { // an absent file is no restriction
		b, err := read(name)
		return err == nil && strings.TrimSpace(string(b)) == off
	}
	return !setting("/proc/sys/user/max_user_namespaces", "0") &&
		!setting("/proc/sys/kernel/unprivileged_userns_clone", "0") &&
		!setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1")
}

// PDF prints html (its own CSS page size) to a PDF. The tab runs no script
// of the page and fetches nothing: every request but a data: URL is
// refused, so a waybill whose text names a URL cannot make the printer
// call it (issue 48).
func (p *Printer) PDF(ctx context.Context, html []byte) ([]byte, error) {
	browser, err := p.start()
	if err != nil {
		return nil, err
	}
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	chromedp.ListenTarget(tab, func(ev any) {
		paused, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() { // a listener must not block on the browser
			c := cdp.WithExecutor(tab, chromedp.FromContext(tab).Target)
			if strings.HasPrefix(paused.Request.URL, "data:") {
				_ = fetch.ContinueRequest(paused.RequestID).Do(c)
				return
			}
			_ = fetch.FailRequest(paused.RequestID, network.ErrorReasonBlockedByClient).Do(c)
		}()
	})
	var pdf []byte
	err = chromedp.Run(tab,
		chromedp.Navigate("about:blank"),
		emulation.SetScriptExecutionDisabled(true),
		fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*"}}),
		chromedp.ActionFunc(func(ctx context.Context) error {
			tree, err := page.GetFrameTree().Do(ctx)
			if err != nil {
				return err
			}
			return page.SetDocumentContent(tree.Frame.ID, string(html)).Do(ctx)
		}),
		// The barcode images and the fonts, loaded before printing. Asked
		// from here until they are: with the page's scripts off, Chromium
		// calls no JavaScript event handler, so a promise waiting on an
		// image's load event would never settle when the image was still
		// decoding (a busy machine), and the print would wait out its
		// deadline. A refused image counts as complete (broken).
		chromedp.ActionFunc(waitForImagesAndFonts),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			pdf, _, err = page.PrintToPDF().WithPreferCSSPageSize(true).WithPrintBackground(true).Do(ctx)
			return err
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("print waybill: %w", err)
	}
	return pdf, nil
}

// waitForImagesAndFonts asks the tab every 10 ms whether its fonts and
// images are loaded, until they are or ctx ends.
func waitForImagesAndFonts(ctx context.Context) error {
	const loaded = `document.fonts.status === "loaded" && Array.from(document.images).every(i => i.complete)`
	for {
		var ready bool
		if err := chromedp.Evaluate(loaded, &ready).Do(ctx); err != nil {
			return err
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Close stops the browser.
func (p *Printer) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.cancel {
		c()
	}
	p.browser, p.cancel = nil, nil
}
